"""The adapter (``mzlite/``) never reaches into another object's privates.

Every ``<expr>._name`` in ``mzlite/`` (an attribute read, a call or an assignment) has
``self`` or ``cls`` as ``<expr>``; a private of another object (``writer._apply``,
``db._statement_lock``, ``sub._fail``) is either given a public method with a docstring
or moved to the object that owns the state.  Importing another module's private name
(``from mzlite.types import _EXACT``) and ``getattr(other, "_name")`` count the same.
Dunder names are not private.  The allowlist names the few privates of the standard
library the adapter uses, each with its reason.

Sabotage seen red: putting back ``db._subscriptions`` in ``Subscription._end`` and
``db.writer._apply`` in ``sequencer.modify_fast`` each failed ``test_no_private_access``.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "mzlite"

#: (module, private name) -> why an object that is not ``self`` may be reached this way
ALLOWED = {
    ("coordinator", "_release_save"): "threading.RLock's protocol for releasing a reentrant lock fully, "
                                       "as threading.Condition uses it; there is no public equivalent",
    ("coordinator", "_acquire_restore"): "the other half of RLock's _release_save protocol",
    ("subscribe", "_replace"): "NamedTuple's public method (the underscore only keeps it apart from field names)",
    ("remote_cursor", "_fmod"): "psycopg's Column keeps the column's type modifier (PostgreSQL's atttypmod, which "
                                "Materialize's and mzlite's descriptions are sized from) only as _fmod; its "
                                "public precision/scale/display_size decode it for a few types only",
}


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _is_self(node) -> bool:
    return isinstance(node, ast.Name) and node.id in ("self", "cls")


def violations(source: str, module: str) -> list[str]:
    """Every reach into another object's (or module's) private in ``source``."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and _private(node.attr) and not _is_self(node.value):
            name = node.attr
        elif isinstance(node, ast.ImportFrom) and any(_private(a.name) for a in node.names):
            name = next(a.name for a in node.names if _private(a.name))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "setattr") \
                and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) \
                and isinstance(node.args[1].value, str) and _private(node.args[1].value) \
                and not _is_self(node.args[0]):
            name = node.args[1].value
        else:
            continue
        if (module, name) not in ALLOWED:
            out.append((node.lineno, f"mzlite/{module}.py:{node.lineno}: {ast.unparse(node)[:80]}"))
    return [text for _line, text in sorted(out)]


def test_no_private_access():
    found = []
    for path in sorted(ROOT.glob("*.py")):
        found += violations(path.read_text(), path.stem)
    assert not found, "reaches into another object's privates:\n" + "\n".join(found)


def test_the_check_sees_each_form():
    """The walker finds a private read, call, import and getattr on another object, and lets
    ``self``/``cls`` and dunders through."""
    src = ("def f(self, db, writer):\n"
           "    writer._apply(1)\n"
           "    x = db._plans\n"
           "    from mzlite.types import _EXACT\n"
           "    getattr(db, '_closed')\n"
           "    self._ok = cls._fine = db.__dict__\n")
    found = violations(src, "m")
    assert [f.split(": ", 1)[1] for f in found] == \
        ["writer._apply", "db._plans", "from mzlite.types import _EXACT", "getattr(db, '_closed')"]
    assert all(m in {"coordinator", "subscribe", "remote_cursor"} for m, _n in ALLOWED)
