"""The shell's pager (``repl.pager``): the paging rule, the command choice, and a pty session
(stand-in connection) with ``$PAGER`` set to a marker-adding filter."""
import io
import os
import sys

import pytest

from repl import format as fmt
from repl import pager
from repl.main import Runner
from tests.support.repl_standin import StandInConnection

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_should_page_only_tall_output_to_a_terminal_when_enabled():
    """Sabotage: ``should_page`` ignoring ``to_terminal`` -> the not-a-terminal case pages."""
    tall = "x\n" * 30
    assert pager.should_page(tall, enabled=True, to_terminal=True, screen_rows=24)
    assert not pager.should_page("x\n" * 5, enabled=True, to_terminal=True, screen_rows=24)
    assert not pager.should_page(tall, enabled=False, to_terminal=True, screen_rows=24)
    assert not pager.should_page(tall, enabled=True, to_terminal=False, screen_rows=24)
    assert not pager.should_page(tall, enabled=True, to_terminal=True, screen_rows=None)


def test_pager_command_respects_pager_variable():
    assert pager.pager_command({"PAGER": "more"}, lambda _: "/usr/bin/less") == "more"
    assert pager.pager_command({"PAGER": ""}, lambda _: "/usr/bin/less") is None
    assert pager.pager_command({}, lambda _: "/usr/bin/less") == "less -FRSX"
    assert pager.pager_command({}, lambda _: None) is None


def test_page_runs_the_command_with_the_text(tmp_path):
    target = tmp_path / "paged.txt"
    assert pager.page("a\nb\n", f"cat > {target}")
    assert target.read_text() == "a\nb\n"
    assert not pager.page("a\n", None)


def test_batch_runner_never_pages():
    out = io.StringIO()
    r = Runner(StandInConnection(), fmt.Settings(), out, io.StringIO())
    assert r.pager is None
    assert r.run_statement("select 1 as a")
    assert out.getvalue() == " a \n---\n 1\n(1 row)\n\n"


def test_pset_pager_toggles():
    out = io.StringIO()
    r = Runner(StandInConnection(), fmt.Settings(), out, io.StringIO())
    r.run_meta("\\pset pager off")
    assert not r.settings.pager
    r.run_meta("\\pset pager on")
    assert r.settings.pager
    assert out.getvalue() == "Pager usage is off.\nPager usage is on.\n"


STANDIN_SHELL = """
import sys
sys.path.insert(0, %r)
from repl import shell, format as fmt
from tests.support.repl_standin import StandInConnection
sys.exit(shell.run(StandInConnection, fmt.Settings(), history=False))
""" % ROOT

TALL = "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 50) SELECT n FROM c;\r"


def test_pty_tall_result_goes_through_pager_until_pset_pager_off(tmp_path):
    """Sabotage: not installing ``runner.pager`` in the shell -> no PAGED: marker."""
    pexpect = pytest.importorskip("pexpect")
    env = dict(os.environ, MZLITE_HISTORY=str(tmp_path / "hist"), TERM="xterm", PROMPT_TOOLKIT_NO_CPR="1",
               PAGER="sed 's/^/PAGED:/'")
    child = pexpect.spawn(sys.executable, ["-c", STANDIN_SHELL], cwd=ROOT, env=env, encoding="utf-8",
                          timeout=20, dimensions=(20, 120))
    child.expect_exact("mzlite=>")
    child.send("select 1 as small;\r")  # fits the screen: not paged
    child.expect_exact("\n(1 row)")
    child.expect_exact("mzlite=>")
    child.send(TALL)
    child.expect_exact("PAGED:(50 rows)")
    child.expect_exact("mzlite=>")
    child.send("\\pset pager off\r")
    child.expect_exact("Pager usage is off.")
    child.expect_exact("mzlite=>")
    child.send(TALL)
    child.expect_exact("\n(50 rows)")
    child.expect_exact("mzlite=>")
    child.send("\\q\r")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
