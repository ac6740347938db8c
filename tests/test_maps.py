"""Materialize's map values beyond SQL text: the Python value a query returns (a dict), the
row codec (a map column in a durable table survives a restart), and the value class's
invariants."""
from __future__ import annotations

import mzlite
from repr.maps import Map, make_map, map_out
from storage.codec import decode_value, encode_value


def test_make_map_sorts_keys_and_the_last_duplicate_wins():
    m = make_map([("b", 1), ("a", 2), ("b", 3)])
    assert tuple(m) == (("a", 2), ("b", 3))
    assert m == make_map([("b", 3), ("a", 2)]) and hash(m) == hash(make_map([("a", 2), ("b", 3)]))
    assert m != (("a", 2), ("b", 3))  # a map never equals a plain tuple (a record)
    assert make_map([("a", 1)]) < make_map([("a", 2)]) < make_map([("b", 0)])
    assert make_map([("a", 1)]) < make_map([("a", None)])  # a NULL value sorts last


def test_codec_round_trips_nested_maps():
    """Sabotage: drop the ``Map`` branch of ``storage.codec._default`` and encoding raises."""
    m = make_map([("outer", make_map([("x", None), ("y", 2)])), ("none", None)])
    back = decode_value(encode_value(m))
    assert back == m and type(back) is Map and type(back.get("outer")) is Map


def test_a_map_column_survives_a_restart(tmp_path):
    path = str(tmp_path / "db")
    con = mzlite.connect(path)
    con.execute("CREATE TABLE kv (id int, m map[text=>int])")
    con.execute("INSERT INTO kv VALUES (1, '{b=>2, a=>1}'), (2, NULL)")
    con.close()
    con = mzlite.connect(path)
    rows = con.execute("SELECT id, m, m::text FROM kv ORDER BY id").fetchall()
    con.close()
    assert rows == [(1, {"a": 1, "b": 2}, "{a=>1,b=>2}"), (2, None, None)]
    assert map_out(make_map(rows[0][1].items()), str) == "{a=>1,b=>2}"
