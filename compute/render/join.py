"""Join: binary and multiway delta joins over in-memory arrangements.

Owns ``JoinOp``.  For every input ``i`` a *delta path* joins a chunk of ``Δi`` with the
current state of the other inputs one at a time, each step a lookup by the key that
connects it to the prefix joined so far; then ``Δi`` is added to ``i``'s arrangements.
Processing chunks one after another this way computes the exact change of the join
(multilinearity: ``Δ(A⋈B) = ΔA⋈B + A'⋈ΔB`` with ``A' = A + ΔA``), in any chunk order.

Arrangements are ``key -> {row: count}`` dicts, one per (input, key) the paths need.
**Reuse**: an input that is a ``Get`` of an imported index whose key matches the join
key (the render passes such imports in ``arranged``) is not copied: its arrangement is
read through the import handle, lazily, and a per-key cache plus an overlay of the
current time's deltas keep it equal to "the import at the time being processed".  Its
hydration chunks are ignored (the import already holds them) and the render may skip
reading them (``ignores_hydration``).  The handle is read at the time being processed,
which its since never passes (the render refuses imports compacted past its read
frontier).  A ``project`` (a Project right above the Join) is fused in: output rows are
built already projected, in one ``itemgetter`` over the path-order row.

Equivalences use datum equality (NULL = NULL) as in MIR; classes not fully enforced by
the lookups of a path are checked on its output rows.  An input-local key expression that
raises ``EvalError`` turns the delta row into one error row and keeps the row out of
the join (the reference evaluator counts such errors per joined combination instead: a
known deviation; Materialize, too, reports key errors per input row).

Deliberately not here: choosing join order across the whole plan (the planner),
arrangement sharing across dataflows (the registry).
"""
from __future__ import annotations

from operator import itemgetter
from typing import Any, Optional, Sequence

from compute.render.operator import EMPTY, Operator, key_function
from expr.scalar import Column, ScalarExpr, columns_referenced, permute
from repr.errors import EvalError

__all__ = ["JoinOp"]


class _LocalArrangement:
    __slots__ = ("input", "key_exprs", "key_fn", "data", "key_col", "get", "raw")

    def __init__(self, input: int, key_exprs: tuple, key_fn):
        self.input = input
        self.key_exprs = key_exprs
        self.key_fn = key_fn
        #: the column index when the key is one column (the hot loops inline it)
        self.key_col = key_exprs[0].index if len(key_exprs) == 1 and isinstance(key_exprs[0], Column) else None
        #: a one-column key is stored as the value itself, not a 1-tuple: no tuple built and
        #: hashed per row (hydrating a join over a million rows: -25% in its hot loops).
        #: Every probe of this arrangement follows (``_step``, ``_fused_step``, ``_raw_probe``).
        self.raw = self.key_col is not None
        #: key -> {row: count}, consolidated (no zero counts, no empty dicts)
        self.data: dict = {}
        self.get = self.data.get


def _raw_probe(key_fn):
    """``key_fn`` (a 1-tuple key) as the raw value a ``raw`` arrangement is keyed by."""
    return lambda row: key_fn(row)[0]


class _ImportedArrangement:
    """An imported index read in place.

    At time ``t`` the join needs "the import before ``t``, plus the deltas of ``t``
    processed so far".  The handle is read at ``t`` itself (its since may be ``t``, never
    more: the dataflow's read frontier) and the full delta of ``t`` on this input, given
    by the render up front (``begin_time``), is subtracted; processed deltas of keys not
    yet cached wait in ``overlay``.  Looked-up keys stay cached and are maintained by
    the deltas, like a local arrangement that is filled lazily.
    """

    __slots__ = ("input", "key_exprs", "key_fn", "handle", "cache", "overlay", "pending",
                 "read_time")

    def __init__(self, input: int, key_exprs: tuple, key_fn, handle):
        self.input = input
        self.key_exprs = key_exprs
        self.key_fn = key_fn
        self.handle = handle
        #: key -> {row: count}: the state before this time plus this time's applied deltas
        self.cache: dict = {}
        #: key -> {row: count}: this time's applied deltas for keys not in the cache
        self.overlay: dict = {}
        #: key -> {row: count}: the whole delta of the current time on this input
        self.pending: dict = {}
        #: the time being processed (the handle is read there)
        self.read_time: Optional[int] = None

    def get(self, key):
        m = self.cache.get(key)
        if m is not None:
            return m
        m = self.handle.lookup(key, self.read_time)
        for src, sign in ((self.pending.get(key), -1), (self.overlay.pop(key, None), 1)):
            if src:
                for r, c in src.items():
                    n = m.get(r, 0) + sign * c
                    if n:
                        m[r] = n
                    else:
                        del m[r]
        self.cache[key] = m
        return m


def _getter(idx):
    idx = list(idx)
    if not idx:
        return lambda r: ()
    if len(idx) == 1:
        i = idx[0]
        return lambda r: (r[i],)
    return itemgetter(*idx)


def _support(expr, offsets, arities) -> frozenset:
    cols = columns_referenced(expr)
    out = set()
    for c in cols:
        for i, (o, a) in enumerate(zip(offsets, arities)):
            if o <= c < o + a:
                out.add(i)
                break
    return frozenset(out)


def _step(rows, key_fn, col, get, fin, raw: bool = False) -> list:
    """One lookup step of a delta path (the hot loop: one variant per shape).  ``raw``: the
    arrangement is keyed by the column's value itself (``_LocalArrangement.raw``)."""
    new: list = []
    append = new.append
    if col is not None and raw:
        for prow, d in rows:
            m = get(prow[col])
            if m:
                for r2, c in m.items():
                    append((prow + r2 if fin is None else fin(prow + r2), d * c))
    elif col is not None:
        if fin is None:
            for prow, d in rows:
                m = get((prow[col],))
                if m:
                    for r2, c in m.items():
                        append((prow + r2, d * c))
        else:
            for prow, d in rows:
                m = get((prow[col],))
                if m:
                    for r2, c in m.items():
                        append((fin(prow + r2), d * c))
    elif fin is None:
        for prow, d in rows:
            m = get(key_fn(prow))
            if m:
                for r2, c in m.items():
                    append((prow + r2, d * c))
    else:
        for prow, d in rows:
            m = get(key_fn(prow))
            if m:
                for r2, c in m.items():
                    append((fin(prow + r2), d * c))
    return new


def _fused_step(col: int, out_idx, prefix_arity: int, raw: bool = False):
    """The last lookup step with the output projection fused in: generated code that reads
    each output column from the prefix row or the matched row, with no concatenated row
    and no getter call per match (one compiled function per shape, cached).  ``raw``: as
    for ``_step``."""
    from expr.compile import compile_source
    cols = "".join(f"prow[{i}], " if i < prefix_arity else f"r2[{i - prefix_arity}], " for i in out_idx)
    probe = f"prow[{col}]" if raw else f"(prow[{col}],)"
    src = (f"def _fused(rows, get):\n"
           f"    new = []\n"
           f"    append = new.append\n"
           f"    for prow, d in rows:\n"
           f"        m = get({probe})\n"
           f"        if m:\n"
           f"            for r2, c in m.items():\n"
           f"                append((({cols}), d * c if c != 1 else d))\n"
           f"    return new\n")
    return compile_source(f"join_step:{col}:{tuple(out_idx)}:{prefix_arity}:{raw}", src, "_fused")


def _fused_reduce_step(col: int, out_idx, prefix_arity: int, raw: bool, spec):
    """``_fused_step``'s loop with each output row added to a count/sum reduce's group in
    place (``compute.render.reduce.group_update_body`` over the output columns) instead
    of appended to a list; ``None`` if the reduce has another kind of aggregate."""
    from compute.render.reduce import group_update_body
    from expr.compile import compile_source
    cols = [f"prow[{i}]" if i < prefix_arity else f"r2[{i - prefix_arity}]" for i in out_idx]
    body = group_update_body(spec, cols)
    if body is None:
        return None
    probe = f"prow[{col}]" if raw else f"(prow[{col}],)"
    src = "\n".join(["def _fused_reduce(rows, get, groups, touched):",
                     "    gget = groups.get",
                     "    add = touched.add",
                     "    for prow, d0 in rows:",
                     f"        m = get({probe})",
                     "        if m:",
                     "            for r2, c in m.items():",
                     "                d = d0 * c if c != 1 else d0"]
                    + ["                " + line for line in body]) + "\n"
    return compile_source("join_reduce:" + src, src, "_fused_reduce")


def _step_checked(rows, key_fn, get, fin, errs) -> list:
    """``_step`` for a chunk in which some prefix key raised: per-row error handling."""
    new: list = []
    for prow, d in rows:
        try:
            k = key_fn(prow)
        except EvalError as e:
            errs.append(((e.sqlstate, e.message), d))
            continue
        m = get(k)
        if m:
            for r2, c in m.items():
                row = prow + r2
                new.append((fin(row) if fin is not None else row, d * c))
    return new


class JoinOp(Operator):
    def __init__(self, arities: Sequence[int], equivalences: Sequence[Sequence[ScalarExpr]], *,
                 arranged: Optional[dict] = None, as_of: Optional[int] = None,
                 project: Optional[Sequence[int]] = None):
        """``arranged``: input index -> list of ``(key_exprs, handle)`` of imported indexes
        on that input's collection (key expressions over the input's own columns).
        ``project``: output columns to keep (a projection fused into the join, applied
        while the output rows are built)."""
        self.project = None if project is None else tuple(project)
        self.arities = tuple(arities)
        self.n_inputs = n = len(arities)
        self.as_of = as_of
        offsets = []
        o = 0
        for a in arities:
            offsets.append(o)
            o += a
        self.offsets = offsets
        classes = [tuple(c) for c in equivalences]
        supports = [[_support(e, offsets, arities) for e in c] for c in classes]
        self._arrangements: dict = {}  # (input, key_exprs) -> arrangement
        self._by_input: list[list] = [[] for _ in range(n)]
        arranged = dict(arranged or {})
        # inputs whose every use can read an imported arrangement
        self.reused: dict[int, Any] = {}
        #: port -> ``(col, out_idx, prefix_arity, raw)`` of its path's fused last step
        self._fused_shapes: dict[int, tuple] = {}
        #: the reduce this join feeds from its lookup loops (``fuse_reduce``), and per port
        #: the generated loop that does it
        self.reduce_into = None
        self._reduce_steps: dict[int, Any] = {}
        self.paths = []
        plans = [self._plan_path(i, classes, supports, arranged) for i in range(n)]
        # decide reuse: an input is reused only if all steps into it use the same import key
        use_keys: dict[int, set] = {}
        for plan in plans:
            for j, key_local, imp in plan["steps"]:
                use_keys.setdefault(j, set()).add((key_local, imp is not None))
        for j, uses in use_keys.items():
            if len(uses) == 1 and next(iter(uses))[1]:
                key_local = next(iter(uses))[0]
                handle = next(h for k, h in arranged[j] if tuple(k) == key_local)
                self.reused[j] = _ImportedArrangement(j, key_local, key_function(key_local), handle)
        for i, plan in enumerate(plans):
            self.paths.append(self._build_path(i, plan, classes))
        self.needs_flush = bool(self.reused)
        #: when every input is a reused import, one of them (the first) still pushes its
        #: hydration through its path: its lookups read the others' full state at as_of,
        #: which is the whole join; were all hydrations ignored, nothing would ever be
        #: produced for as_of (select4.test's joins of two indexed columns came out empty)
        self._hydrating_port = min(self.reused) if len(self.reused) == n else None
        # per input: its fallible single-input expressions, evaluated once per delta row so
        # a bad row yields one error and enters neither the paths nor the arrangements
        self._checks = []
        for i in range(n):
            local = []
            for cls, sup in zip(classes, supports):
                for e, s_ in zip(cls, sup):
                    if s_ == frozenset((i,)) and not isinstance(e, Column):
                        local.append(permute(e, self._to_local(i)))
            self._checks.append(key_function(tuple(local)) if local else None)
        self._local_key_fns = [[(arr, arr.key_fn) for arr in self._by_input[i]] for i in range(n)]

    # ------------------------------------------------------------ planning
    def _plan_path(self, i, classes, supports, arranged) -> dict:
        n = self.n_inputs
        prefix = {i}
        order = [i]
        steps = []
        enforced = []  # (class index, expr index a, expr index b) asserted equal by lookups
        while len(order) < n:
            best = None
            for j in range(n):
                if j in prefix:
                    continue
                conn = []
                for ci, (cls, sup) in enumerate(zip(classes, supports)):
                    local = [k for k, s in enumerate(sup) if s == frozenset((j,))]
                    pre = [k for k, s in enumerate(sup) if s <= prefix]
                    if local and pre:
                        conn.append((ci, local[0], pre[0]))
                imp = None
                for key_exprs, _handle in arranged.get(j, ()):
                    picked = self._match_key(j, key_exprs, classes, supports, prefix)
                    # an import serves the step only when its key is the whole join key (every
                    # class connecting j to the prefix): one keyed by part of it would make the
                    # lookup return every row sharing that part, the rest checked afterwards
                    if picked and len(picked) == len({ci for ci, _l, _p in conn}):
                        imp = (tuple(key_exprs), picked)
                        break
                score = (imp is not None, len(conn), -j)
                if best is None or score > best[0]:
                    best = (score, j, conn, imp)
            _, j, conn, imp = best
            if imp is not None:
                key_local, used = imp
            else:
                used = conn
                key_local = tuple(permute(classes[ci][k], self._to_local(j)) for ci, k, _p in used)
            enforced.extend(used)
            steps.append((j, key_local, imp, [(ci, p) for ci, _k, p in used]))
            prefix.add(j)
            order.append(j)
        return {"order": order, "steps": [(j, k, imp) for j, k, imp, _ in steps],
                "step_prefix": [sp for *_, sp in steps], "enforced": enforced}

    def _match_key(self, j, key_exprs, classes, supports, prefix):
        """``[(class, expr index, prefix expr index)]`` matching ``key_exprs`` (over input
        ``j``'s columns) in order, each in a distinct class connected to ``prefix``; or None."""
        canon = self._to_canonical(j)
        local_sup = frozenset((j,))
        picked = []
        for e in key_exprs:
            w = permute(e, canon)
            hit = None
            for ci, (cls, sup) in enumerate(zip(classes, supports)):
                if any(x[0] == ci for x in picked):
                    continue
                k = next((k for k, (x, s) in enumerate(zip(cls, sup)) if x == w and s == local_sup), None)
                p = next((p for p, s in enumerate(sup) if s <= prefix), None)
                if k is not None and p is not None:
                    hit = (ci, k, p)
                    break
            if hit is None:
                return None
            picked.append(hit)
        return picked or None

    def _to_local(self, j) -> dict:
        o = self.offsets[j]
        return {o + c: c for c in range(self.arities[j])}

    def _to_canonical(self, j) -> dict:
        o = self.offsets[j]
        return {c: o + c for c in range(self.arities[j])}

    def _arrangement(self, j, key_local):
        if j in self.reused and self.reused[j].key_exprs == key_local:
            return self.reused[j]
        k = (j, key_local)
        arr = self._arrangements.get(k)
        if arr is None:
            arr = self._arrangements[k] = _LocalArrangement(j, key_local, key_function(key_local))
            self._by_input[j].append(arr)
        return arr

    def _build_path(self, i, plan, classes):
        order = plan["order"]
        # canonical column -> position in the path row
        pos = {}
        p = 0
        for j in order:
            for c in range(self.arities[j]):
                pos[self.offsets[j] + c] = p
                p += 1
        steps = []
        for (j, key_local, imp), sp in zip(plan["steps"], plan["step_prefix"]):
            arr = self._arrangement(j, key_local)
            prefix_exprs = tuple(permute(classes[ci][pk], pos) for ci, pk in sp)
            col = prefix_exprs[0].index if (len(prefix_exprs) == 1 and isinstance(prefix_exprs[0], Column)) else None
            key_fn = key_function(prefix_exprs)
            steps.append((_raw_probe(key_fn) if getattr(arr, "raw", False) else key_fn, col, arr))
        # residual: classes whose expressions are not all connected by enforced equalities
        residual = []
        for ci, cls in enumerate(classes):
            if len(cls) < 2:
                continue
            parent = list(range(len(cls)))

            def find(x):
                while parent[x] != x:
                    x = parent[x]
                return x
            for cj, a, b in plan["enforced"]:
                if cj == ci:
                    parent[find(a)] = find(b)
            if len({find(k) for k in range(len(cls))}) > 1:
                residual.append(key_function(tuple(permute(e, pos) for e in cls)))
        # the output row, read off the path-order row: canonical order, then (when there is
        # no residual check to run on the canonical row first) the closure's projection
        canonical = [pos[c] for c in range(sum(self.arities))]
        out_idx = canonical if self.project is None else [canonical[c] for c in self.project]
        final = None if out_idx == list(range(len(canonical))) else _getter(out_idx)
        if final is not None and not residual and steps and steps[-1][1] is not None:
            # the last lookup builds the output row straight from the two halves
            prefix_arity = sum(self.arities[j] for j in order[:-1])
            shape = (steps[-1][1], tuple(out_idx), prefix_arity, getattr(steps[-1][2], "raw", False))
            steps[-1] = steps[-1] + (_fused_step(*shape),)
            self._fused_shapes[i] = shape
        return steps, residual, final

    def fuse_reduce(self, reduce_op) -> bool:
        """Feed ``reduce_op`` (this join's only consumer, a count/sum ``ReduceOp`` with
        ``direct_spec``) from the lookup loops themselves: each match updates its group, with
        no output row, pair or list in between (the dataflow marks the reduce for flushing
        after each push).  Paths without a fused last step keep emitting rows.  Whether any
        path was fused."""
        spec = getattr(reduce_op, "direct_spec", None)
        if spec is None or not self._fused_shapes:
            return False
        steps = {port: _fused_reduce_step(*shape, spec) for port, shape in self._fused_shapes.items()}
        if any(f is None for f in steps.values()):
            return False
        self._reduce_steps = steps
        self.reduce_into = reduce_op
        return True

    # ------------------------------------------------------------ execution
    def reuses(self, port: int) -> bool:
        """Input ``port`` is read through its imported arrangement (``begin_time`` wanted)."""
        return port in self.reused

    def ignores_hydration(self, port: int) -> bool:
        return port in self.reused and port != self._hydrating_port

    def push(self, port: int, chunk: list, time: int):
        errs: list = []
        hydrating = time == self.as_of
        for arr in self.reused.values():
            arr.read_time = time
        check = self._checks[port]
        if check is not None:
            try:
                for row, _d in chunk:
                    check(row)
            except EvalError:
                kept = []
                for row, d in chunk:
                    try:
                        check(row)
                        kept.append((row, d))
                    except EvalError as e:
                        errs.append(((e.sqlstate, e.message), d))
                chunk = kept
        if hydrating and port in self.reused:
            # the imported arrangement already holds this; its other local keys must too
            out = self._delta(port, chunk, errs) if port == self._hydrating_port else EMPTY
            self._apply(port, chunk, errs, skip_reused=True)
            return out, (errs or EMPTY)
        out = self._delta(port, chunk, errs)
        self._apply(port, chunk, errs, skip_reused=False)
        return out, (errs or EMPTY)

    def _delta(self, port: int, chunk: list, errs: list) -> list:
        """``Δport`` joined with the other inputs' current state, in canonical column order
        (then projected).  ``final`` (reorder + projection) is fused into the last lookup
        step unless residual checks must see the path-order row first."""
        steps, residual, final = self.paths[port]
        rows = chunk
        last = len(steps) - 1
        fused = final if not residual else None
        for si, (key_fn, col, arr, *fused_step) in enumerate(steps):
            fin = fused if si == last else None
            if fin is not None and fused_step:
                into = self._reduce_steps.get(port)
                if into is not None:  # straight into the reduce's groups (``fuse_reduce``)
                    r = self.reduce_into
                    into(rows, arr.get, r.groups, r.touched)
                    return []
                new = fused_step[0](rows, arr.get)  # a column key: nothing can raise
            else:
                try:
                    new = _step(rows, key_fn, col, arr.get, fin, getattr(arr, "raw", False))
                except EvalError:
                    new = _step_checked(rows, key_fn, arr.get, fin, errs)
            rows = new
            if not rows:
                return []
        if residual or not steps:
            for check in residual:
                kept = []
                for row, d in rows:
                    try:
                        vals = check(row)
                    except EvalError as e:
                        errs.append(((e.sqlstate, e.message), d))
                        continue
                    v0 = vals[0]
                    if all(v == v0 and (v is None) == (v0 is None) for v in vals):
                        kept.append((row, d))
                rows = kept
            if final is not None:
                rows = [(final(r), d) for r, d in rows]
        return rows

    def _apply(self, port: int, chunk: list, errs: list, skip_reused: bool) -> None:
        for arr, key_fn in self._local_key_fns[port]:
            data = arr.data
            col = arr.key_col
            if col is not None:  # a raw arrangement (``_LocalArrangement.raw``)
                get = data.get
                for row, d in chunk:
                    k = row[col]
                    m = get(k)
                    if m is None:
                        data[k] = {row: d}
                        continue
                    n = m.get(row, 0) + d
                    if n:
                        m[row] = n
                    else:
                        del m[row]
                        if not m:
                            del data[k]
                continue
            for row, d in chunk:
                try:
                    k = key_fn(row)
                except EvalError as e:
                    errs.append(((e.sqlstate, e.message), d))
                    continue
                m = data.get(k)
                if m is None:
                    data[k] = {row: d}
                    continue
                n = m.get(row, 0) + d
                if n:
                    m[row] = n
                else:
                    del m[row]
                    if not m:
                        del data[k]
        imp = self.reused.get(port)
        if imp is None or skip_reused:
            return
        cache = imp.cache
        overlay = imp.overlay
        key_fn = imp.key_fn
        for row, d in chunk:
            try:
                k = key_fn(row)
            except EvalError as e:
                errs.append(((e.sqlstate, e.message), d))
                continue
            m = cache.get(k)
            if m is None:
                m = overlay.get(k)
                if m is None:
                    overlay[k] = {row: d}
                    continue
            n = m.get(row, 0) + d
            if n:
                m[row] = n
            else:
                del m[row]

    def begin_time(self, port: int, time: int, chunks) -> None:
        """The render hands over the whole delta of ``time`` on a reused input before any
        of it is pushed (see ``_ImportedArrangement``)."""
        imp = self.reused.get(port)
        if imp is None:
            return
        imp.read_time = time
        pending = imp.pending
        key_fn = imp.key_fn
        for chunk in chunks:
            for row, d in chunk:
                try:
                    k = key_fn(row)
                except EvalError:
                    continue  # the row never enters the arrangement; its error is reported on push
                m = pending.get(k)
                if m is None:
                    pending[k] = {row: d}
                else:
                    m[row] = m.get(row, 0) + d

    def flush(self, time: int, budget=None):
        for imp in self.reused.values():
            imp.overlay.clear()
            imp.pending.clear()
            if len(imp.cache) > 200_000:
                imp.cache.clear()
        return EMPTY, EMPTY
