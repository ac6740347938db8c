"""COPY's binary format on the wire: ``COPY ... TO STDOUT (FORMAT BINARY)`` and ``COPY ...
FROM STDIN (FORMAT BINARY)``.

Owns the layout PostgreSQL's COPY documentation gives for the binary file format: the
11-byte signature ``PGCOPY\\n\\377\\r\\n\\0``, an int32 flags field, an int32 header
extension length and that many bytes; per tuple an int16 field count, then per field an
int32 length (-1: NULL) and the value in its type's binary form; an int16 -1 trailer.
Values use the extended protocol's binary codecs (``server.pgtypes``), by the column's
type, so a COPY and a binary Bind or DataRow agree byte for byte.
Invariants: output is header, rows, trailer, nothing else; input is checked as PostgreSQL
checks it (signature, critical flags, field counts, a tuple cut short, data after the
trailer; a missing trailer after a whole tuple is accepted, as PostgreSQL accepts it) with
its SQLSTATEs (22P04 bad format, 22P03 a value's bytes, 08P01 too few of them), and each decoded
row goes to the adapter's ``CopyIn.write_row``, so a binary COPY FROM loads through the same
one-write INSERT path as text and CSV.
Deliberately not here: the COPY messages and their order (``server.session``), COPY's
options (``mzlite.copy.CopyFormat``), WITH OIDS (PostgreSQL 12 removed it; refused).
"""
from __future__ import annotations

import struct

from server import pgtypes
from sql.errors import Error, error_for

SIGNATURE = b"PGCOPY\n\xff\r\n\x00"
HEADER = SIGNATURE + struct.pack("!ii", 0, 0)
TRAILER = struct.pack("!h", -1)
_I16 = struct.Struct("!h")
_I32 = struct.Struct("!i")
_NULL = _I32.pack(-1)


def row_encoder(types):
    """``encode(row) -> bytes``: one tuple of the binary format for columns of ``types``."""
    encs = [pgtypes.encoder(t, 1) for t in types]
    count = _I16.pack(len(encs))

    def encode(row) -> bytes:
        parts = [count]
        for v, e in zip(row, encs):
            if v is None:
                parts.append(_NULL)
            else:
                b = e(v)
                parts.append(_I32.pack(len(b)) + b)
        return b"".join(parts)
    return encode


def _bad(message: str):
    return error_for("22P04", message)


class BinaryCopyIn:
    """Parses a binary COPY FROM's bytes as they arrive (``feed``) into rows of Python
    values for ``CopyIn.write_row``; ``finish`` checks the data ended with its trailer."""

    def __init__(self, types):
        self.types = list(types)
        self.buf = bytearray()
        self.pos = 0
        self.header_done = False
        self.ended = False

    def feed(self, data: bytes) -> list:
        """The complete rows in ``data`` plus what came before it (a row may span chunks)."""
        if self.ended and data:
            raise _bad("received copy data after EOF marker")
        self.buf += data
        rows = []
        if not self.header_done and not self._header():
            return rows
        while not self.ended:
            row = self._row()
            if row is None:
                break
            rows.append(row)
        if self.pos > 1 << 16:
            del self.buf[:self.pos]
            self.pos = 0
        return rows

    def finish(self) -> None:
        if not self.header_done:
            if len(self.buf) == 0:
                return  # no data at all: an empty COPY, as PostgreSQL loads nothing
            raise _bad("COPY file signature not recognized" if len(self.buf) < 11 or
                       bytes(self.buf[:11]) != SIGNATURE else "invalid COPY file header (missing flags)")
        if not self.ended and self.pos < len(self.buf):  # cut inside a tuple (none at all ends it)
            raise _bad("unexpected EOF in COPY data")

    def _header(self) -> bool:
        b = self.buf
        if len(b) >= 11 and bytes(b[:11]) != SIGNATURE:
            raise _bad("COPY file signature not recognized")
        if len(b) < 19:
            return False
        flags, ext = struct.unpack_from("!ii", b, 11)
        if flags & (1 << 16):
            raise error_for("0A000", "COPY WITH OIDS is not supported")
        if flags & 0xFFFF0000 & ~(1 << 16):
            raise _bad("unrecognized critical flags in COPY file header")
        if ext < 0:
            raise _bad("invalid COPY file header (wrong length)")
        if len(b) < 19 + ext:
            return False
        self.pos = 19 + ext
        self.header_done = True
        return True

    def _row(self):
        b, pos = self.buf, self.pos
        if len(b) - pos < 2:
            return None
        (n,) = _I16.unpack_from(b, pos)
        pos += 2
        if n == -1:
            self.pos = pos
            self.ended = True
            if len(b) > pos:
                raise _bad("received copy data after EOF marker")
            return None
        if n != len(self.types):
            raise _bad(f"row field count is {n}, expected {len(self.types)}")
        fields = []
        for _ in range(n):
            if len(b) - pos < 4:
                return None
            (length,) = _I32.unpack_from(b, pos)
            pos += 4
            if length == -1:
                fields.append(None)
                continue
            if length < -1:
                raise _bad("invalid field size")
            if len(b) - pos < length:
                return None
            fields.append(bytes(b[pos:pos + length]))
            pos += length
        self.pos = pos
        return tuple(None if f is None else _decode(t, f) for t, f in zip(self.types, fields))


def _decode(type_name: str, data: bytes):
    try:
        return pgtypes.decode_parameter(type_name, 1, data)
    except Error as e:
        if e.sqlstate == "22P03":
            raise error_for("22P03", f"incorrect binary data format in COPY field of type {type_name}") from None
        raise
