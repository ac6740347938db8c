"""The harness of the operator reference tests (``tests/test_operators_*.py``).

``run_reference_check`` renders one plan into a ``Dataflow`` over storage collections,
feeds random +1/-1 updates spread over several timestamps, and after every time
compares the exported index (oks and errs) with ``tests.support.reference`` evaluated from
scratch over the inputs at that time.  Deterministic: seeded ``random.Random``.  The
harness's own test (it must notice a wrong answer) is ``tests/test_operators_harness.py``.
"""
from __future__ import annotations

from decimal import Decimal
import math
import random

from compute.dataflow import BuildDesc, DataflowDescription, IndexExport, SourceImport
from compute.render import dataflow as render
from compute.render.dataflow import Dataflow
from expr.scalar import Column
from repr.ids import user
from storage.persist import StorageCollection
from tests.support.reference import evaluate_with_errors

BUILD = user(900)
INDEX = user(901)


def approx_equal(a, b) -> bool:
    """Rows equal, floats (and decimals from float-ish aggregates) within tolerance."""
    if isinstance(a, dict):
        return a == b or _dict_approx(a, b)
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(approx_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, (float, Decimal)) and isinstance(b, (float, Decimal)):
        return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-9)
    return a == b


def _dict_approx(a: dict, b: dict) -> bool:
    if len(a) != len(b):
        return False
    rest = list(b.items())
    for row, c in sorted(a.items(), key=repr):
        for i, (r2, c2) in enumerate(rest):
            if c == c2 and approx_equal(row, r2):
                del rest[i]
                break
        else:
            return False
    return True


def make_dataflow(plan, arities: dict, *, as_of=0, key=None, initial=None, times_before=0):
    """Storage collections for ``arities`` (gid -> arity), optionally pre-filled with
    ``initial`` (gid -> [(row, diff)]) at time 0, then a dataflow at ``as_of``."""
    colls = {gid: StorageCollection(gid, a) for gid, a in arities.items()}
    for gid, c in colls.items():
        c.append(list((initial or {}).get(gid, ())), 0, 1)
        for t in range(1, times_before + 1):
            c.append([], t, t + 1)
    key = tuple(Column(i) for i in range(plan.arity())) if key is None else key
    desc = DataflowDescription(
        tuple(SourceImport(g, a) for g, a in arities.items()), (),
        (BuildDesc(BUILD, plan),), (IndexExport(INDEX, BUILD, key, plan.arity()),), (),
        as_of=as_of)
    return colls, Dataflow(desc, sources=colls)


def random_updates(rng: random.Random, live: dict, gen_row, n: int, delete_p=0.4):
    """``n`` updates keeping ``live`` (row -> count) non-negative."""
    ups = []
    for _ in range(n):
        if live and rng.random() < delete_p:
            row = rng.choice(sorted(live, key=repr))
            ups.append((row, -1))
            live[row] -= 1
            if not live[row]:
                del live[row]
        else:
            row = gen_row(rng)
            ups.append((row, 1))
            live[row] = live.get(row, 0) + 1
    return ups


def run_reference_check(plan, gens: dict, *, seed=0, times=6, per_time=12, chunk=3,
                        fuel=5, negative_ok=False, check_errs=True, temporal=False):
    """``gens``: gid -> (arity, row generator).  Returns the number of checked times."""
    rng = random.Random(seed)
    old_chunk = render.CHUNK
    render.CHUNK = chunk
    try:
        arities = {g: a for g, (a, _) in gens.items()}
        live = {g: {} for g in gens}
        initial = {g: random_updates(rng, live[g], gen, per_time) for g, (_, gen) in gens.items()}
        colls, df = make_dataflow(plan, arities, as_of=0, initial=initial)
        exp = df.exports[INDEX]
        for t in range(times):
            if t > 0:
                for g, (_, gen) in gens.items():
                    ups = random_updates(rng, live[g], gen, rng.randint(0, per_time),
                                         delete_p=0.5 if not negative_ok else 0.6)
                    colls[g].append(ups, t, t + 1)
            while df.step(fuel):
                pass
            assert df.frontier() == t + 1
            inputs = {g: c.snapshot(t) for g, c in colls.items()}
            want_oks, want_errs = evaluate_with_errors(plan, inputs, t if temporal else None)
            got_oks = exp.oks.snapshot(t)
            got_errs = exp.errs.snapshot(t)
            assert approx_equal(got_oks, want_oks), f"time {t}: oks\n got {got_oks}\nwant {want_oks}"
            if check_errs:
                assert got_errs == want_errs, f"time {t}: errs\n got {got_errs}\nwant {want_errs}"
        return times
    finally:
        render.CHUNK = old_chunk


def small_int(rng, lo=0, hi=4, null_p=0.15):
    return None if rng.random() < null_p else rng.randint(lo, hi)
