"""The child of the crash loop (tests/test_crash_loop.py): numbered write transactions
against a data directory, each acknowledgement reported on stdout, until it is killed.

``python -m tests.support.crash_child DIR START INTERACTIVE`` opens (or creates) the durable
database in DIR, creates the schema when it is new, prints ``ready``, then for n = START,
START+1, ... prints ``begin n``, runs transaction n and prints ``ack n`` once it returned
(flushed each time, so the parent knows exactly what was acknowledged).  Transaction n, by
``n % 5``: 0 an INSERT of two rows ``(n, 0), (n, 1)`` into ``log``; 1 the same rows in a
multi-statement transaction (BEGIN, two INSERTs, COMMIT); 2 the same rows by COPY FROM
STDIN; 3 an UPDATE adding 10 to the parts of ``n - 3``'s rows; 4 a DELETE of ``n - 3``'s rows.
"""
from __future__ import annotations

import sys

import mzlite

SCHEMA = [
    "CREATE TABLE log (n int NOT NULL, part int NOT NULL)",
    "CREATE MATERIALIZED VIEW summary AS SELECT n % 10 AS k, count(*) AS c, sum(part) AS s FROM log GROUP BY 1",
    "CREATE VIEW updated AS SELECT n, part FROM log WHERE part >= 10",
    "CREATE INDEX updated_n ON updated (n)",
    "CREATE INDEX log_n ON log (n)",
]


def transaction(con, cur, n: int) -> None:
    kind = n % 5
    if kind == 0:
        cur.execute("INSERT INTO log VALUES (?, 0), (?, 1)", (n, n))
    elif kind == 1:
        cur.execute("BEGIN")
        cur.execute("INSERT INTO log VALUES (?, 0)", (n,))
        cur.execute("INSERT INTO log VALUES (?, 1)", (n,))
        cur.execute("COMMIT")
    elif kind == 2:
        with cur.copy("COPY log FROM STDIN") as copy:
            copy.write(f"{n}\t0\n{n}\t1\n".encode())
    elif kind == 3:
        cur.execute("UPDATE log SET part = part + 10 WHERE n = ?", (n - 3,))
    else:
        cur.execute("DELETE FROM log WHERE n = ?", (n - 3,))


def main() -> None:
    path, start, interactive = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
    con = mzlite.connect(path, system_parameters={"enable_compute_interactive_runtime": interactive})
    cur = con.cursor()
    names = {r[0] for r in cur.execute("SHOW TABLES").fetchall()}
    if "log" not in names:
        for sql in SCHEMA:
            cur.execute(sql)
    print("ready", flush=True)
    n = start
    while True:
        print(f"begin {n}", flush=True)
        transaction(con, cur, n)
        print(f"ack {n}", flush=True)
        n += 1


if __name__ == "__main__":
    main()
