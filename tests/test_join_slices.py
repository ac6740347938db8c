"""A maintained join's push is bounded by time, not only by its input: once a port's cost per
row is known, a chunk is pushed in slices of about ``JOIN_SLICE_S`` (a fake clock here: 1 ms
a row), and the answer is unchanged.  Sabotage seen red: pushing whole chunks (1,024 rows)."""
from __future__ import annotations

import compute.render.dataflow as D
import compute.render.join as J
import mzlite


def test_a_fanning_out_join_is_pushed_in_slices(monkeypatch):
    clock = [0.0]
    monkeypatch.setattr(D, "_perf_counter", lambda: clock[0])
    sizes = []
    real = J.JoinOp.push

    def push(self, port, chunk, t):
        if type(self) is J.JoinOp:
            sizes.append(len(chunk))
            clock[0] += 0.001 * len(chunk)
        return real(self, port, chunk, t)
    monkeypatch.setattr(J.JoinOp, "push", push)
    con = mzlite.connect()
    con.execute("CREATE TABLE s AS SELECT g AS a, g % 10 AS b FROM generate_series(1, 3000) g")
    con.execute("CREATE MATERIALIZED VIEW m AS SELECT x.b, count(*) AS n FROM s x JOIN s y ON x.b = y.b GROUP BY x.b")
    assert sorted(con.execute("SELECT b, n FROM m").fetchall()) == [(b, 300 * 300) for b in range(10)]
    con.execute("INSERT INTO s SELECT g, g % 10 FROM generate_series(3001, 5000) g")
    assert sorted(con.execute("SELECT b, n FROM m").fetchall()) == [(b, 500 * 500) for b in range(10)]
    assert sizes and max(sizes[2:]) <= 2  # after each port's first push
    con.close()
