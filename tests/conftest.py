"""The shared fixtures of the test suite.

Owns the connections tests open: ``connect`` (a factory; what it opens is closed at
teardown), ``interactive`` (the ``enable_compute_interactive_runtime`` setting, on then off),
``con`` and ``cur`` (a connection, a cursor, under each setting), ``clocked_con`` (the same
with a ``ManualClock`` as ``con.clock``, starting at ``clock_start``).  A module that needs
a schema, another clock start, another scope or a single setting overrides the fixture of
the same name (pytest hands an override the shared one when it asks for it by name) and
says why.  The default per-test timeout lives in pyproject.toml (``[tool.pytest.ini_options]``
``timeout``, thread method: a hang prints every thread's stack and ends the run).
Deliberately not here: helpers and stand-ins that tests import (``tests/support/``).
"""
from __future__ import annotations

from typing import Callable, Optional

import pytest

import mzlite
from mzlite.oracle import ManualClock

BOTH_SETTINGS = dict(params=[True, False], ids=["interactive", "maintenance-only"])


def pytest_generate_tests(metafunc):
    """A module with ``API_TARGETS`` runs its tests once per target (``api_target``)."""
    targets = getattr(metafunc.module, "API_TARGETS", None)
    if targets and "api_target" in metafunc.fixturenames:
        metafunc.parametrize("api_target", targets, indirect=True)


@pytest.fixture
def api_target(request) -> str:
    """Where ``connect`` connects: ``embedded`` unless the module lists ``API_TARGETS``
    (``tests/support/remote_targets.py``: ``remote`` is an ``mzlite serve``, ``postgres``
    PostgreSQL 15)."""
    return getattr(request, "param", "embedded")


@pytest.fixture(scope="session")
def postgres_spec():
    """``host:port`` of a PostgreSQL 15 for the session's ``postgres`` target (None: none)."""
    from tests.support.remote_targets import postgres_instance
    with postgres_instance() as spec:
        yield spec


@pytest.fixture
def connect(request, api_target):
    """``connect(interactive=None, clock=None) -> Connection``, closed at teardown;
    ``interactive`` None keeps the default setting; a ``clock`` is also ``con.clock``.
    On a remote ``api_target`` it connects to that test's server (a ``clock`` is refused)."""
    opened = []
    target = None
    if api_target != "embedded":
        from tests.support.remote_targets import target_for
        target = target_for(request, api_target)

    def open_connection(interactive: Optional[bool] = None, clock: Optional[Callable[[], int]] = None):
        if target is not None:
            if clock is not None:
                pytest.skip("a clock= is the embedded engine's")
            c = target.connect(interactive)
            opened.append(c)
            return c
        params = {} if interactive is None else {"enable_compute_interactive_runtime": interactive}
        c = mzlite.connect(system_parameters=params, clock=clock)
        if clock is not None:
            c.clock = clock
        opened.append(c)
        return c
    yield open_connection
    for c in reversed(opened):
        c.close()
    if target is not None:
        target.close()


@pytest.fixture(**BOTH_SETTINGS)
def interactive(request) -> bool:
    """``enable_compute_interactive_runtime``: each test runs with it on, then off."""
    return request.param


@pytest.fixture
def con(connect, interactive):
    """A connection under each interactive-runtime setting."""
    return connect(interactive)


@pytest.fixture
def cur(con):
    """A cursor of ``con``."""
    return con.cursor()


@pytest.fixture
def clock_start() -> int:
    """Where ``clocked_con``'s clock starts (ms); a module overrides it for another start."""
    return 1_000


@pytest.fixture
def clocked_con(connect, interactive, clock_start):
    """A connection under each setting whose time is ``con.clock``, a ``ManualClock``."""
    return connect(interactive, clock=ManualClock(clock_start))


@pytest.fixture(autouse=True, scope="session")
def _ctrl_c_as_from_a_terminal():
    """Tests run as if pytest were started from a terminal: SIGINT raises KeyboardInterrupt.

    A runner that starts pytest as an asynchronous command without job control (``cmd &`` in a
    script) hands it SIGINT ignored; the in-process Ctrl-C tests (``_thread.interrupt_main``) and
    the children the pty tests spawn would then never see Ctrl-C.  The shell's own answer to
    that start is tested in test_repl_shell (SIGINT ignored on purpose there)."""
    import signal

    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        yield
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    else:
        yield


@pytest.fixture(autouse=True)
def _signal_state_is_left_as_found():
    """Every test leaves the process's SIGINT handling as it found it.

    The shell's Ctrl-C tests install and rely on the default handler; a test (or code under test)
    that swaps the handler, blocks SIGINT in the main thread or leaves a wakeup fd set breaks them
    far away, in whichever test runs later. This fixture restores the state and fails the test
    that changed it, so the leak is named where it happens.
    """
    import signal

    handler = signal.getsignal(signal.SIGINT)
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, [])
    yield
    changed = []
    if signal.getsignal(signal.SIGINT) is not handler:
        changed.append(f"SIGINT handler {signal.getsignal(signal.SIGINT)!r} (was {handler!r})")
        signal.signal(signal.SIGINT, handler)
    if signal.pthread_sigmask(signal.SIG_BLOCK, []) != mask:
        changed.append("the main thread's signal mask")
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    wakeup = signal.set_wakeup_fd(-1)
    if wakeup != -1:
        changed.append(f"a signal wakeup fd ({wakeup})")
    if changed:
        pytest.fail("the test left " + " and ".join(changed) + " changed", pytrace=False)
