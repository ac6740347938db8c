"""The function and type registries: assembled in one place each, paired family by family,
free of import circles, and independent of import order.

``expr.functions``, ``sql.functions`` and ``sql.types`` each assemble their families' plain
tables once (a duplicate raises); family ``X`` of ``sql.functions`` (and ``sql.types``) names
the func ids that family ``X`` of ``expr.functions`` implements; literal parsing reads the
same ``repr`` parsers whether or not the planner was ever imported.
"""
from __future__ import annotations

import ast
import graphlib
import json
from pathlib import Path
import subprocess
import sys
import types

import pytest

from expr import functions as EF
from expr.functions.common import FuncImpl
from sql import functions as SF, types as ST

ROOT = Path(__file__).resolve().parent.parent
#: the packages whose modules are registries or families of one
PACKAGES = ("expr/functions", "sql/functions", "sql/types")

#: func ids implemented without any SQL-side name, each with the reason
UNNAMED = {
    "raise_cardinality": "the guard decorrelation puts on a scalar subquery (planner.decorrelate): "
                         "If(count > 1, raise_cardinality(), value); no SQL spells it",
}


# ---------------------------------------------------------------------------- pairing

def _implemented(name: str) -> set[str]:
    fam = EF.FAMILIES[name]
    return set(fam.FUNCTIONS) | set(getattr(fam, "DERIVED", {}))


def _synthesized(name: str, fid: str) -> bool:
    return any(r(fid, EF.FUNCTIONS) is not None for r in getattr(EF.FAMILIES[name], "RESOLVERS", ()))


def test_families_pair_module_for_module():
    """The same family names on both sides, and the same modules in the three packages
    (``sql.types`` has no module for the families without a type of their own)."""
    assert set(SF.FAMILIES) == set(EF.FAMILIES)
    mods = {p: {f.stem for f in (ROOT / p).glob("*.py")} - {"__init__", "common"} for p in PACKAGES}
    assert mods["expr/functions"] == mods["sql/functions"] == set(EF.FAMILIES) | {"aggregates"}
    assert mods["sql/types"] == set(ST.FAMILIES) | {"arrays", "lists", "maps"}
    assert mods["sql/types"] <= mods["sql/functions"]


def test_every_named_func_id_is_implemented_in_its_family():
    """Every func id family X's signatures, special forms, ``FUNC_IDS`` and casts name is in
    ``expr.functions`` family X (its table, ``DERIVED`` or ``RESOLVERS``) or is a generic one
    (the comparisons and tests every type shares).
    Sabotage: deleting ``_add("md5", md5)`` from expr/functions/text.py -> red ("text: md5");
    moving ``cast_float4_to_numeric`` from expr/functions/numeric.py into floats.py -> red
    (numeric names it, floats implements it) (both seen red)."""
    generic = _implemented("generic")
    missing = []
    for name in SF.FAMILIES:
        own = _implemented(name)
        for fid in sorted(SF.family_func_ids(name)):
            if fid not in own and fid not in generic and not _synthesized(name, fid):
                missing.append(f"{name}: {fid}")
    assert not missing, "func ids named on the sql side without an implementation in the same family:\n" + \
        "\n".join(missing)


def test_every_implementation_has_a_name_in_its_family():
    """No implementation lacks a SQL-side name in the same family (``generic``'s may be named
    by any family); the exceptions are ``UNNAMED``, each with its reason.
    Sabotage: adding ``_add("sign_int4", ...)`` to expr/functions/integer.py -> red (seen red)."""
    named = {name: SF.family_func_ids(name) for name in SF.FAMILIES}
    everywhere = set().union(*named.values())
    orphans = []
    for name in EF.FAMILIES:
        pool = everywhere if name == "generic" else named[name]
        orphans += [f"{name}: {fid}" for fid in sorted(_implemented(name) - pool - set(UNNAMED))]
    assert not orphans, "implementations no SQL-side table of their family names:\n" + "\n".join(orphans)
    assert all(fid in _implemented("generic") and fid not in everywhere for fid in UNNAMED)


def test_every_literal_input_is_the_run_time_cast():
    """``sql.types.parse_literal`` and ``cast_text_to_<type>`` of every type with a literal
    input function agree, values and errors, on samples of every type's syntax.
    Sabotage: sql.types.floats' PARSERS giving parse_float8 for float4 -> red on "1e400" (the
    message names double precision) (seen red)."""
    samples = ["0", " 12 ", "-3", "1.5", "1e400", "0.1", "nan", "-Infinity", "t", "off", "x", "", "2020-01-02",
               "2020-01-02 03:04:05", "2020-01-02 03:04:05+02", "10:00:01.5", "1 day 02:00", "infinity",
               '{"a": [1, 2.50]}', "[1,2", "\\x0a0B", "a\\\\b", "\\xzz", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
               "{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}", "a0ee-bc99", "18446744073709551615", "3.4e38", "abc "]

    def outcome(fn, s):
        try:
            return ("ok", repr(fn(s)))
        except Exception as e:  # noqa: BLE001  (EvalError or DataError: compared by code and message)
            return ("err", getattr(e, "sqlstate", None), getattr(e, "message", str(e)))
    assert set(ST.PARSERS) >= {"bool", "int4", "numeric", "float4", "date", "interval", "jsonb", "bytea", "uuid"}
    for t in ST.PARSERS:
        run = EF.FUNCTIONS[f"cast_text_to_{t}"].fn
        for s in samples:
            assert outcome(lambda x: ST.parse_literal(x, t), s) == outcome(run, s), (t, s)


# ----------------------------------------------------------------------- assembly

def test_expr_assembly_refuses_a_func_id_defined_twice():
    """Sabotage: dropping the owner check from ``expr.functions.assemble`` -> the first case
    passes silently (seen red)."""
    one = FuncImpl(lambda a: a)
    a = types.SimpleNamespace(FUNCTIONS={"f": one})
    b = types.SimpleNamespace(FUNCTIONS={"f": FuncImpl(lambda a: a)})
    with pytest.raises(AssertionError, match="f is defined by both a and b"):
        EF.assemble({"a": a, "b": b})
    c = types.SimpleNamespace(FUNCTIONS={}, DERIVED={"f": lambda functions: one})
    with pytest.raises(AssertionError, match="f is defined by both a and c"):
        EF.assemble({"a": a, "c": c})
    d = types.SimpleNamespace(FUNCTIONS={"g": FuncImpl(lambda a: a, inline="h({0})", env={"h": abs})})
    e = types.SimpleNamespace(FUNCTIONS={"k": FuncImpl(lambda a: a, inline="h({0})", env={"h": round})})
    with pytest.raises(AssertionError, match="env name h"):
        EF.assemble({"d": d, "e": e})
    assert set(EF.assemble({"a": a, "d": d})) == {"f", "g"}


def test_sql_assembly_refuses_a_declaration_made_twice(monkeypatch):
    """A second family declaring a type or a signature another one declares raises.
    Sabotage: ``_merged_sigs`` appending without the params check -> red (seen red)."""
    twice = types.SimpleNamespace(TYPES={"bool": ("boolean", "B", True)})
    monkeypatch.setattr(ST, "FAMILIES", {**ST.FAMILIES, "twice": twice})
    with pytest.raises(AssertionError, match="TYPES 'bool' declared twice"):
        ST._merged("TYPES")
    again = {"abs": SF.integer.FUNCTIONS["abs"][:1]}
    with pytest.raises(AssertionError, match=r"abs\('int2',\) declared twice"):
        SF._merged_sigs([SF.integer.FUNCTIONS, again])


def test_the_real_registries_are_consistent():
    """The assembled tables are what a fresh assembly of the families gives."""
    fresh = EF.assemble(EF.FAMILIES)
    assert set(fresh) <= set(EF.FUNCTIONS) and set(dict.keys(EF.FUNCTIONS)) - set(fresh) == {
        f for f in dict.keys(EF.FUNCTIONS) if any(_synthesized(n, f) for n in EF.FAMILIES)}
    assert ST.NUMERIC_TYPES == ("int2", "int4", "int8", "numeric", "float4", "float8")


# ------------------------------------------------------------------ import structure

def _modules():
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).glob("*.py")):
            base = pkg.replace("/", ".")
            yield (base if path.stem == "__init__" else f"{base}.{path.stem}"), path


def _imports(module: str, tree):
    """``(target module, imported names)`` for every import in the tree."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield a.name, ()
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield node.module, tuple(a.name for a in node.names)


def _graph():
    mods = dict(_modules())
    edges: dict[str, set[str]] = {m: set() for m in mods}
    private = []
    for mod, path in mods.items():
        tree = ast.parse(path.read_text())
        aliases = {}
        for target, names in _imports(mod, tree):
            for n in names:
                sub = f"{target}.{n}"
                if sub in mods:  # `from sql.types import arrays`: the module itself
                    edges[mod].add(sub)
                    aliases[n] = sub
                elif target in mods:
                    edges[mod].add(target)
                    if n.startswith("_") and target != mod:
                        private.append(f"{path.relative_to(ROOT)}: from {target} import {n}")
            if not names and target in mods:
                edges[mod].add(target)
        for node in ast.walk(tree):  # `F._CMP` through a module alias
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
                    node.value.id in aliases and node.attr.startswith("_"):
                private.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value.id}.{node.attr}")
        edges[mod].discard(mod)
    return edges, private


def test_no_import_circle_between_registry_modules():
    """Among expr.functions, sql.functions and sql.types' modules (each package's assembler
    included) the imports form no circle, and the ``common`` modules import no family.
    Sabotage: ``from sql.functions import resolve_operator`` in sql/functions/text.py -> red
    (sql.functions -> sql.functions.text -> sql.functions) (seen red)."""
    edges, _ = _graph()
    cycle = None
    try:
        tuple(graphlib.TopologicalSorter(edges).static_order())
    except graphlib.CycleError as e:
        cycle = e.args[1]
    assert cycle is None, "import circle: " + " -> ".join(reversed(cycle))
    for pkg in PACKAGES:
        base = pkg.replace("/", ".")
        assert not {m for m in edges[f"{base}.common"] if m.startswith(base)}, f"{base}.common imports a family"


def test_no_family_reaches_into_another_modules_private_names():
    """Sabotage: ``from expr.functions.numeric import _n_guard`` in expr/functions/datetime.py
    -> red (seen red)."""
    _, private = _graph()
    assert not private, "private names used across registry modules:\n" + "\n".join(private)


# -------------------------------------------------------------------- import order

_PROBE = """
import json, sys
from sql.types import parse_literal
out = {t: repr(parse_literal(s, t)) for t, s in (("date", "2020-01-02"), ("interval", "1 day 02:00"),
                                                  ("jsonb", '{"b": 1, "a": [true]}'), ("float4", "0.1"),
                                                  ("timestamptz", "2020-01-02 03:04:05+02"))}
out["loaded"] = sorted({m.split(".")[0] for m in sys.modules} & {"planner", "compute", "mzlite", "storage"})
print(json.dumps(out))
"""


def test_parse_literal_does_not_depend_on_import_order():
    """A process that imports only ``sql.types`` parses date, interval and jsonb literals as
    one that has imported the planner does (no import installs a parser).
    Sabotage: deleting ``**_DATE_PARSERS`` from sql/types/datetime.py's PARSERS and installing
    them from planner/bind_expr.py at import -> the probe gets 42846 for date (seen red)."""
    import planner.bind_expr  # noqa: F401  (whatever the planner would install, it is in now)
    r = subprocess.run([sys.executable, "-c", _PROBE], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    alone = json.loads(r.stdout)
    assert alone.pop("loaded") == []
    here = {t: repr(ST.parse_literal(s, t)) for t, s in (("date", "2020-01-02"), ("interval", "1 day 02:00"),
                                                         ("jsonb", '{"b": 1, "a": [true]}'), ("float4", "0.1"),
                                                         ("timestamptz", "2020-01-02 03:04:05+02"))}
    assert alone == here
