"""``mzlite slt --url``: a file's named connections (``simple conn=NAME``) through ``mzlite
serve``, each a session of its own, interleaved as the file says, with the interactive runtime
on and off."""
from __future__ import annotations

import pytest

import slt
from tests.support.wire import running_server

FILE = """\
statement ok
CREATE TABLE shared (a int)

simple conn=writer
BEGIN
----
COMPLETE 0

simple conn=writer
INSERT INTO shared VALUES (1), (2)
----
COMPLETE 2

query I
SELECT count(*) FROM shared
----
0

simple conn=reader
SELECT count(*) FROM shared
----
0
COMPLETE 1

simple conn=writer
COMMIT
----
COMPLETE 0

simple conn=reader
SELECT sum(a) FROM shared
----
3
COMPLETE 1

simple conn=reader
SET transaction_isolation = 'serializable'
----
COMPLETE 0

query T
SHOW transaction_isolation
----
strict serializable
"""


@pytest.mark.parametrize("interactive", [True, False], ids=["interactive", "maintenance-only"])
def test_named_connections_interleave_through_the_server(tmp_path, interactive):
    """Sabotage: ``PostgresEngine._connection`` handing out the default session for every name
    (the writer's BEGIN then held the default session's reads in its transaction) went red."""
    p = tmp_path / "named.slt"
    p.write_text(FILE)
    with running_server({"enable_compute_interactive_runtime": interactive}) as srv:
        url = f"postgresql://materialize@127.0.0.1:{srv.port}/materialize"
        assert slt.main(["--url", url, str(p)]) == 0
