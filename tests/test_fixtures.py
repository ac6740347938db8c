"""The shared fixtures of ``tests/conftest.py`` and the suite's default per-test timeout.

Sabotages seen red (each restored): ``con`` ignoring ``interactive`` (always the default
setting) -> ``test_con_has_the_setting_it_is_parametrized_with[maintenance-only]``;
``connect`` not closing what it opened -> ``test_what_connect_opened_is_closed_at_teardown``;
``clocked_con`` passing no clock -> ``test_clocked_con_runs_on_its_manual_clock``; dropping
``timeout`` from pyproject.toml -> ``test_a_default_timeout_is_in_effect``.  The timeout
itself was seen to work once by hand: a test blocked on ``threading.Event().wait()`` ended
the run after the timeout with every thread's stack printed, exit status 1.
"""
from __future__ import annotations

import pytest

from mzlite.oracle import ManualClock

#: the connections ``test_connect_opens_connections`` opened, for the test after it
_OPENED: list = []


def test_con_has_the_setting_it_is_parametrized_with(con, interactive):
    shown = con.execute("SHOW enable_compute_interactive_runtime").fetchall()[0][0]
    assert shown == ("on" if interactive else "off")


def test_connect_opens_connections(connect):
    _OPENED.extend([connect(), connect(interactive=False)])
    assert not any(c.closed for c in _OPENED)


def test_what_connect_opened_is_closed_at_teardown():
    if not _OPENED:
        pytest.skip("checks what the test before it opened")
    assert all(c.closed for c in _OPENED)


def test_clocked_con_runs_on_its_manual_clock(clocked_con, clock_start):
    assert isinstance(clocked_con.clock, ManualClock) and clocked_con.clock() == clock_start
    assert clocked_con.database.oracle.clock is clocked_con.clock


def test_a_default_timeout_is_in_effect(request):
    """A hang fails the run (pytest-timeout) instead of blocking it."""
    assert request.config.pluginmanager.hasplugin("timeout")
    assert float(request.config.getini("timeout")) == 300
    assert request.config.getini("timeout_method") == "thread"
