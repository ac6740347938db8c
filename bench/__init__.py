"""mzlite's benchmarks: ``python -m bench`` from a checkout (not an installed package).

Owns the workloads that measure mzlite against peers run in the same invocation (DuckDB
and sqlite3; mzlite joins as soon as ``mzlite.connect().execute('select 1')`` works):
``bench.freshness`` (how fast a change shows up in an indexed read) and ``bench.isolation``
(read latency while another session hydrates heavy views, interactive runtime on and off).
Invariant: every figure is printed next to the peers' figures from the same run, as a ratio
(peer / mzlite, >1 means mzlite is faster), and every answer is checked, so a fast wrong
answer never shows as a win.  Deliberately not here: pass/fail thresholds (targets are
reported, never asserted) and anything the engine itself needs.
"""
