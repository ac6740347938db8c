"""Sanity of the test stand-ins (``tests.support.standins``): the stand-in dataflow passes
its input through time by time, and the real spine it exports refuses reads below since."""
from __future__ import annotations

import pytest

from compute.arrangement.spine import Spine
from storage.persist import SinceError
from tests.support.standins import StandinDataflow, index_desc, table, u


def test_standin_spine_compacts_and_refuses_below_since():
    """The stand-in dataflow's exports are real spines: compaction and the refusal of a
    read below since are theirs."""
    s = Spine(lambda r: (r[0],), 2)
    s.insert_updates([((1, "a"), 0, 1)], 2)
    s.insert_updates([((1, "a"), 3, -1)], 4)
    assert s.snapshot(2) == {(1, "a"): 1}
    s.set_logical_compaction(3)
    s.set_physical_compaction(3)
    s.maintain()
    assert s.snapshot(3) == {}
    s.compact_fully()
    assert s.batches == ()  # +1 and -1 advanced to since 3 and consolidated away
    with pytest.raises(SinceError):
        s.snapshot(2)  # a read below since must be refused


def test_standin_dataflow_passes_input_through_time_by_time():
    src = table(u(1), [(1, "a"), (2, "b")], 0, 1)
    df = StandinDataflow(index_desc(u(1), u(2)), sources={u(1): src}, indexes={}, sinks={})
    assert df.step()
    assert df.exports[u(2)].oks.snapshot(0) == {(1, "a"): 1, (2, "b"): 1}
    src.append([((3, "c"), 1)], 1, 2)
    src.append([((1, "a"), -1)], 2, 3)
    assert df.step(fuel=1) and df.frontier() == 2
    assert df.exports[u(2)].oks.snapshot(1) == {(1, "a"): 1, (2, "b"): 1, (3, "c"): 1}
    assert df.step(fuel=1) and df.frontier() == 3
    assert df.exports[u(2)].oks.snapshot(2) == {(2, "b"): 1, (3, "c"): 1}
    assert not df.step()
