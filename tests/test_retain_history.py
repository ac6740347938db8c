"""RETAIN HISTORY: an item's collections compact behind its own window, not the default
``compaction_window_ms``, and its value survives a reopen.

- a table's storage since stays behind its RETAIN HISTORY window while a table without one
  compacts to its upper (sabotage: the ticker's compaction reading only
  ``compaction_window_ms``, not ``Database.retain_history_ms``, failed
  ``test_a_table_keeps_the_history_it_retains``);
- an index's compute collection likewise (sabotage: ``ComputeController._maybe_compact``
  reading only ``self.compaction_window`` failed ``test_an_index_keeps_the_history_it_retains``);
- ALTER ... RESET outranks the CREATE text on reopen (sabotage: not restoring the persisted
  ``retain_history`` meta in ``catalog_store.replay`` failed
  ``test_retain_history_survives_a_reopen``: the table came back with CREATE's '1h').
"""
from __future__ import annotations

import mzlite
from mzlite.oracle import ManualClock


def _ts(con) -> int:
    return int(con.execute("SELECT mz_now()::text::bigint").fetchall()[0][0])


def _write_then_advance(con, tables) -> int:
    """One write to each table, then later writes: the time of the first, which a window of
    zero compacts away once the tables' uppers pass the later ones."""
    for t in tables:
        con.execute(f"INSERT INTO {t} VALUES (1)")
    first = _ts(con)
    for _ in range(3):
        for t in tables:
            con.execute(f"INSERT INTO {t} VALUES (2)")
    con.database.tick()
    return first


def test_a_table_keeps_the_history_it_retains(con):
    con.execute("ALTER SYSTEM SET compaction_window_ms = 0")
    con.execute("CREATE TABLE plain (a int)")
    con.execute("CREATE TABLE kept (a int) WITH (RETAIN HISTORY FOR '1h')")
    first = _write_then_advance(con, ["plain", "kept"])
    db = con.database
    colls = {n: db.storage.collections[db.catalog.resolve((n,)).id] for n in ("plain", "kept")}
    assert colls["plain"].since > first
    assert colls["kept"].since <= first
    assert con.execute(f"SELECT a FROM kept AS OF {first}").fetchall() == [(1,)]
    con.execute("ALTER TABLE kept RESET (RETAIN HISTORY)")
    con.execute("INSERT INTO kept VALUES (3)")
    db.tick()
    assert colls["kept"].since > first


def test_an_index_keeps_the_history_it_retains(interactive):
    clock = ManualClock(1_000_000)
    con = mzlite.connect(clock=clock, system_parameters={"compaction_window_ms": 0,
                                                          "enable_compute_interactive_runtime": interactive})
    con.execute("CREATE TABLE t (a int)")
    con.execute("CREATE INDEX plain ON t (a)")
    con.execute("CREATE INDEX kept ON t (a)")
    con.execute("ALTER INDEX kept SET (RETAIN HISTORY FOR '1h')")
    con.execute("INSERT INTO t VALUES (1)")
    first = _ts(con)
    clock.advance(10_000)
    con.execute("INSERT INTO t VALUES (2)")
    con.database.tick()
    assert con.execute("SELECT count(*) FROM t").fetchall() == [(2,)]  # the indexes have caught up
    ctl = con.database.controller
    plain, kept = (ctl.collections[con.database.catalog.resolve((n,)).id] for n in ("plain", "kept"))
    assert plain.write_frontier > first + 1 and kept.write_frontier > first + 1
    ctl._maybe_compact(plain)
    ctl._maybe_compact(kept)
    assert plain.implied_since > first
    assert kept.implied_since <= first
    con.close()


def test_retain_history_survives_a_reopen(tmp_path):
    con = mzlite.connect(str(tmp_path))
    con.execute("CREATE TABLE t (a int) WITH (RETAIN HISTORY FOR '1h')")
    con.execute("CREATE INDEX i ON t (a)")
    con.execute("CREATE MATERIALIZED VIEW mv AS SELECT a FROM t")
    con.execute("ALTER TABLE t RESET (RETAIN HISTORY)")
    con.execute("ALTER INDEX i SET (RETAIN HISTORY FOR '10m')")
    con.execute("ALTER MATERIALIZED VIEW mv SET (RETAIN HISTORY FOR '2h')")
    before = {k: con.execute(f"SHOW CREATE {k} {n}").fetchall() for k, n in
              (("TABLE", "t"), ("INDEX", "i"), ("MATERIALIZED VIEW", "mv"))}
    con.close()
    con = mzlite.connect(str(tmp_path))
    after = {k: con.execute(f"SHOW CREATE {k} {n}").fetchall() for k, n in
             (("TABLE", "t"), ("INDEX", "i"), ("MATERIALIZED VIEW", "mv"))}
    assert after == before
    assert "RETAIN HISTORY" not in after["TABLE"][0][1]
    db = con.database
    assert {db.catalog.get(g).name: ms for g, ms in db.retain_history_ms.items()} == {"i": 600000, "mv": 7200000}
    con.close()
