"""``python -m bench.stores``: the embedded stores a data directory could sit on, compared.

Owns the measurement behind ``storage.durable``'s choice (docs/PERFORMANCE.md, "Durable
storage"): stdlib ``sqlite3`` in WAL mode (synchronous=FULL) against LMDB (the ``lmdb``
package, sync on) on the commit path the store has: a one-batch commit made durable
(k=1), a 10,000-row batch, a 1M-row load as one batch, and reopening and reading it all
back; rows packed once as ``storage.codec`` packs them (the same bytes for both).  Prints medians.
Deliberately not here: mzlite itself (``bench.load`` measures the database).
"""
from __future__ import annotations

import os
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time

now = time.perf_counter


def _sqlite(path, batches):
    db = sqlite3.connect(os.path.join(path, "s.sqlite"), isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.execute("CREATE TABLE batches (seq INTEGER PRIMARY KEY, shard TEXT, time INTEGER, data BLOB)")
    out = {}
    for name, data, reps in batches:
        samples = []
        for i in range(reps):
            t = now()
            db.execute("BEGIN IMMEDIATE")
            db.execute("INSERT INTO batches (shard, time, data) VALUES (?, ?, ?)", ("u1", i, data))
            db.execute("COMMIT")
            samples.append(now() - t)
        out[name] = statistics.median(samples)
    db.close()
    t = now()
    db = sqlite3.connect(os.path.join(path, "s.sqlite"))
    n = sum(len(d) for (d,) in db.execute("SELECT data FROM batches"))
    out["reopen + read all"] = now() - t
    db.close()
    return out, n


def _lmdb(path, batches):
    import lmdb
    env = lmdb.open(os.path.join(path, "l.lmdb"), map_size=8 << 30, sync=True, metasync=True)
    out = {}
    seq = 0
    for name, data, reps in batches:
        samples = []
        for i in range(reps):
            seq += 1
            t = now()
            with env.begin(write=True) as txn:
                txn.put(seq.to_bytes(8, "big"), data)
            samples.append(now() - t)
        out[name] = statistics.median(samples)
    env.close()
    t = now()
    env = lmdb.open(os.path.join(path, "l.lmdb"), map_size=8 << 30, readonly=True)
    with env.begin() as txn:
        n = sum(len(v) for _k, v in txn.cursor())
    out["reopen + read all"] = now() - t
    env.close()
    return out, n


def main() -> int:
    import msgpack

    def encode(rows):  # as storage.codec packs a batch: column by column
        return msgpack.packb([4, [1] * len(rows), *map(list, zip(*rows))])
    one = encode([(1, 2, 3, "note 1")])
    tenk = encode([(i, i % 100, i * 3, f"note {i % 97}") for i in range(10_000)])
    million = encode([(i, i % 100, i * 3, f"note {i % 97}") for i in range(1_000_000)])
    batches = [("k=1 commit", one, 200), ("10,000-row batch", tenk, 20), ("1M-row load", million, 3)]
    tmp = tempfile.mkdtemp(prefix="mzlite-stores-")
    try:
        results = {"sqlite3 (WAL, FULL)": _sqlite(tmp, batches)[0]}
        try:
            results["lmdb (sync)"] = _lmdb(tmp, batches)[0]
        except ImportError:
            print("lmdb is not installed (pip install lmdb): only sqlite3 measured", file=sys.stderr)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    names = [b[0] for b in batches] + ["reopen + read all"]
    print(f"{'':22s}" + "".join(f"{k:>22s}" for k in results))
    for n in names:
        print(f"{n:22s}" + "".join(f"{r[n] * 1000:19.2f} ms" for r in results.values()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
