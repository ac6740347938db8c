"""The layering: every import runs the allowed way between packages, and none closes a cycle.

The packages and what each may import (docs/INTERFACES.md draws the same picture):
``repr`` is the leaf; ``expr`` stands on it; ``sql`` on both; ``planner`` on those and the
top of ``compute`` (its protocol, ``DataflowDescription`` and errors, never a runtime);
``storage`` on ``repr`` and ``expr``; ``compute`` on ``storage``; the adapter (``mzlite``)
on all of them; ``server``, ``repl``, ``slt`` and ``bench`` on the adapter (the shell's ``mzlite slt``
command on the runner).  Test code
(``tests``) may import anything but another test module (what tests share is in
``tests/support/``); nothing else imports ``tests``.

Every import is read from the source (top level and inside functions, ``TYPE_CHECKING``
blocks included), so a lazy import cannot hide a wrong-way edge.  Sabotage seen red: adding
``from compute.replica.driver import defer_wakes`` to ``storage/tables.py`` (storage ->
compute) and ``from planner.catalog import Catalog`` inside a function of
``compute/peek.py`` (compute -> planner) each fail ``test_imports_run_the_allowed_way``;
an ``import compute.render.dataflow`` inside ``compute/replica/registry.py`` plus the
existing render -> replica edge fails ``test_no_cycles_between_packages``.
"""
from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: package -> the packages it may import (besides itself)
ALLOWED = {
    "repr": set(),
    "expr": {"repr"},
    "sql": {"repr", "expr"},
    "planner": {"repr", "expr", "sql", "compute.top"},
    "storage": {"repr", "expr"},
    "compute": {"repr", "expr", "storage"},
    "mzlite": {"repr", "expr", "sql", "planner", "storage", "compute"},
    "server": {"mzlite", "repr", "sql"},
    "repl": {"mzlite", "slt", "server"},  # the `mzlite slt` and `mzlite serve` commands
    "slt": {"mzlite"},
    "bench": {"mzlite", "slt"},
}
#: the modules of ``compute`` the planner may use: its vocabulary, never a runtime
COMPUTE_TOP = {"compute", "compute.protocol", "compute.dataflow", "compute.errors"}
OURS = set(ALLOWED) | {"tests"}


def _modules():
    """``(module name, path)`` for every Python module of ours."""
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT)
        if rel.parts[0] not in OURS or any(p.startswith(".") for p in rel.parts):
            continue
        parts = list(rel.with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        yield ".".join(parts), path


def _imports(module: str, path: Path):
    """``(candidate names, line)`` for every import in the file, wherever it stands: the first
    candidate that is a module of ours is what the import reads."""
    tree = ast.parse(path.read_text(), str(path))
    is_pkg = path.name == "__init__.py"
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield (alias.name,), node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")
                if not is_pkg:
                    base = base[:-1]
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:  # `from compute import peek` imports compute.peek
                yield (f"{target}.{alias.name}", target), node.lineno


def _resolve(name: str, known: set[str]) -> str | None:
    """The longest known module that ``name`` is or lies in (None: not ours)."""
    while name:
        if name in known:
            return name
        name = name.rpartition(".")[0]
    return None


def _edges():
    mods = dict(_modules())
    known = set(mods)
    for mod, path in mods.items():
        seen = set()
        for names, line in _imports(mod, path):
            hit = next((h for h in (_resolve(n, known) for n in names) if h is not None), None)
            if hit is not None and hit != mod and (hit, line) not in seen:
                seen.add((hit, line))
                yield mod, hit, f"{path.relative_to(ROOT)}:{line}"


def _top(module: str) -> str:
    return module.split(".")[0]


def test_imports_run_the_allowed_way():
    wrong = []
    for src, dst, where in _edges():
        a, b = _top(src), _top(dst)
        if a == b or a == "tests":
            continue
        if b == "tests":
            wrong.append(f"{where}: {src} imports test code {dst}")
        elif a == "planner" and b == "compute":
            if dst not in COMPUTE_TOP:
                wrong.append(f"{where}: planner may use only compute's top ({sorted(COMPUTE_TOP)}), not {dst}")
        elif b not in ALLOWED.get(a, set()):
            wrong.append(f"{where}: {src} -> {dst} ({a} may import {sorted(ALLOWED.get(a, ()))})")
    assert not wrong, "imports against the layering:\n" + "\n".join(wrong)


def _package(module: str, packages: set[str]) -> str:
    """The innermost package (a directory with ``__init__.py``) holding ``module``."""
    while module not in packages:
        module = module.rpartition(".")[0]
    return module


def test_no_cycles_between_packages():
    mods = dict(_modules())
    packages = {m for m, p in mods.items() if p.name == "__init__.py"}
    graph: dict[str, dict[str, str]] = defaultdict(dict)
    for src, dst, where in _edges():
        if _top(src) == "tests":
            continue
        a, b = _package(src, packages), _package(dst, packages)
        # a package's own __init__ importing its children is not a cycle with them
        if a != b and not b.startswith(a + ".") and not a.startswith(b + "."):
            graph[a].setdefault(b, where)
    cycles = []
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(n):
        state[n] = 1
        stack.append(n)
        for m in graph.get(n, {}):
            if state.get(m) == 1:
                cyc = stack[stack.index(m):] + [m]
                cycles.append(" -> ".join(f"{x} ({graph[x][y]})" for x, y in zip(cyc, cyc[1:])))
            elif m not in state:
                visit(m)
        stack.pop()
        state[n] = 2

    for n in sorted(graph):
        if n not in state:
            visit(n)
    assert not cycles, "import cycles between packages:\n" + "\n".join(cycles)


def test_repr_is_imported_by_name_never_bound():
    """``import repr.x`` would bind ``repr`` and shadow the builtin in the importing module."""
    bad = []
    for mod, path in _modules():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                bad += [f"{path.relative_to(ROOT)}:{node.lineno}" for a in node.names
                        if a.name.split(".")[0] == "repr" and a.asname is None]
    assert not bad, "use `from repr.x import y`: " + ", ".join(bad)


#: test modules other test modules still import: tests.test_runtime_support's stand-ins move to
#: tests/support/ with the read-handle rework (delete this entry then)
_SHARED_TEST_MODULES = {"tests.test_runtime_support"}


def test_test_modules_import_support_not_each_other():
    """What several test modules share lives in ``tests/support/`` (or ``tests/conftest.py``
    for fixtures); a test module imported by another would run its tests twice over and tie
    the two together.  Sabotage seen red: ``from tests.test_arrangement import key0`` in
    ``tests/test_raw_keys.py``."""
    wrong = [f"{where}: {src} imports {dst}" for src, dst, where in _edges()
             if src.startswith("tests.") and dst.startswith("tests.test_") and dst not in _SHARED_TEST_MODULES]
    assert not wrong, "import shared test code from tests.support:\n" + "\n".join(wrong)
