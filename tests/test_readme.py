"""README.md tells the truth: every Python example runs as shown (and prints what its comment
says), every shell command is run here or by the test named for it, and every statement the
"Not yet supported" table lists is refused with the SQLSTATE beside it."""
from __future__ import annotations

import io
import pathlib
import re
import sys

import pytest

import mzlite

README = (pathlib.Path(__file__).parent.parent / "README.md").read_text()

#: shell commands the README shows that run elsewhere (heavier, or needing a server): where
COVERED_ELSEWHERE = {
    "pip install": "CI's set-up",
    "mzlite ./data": "tests/test_repl_shell.py (test_pty_real_engine_session)",
    "mzlite  ": "tests/test_repl_shell.py",
    "bash .ci/run": "CI itself",
    "mzlite slt": "tests/test_slt_suites.py",
    "python -m bench": "tests/test_bench_smoke.py",
    "mzlite serve": "tests/test_server_psycopg.py",
    "psql -h": "tests/test_server_clients.py",
    "mzlite -h": "tests/test_repl_remote.py (test_pty_session_against_a_server)",
    "mzlite postgres": "tests/test_repl_remote.py",
    "mzlite dump": "tests/test_dump.py (test_round_trip_from_a_server_and_through_the_shell)",
}


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", README, re.S)


def _not_supported_rows() -> list[tuple[str, str]]:
    section = README[README.index("## Not yet supported"):]
    rows = re.findall(r"^\|[^|\n]*\| `([^`]+)` \| ([0-9A-Z]{5}) \|$", section, re.M)
    assert len(rows) > 30, "the README's table of refusals was not found"
    return rows


def test_python_examples_run_as_shown(tmp_path, monkeypatch):
    """The examples run in order in one namespace, as pasted into a Python prompt in an empty
    directory; a ``print(...)  # X`` prints X.  (The durable example created nothing to copy
    into when it was written: it used the first example's in-memory tables.)"""
    monkeypatch.chdir(tmp_path)
    opened = []
    real = mzlite.connect
    monkeypatch.setattr(mzlite, "connect", lambda *a, **k: opened.append(real(*a, **k)) or opened[-1])
    namespace: dict = {}
    try:
        for block in _blocks("python"):
            out = io.StringIO()
            monkeypatch.setattr(sys, "stdout", out)
            exec(compile(block, "README.md", "exec"), namespace)
            monkeypatch.setattr(sys, "stdout", sys.__stdout__)
            expected = [m for m in re.findall(r"^print\(.*\)\s*#\s*(.+)$", block, re.M)]
            assert out.getvalue().splitlines() == expected
    finally:
        for c in opened:
            c.close()
    assert (tmp_path / "orders.csv").read_text().splitlines() == ["id,customer_id,amount", "2,1,50", "3,1,25"]


def test_shell_examples_run_or_are_covered(tmp_path, monkeypatch, capsys):
    """``mzlite -c`` and ``mzlite -f`` run here against the engine; every other command line
    the README shows is named in ``COVERED_ELSEWHERE`` with the test that runs it."""
    import repl.main as cli
    monkeypatch.chdir(tmp_path)
    lines = [ln.split("#")[0].strip() for b in _blocks("sh") for ln in b.splitlines()]
    lines = [ln for ln in lines if ln]
    uncovered = [ln for ln in lines if not ln.startswith(("mzlite -c", "mzlite -f"))
                 and not any(ln.startswith(k.strip()) and (k != "mzlite  " or ln == "mzlite")
                             for k in COVERED_ELSEWHERE)]
    assert not uncovered, f"README shell lines no test runs: {uncovered}"
    assert 'mzlite -c "SELECT 1 + 1"' in lines and "mzlite -f script.sql" in lines
    assert cli.main(["-c", "SELECT 1 + 1"]) == 0
    assert capsys.readouterr().out == " ?column? \n----------\n        2\n(1 row)\n\n"
    (tmp_path / "script.sql").write_text("CREATE TABLE t (a int);\nINSERT INTO t VALUES (7);\nSELECT a FROM t;\n")
    assert cli.main(["-f", "script.sql"]) == 0
    assert capsys.readouterr().out.endswith(" a \n---\n 7\n(1 row)\n\n")


@pytest.fixture
def schema(con):
    con.execute("CREATE TABLE t (a int, b text)")
    con.execute("CREATE MATERIALIZED VIEW mv AS SELECT a FROM t")
    return con


def test_what_readme_says_is_refused_is_refused(schema):
    """Each row of the table: its statement fails with its SQLSTATE, and nothing is left of it
    (no object with the names the examples use).  Sabotage seen red: dropping the map check
    in ``sql.statement_names.materialize_only_form`` (the map row got 42601)."""
    wrong = []
    for sql, sqlstate in _not_supported_rows():
        try:
            schema.execute(sql)
        except mzlite.Error as e:
            if e.sqlstate != sqlstate:
                wrong.append(f"{sql}: {e.sqlstate} {e}")
        else:
            wrong.append(f"{sql}: accepted")
        if schema.in_transaction:
            schema.execute("ROLLBACK")
    assert not wrong, "\n".join(wrong)
    assert sorted(r[0] for r in schema.execute("SHOW OBJECTS").fetchall()) == ["mv", "t"]


def test_a_url_is_a_server_not_a_directory(tmp_path, monkeypatch):
    """``mzlite.connect(url)`` with no server there fails to connect (08001) and creates
    nothing.  Sabotage seen red: without the URL check in ``mzlite.connect`` it opened a data
    directory ``postgres:/materialize@127.0.0.1:1/materialize`` under the cwd."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(mzlite.OperationalError) as ei:
        mzlite.connect("postgres://materialize@127.0.0.1:1/materialize")
    assert ei.value.sqlstate == "08001"
    assert list(tmp_path.iterdir()) == []


def test_files_the_readme_names_exist():
    """Every repository path README names (``docs/DESIGN.md``, ``tests/test_layering.py``,
    ``slt/test/``) is in the repository: it once pointed at ``../shared/DESIGN.md``, outside it.
    Sabotage seen red: README naming ``../shared/DESIGN.md`` again."""
    root = pathlib.Path(__file__).parent.parent
    named = set(re.findall(r"`((?:\.\./)?(?:docs|tests|slt|bench|shared|repl|mzlite)/[\w./-]*)`", README))
    named |= set(re.findall(r"\]\(((?!https?:)[^)#]+)\)", README))
    missing = [p for p in named if not (root / p).exists() or p.startswith("..")]
    assert not missing, f"README names files that are not in the repository: {missing}"
    assert "docs/DESIGN.md" in named
