"""PostgreSQL's logical replication messages (the ``pgoutput`` plugin, protocol version 1).

Owns decoding one message's bytes (``decode``) into a small tuple: ``("B", final_lsn, xid)``,
``("C", commit_lsn, end_lsn)``, ``("R", oid, schema, name, replica_identity, ((column, type
oid, typmod), ...))``, ``("I", oid, new)``, ``("U", oid, old, new)``, ``("D", oid, old)``,
``("T", (oid, ...))``, ``("Y", ...)`` and ``("O", ...)``; a tuple's columns are ``str`` (the
text form), ``None`` (NULL) or ``UNCHANGED`` (an unchanged TOASTed value).  Invariant:
decoding never guesses -- a message it does not know, or bytes that end early, raise
``ValueError``.  Deliberately not here: turning text into engine values, transactions,
the replication slot (``storage.sources.postgres``).
"""
from __future__ import annotations

import struct

#: an unchanged TOASTed column of an UPDATE's new tuple (its value is the old tuple's)
UNCHANGED = object()


def lsn_text(lsn: int) -> str:
    """PostgreSQL's text form of an LSN (``16/B374D848``)."""
    return f"{lsn >> 32:X}/{lsn & 0xFFFFFFFF:X}"


def parse_lsn(text: str) -> int:
    hi, lo = text.split("/")
    return (int(hi, 16) << 32) | int(lo, 16)


class _Reader:
    def __init__(self, data: bytes):
        self.data, self.i = data, 0

    def take(self, n: int) -> bytes:
        if self.i + n > len(self.data):
            raise ValueError("pgoutput message ends early")
        out = self.data[self.i:self.i + n]
        self.i += n
        return out

    def u8(self) -> int:
        return self.take(1)[0]

    def i16(self) -> int:
        return struct.unpack(">h", self.take(2))[0]

    def i32(self) -> int:
        return struct.unpack(">i", self.take(4))[0]

    def u32(self) -> int:
        return struct.unpack(">I", self.take(4))[0]

    def u64(self) -> int:
        return struct.unpack(">Q", self.take(8))[0]

    def string(self) -> str:
        end = self.data.index(b"\0", self.i)
        out = self.data[self.i:end].decode("utf-8")
        self.i = end + 1
        return out

    def tuple_data(self) -> tuple:
        out = []
        for _ in range(self.i16()):
            kind = chr(self.u8())
            if kind == "n":
                out.append(None)
            elif kind == "u":
                out.append(UNCHANGED)
            elif kind in ("t", "b"):
                value = self.take(self.i32())
                if kind == "b":
                    raise ValueError("pgoutput sent a binary column value (mzlite reads the text format)")
                out.append(value.decode("utf-8"))
            else:
                raise ValueError(f"unknown pgoutput tuple kind {kind!r}")
        return tuple(out)


def decode(data: bytes) -> tuple:
    """One pgoutput message (see the module docstring)."""
    r = _Reader(bytes(data))
    tag = chr(r.u8())
    if tag == "B":
        final_lsn, _ts, xid = r.u64(), r.u64(), r.u32()
        return ("B", final_lsn, xid)
    if tag == "C":
        _flags, commit_lsn, end_lsn, _ts = r.u8(), r.u64(), r.u64(), r.u64()
        return ("C", commit_lsn, end_lsn)
    if tag == "R":
        oid, schema, name, ident = r.u32(), r.string(), r.string(), chr(r.u8())
        cols = []
        for _ in range(r.i16()):
            _flags, col, typ, mod = r.u8(), r.string(), r.u32(), r.i32()
            cols.append((col, typ, mod))
        return ("R", oid, schema, name, ident, tuple(cols))
    if tag == "I":
        oid = r.u32()
        if chr(r.u8()) != "N":
            raise ValueError("pgoutput INSERT without a new tuple")
        return ("I", oid, r.tuple_data())
    if tag == "U":
        oid = r.u32()
        kind = chr(r.u8())
        old = None
        if kind in ("K", "O"):
            if kind == "K":
                raise ValueError("pgoutput UPDATE with a key-only old tuple (the table needs REPLICA IDENTITY FULL)")
            old = r.tuple_data()
            kind = chr(r.u8())
        if kind != "N":
            raise ValueError("pgoutput UPDATE without a new tuple")
        return ("U", oid, old, r.tuple_data())
    if tag == "D":
        oid = r.u32()
        kind = chr(r.u8())
        if kind != "O":
            raise ValueError("pgoutput DELETE without the old row (the table needs REPLICA IDENTITY FULL)")
        return ("D", oid, r.tuple_data())
    if tag == "T":
        n, _options = r.i32(), r.u8()
        return ("T", tuple(r.u32() for _ in range(n)))
    if tag in ("Y", "O"):
        return (tag,)
    raise ValueError(f"unknown pgoutput message {tag!r}")
