"""Known deviations: records whose expected results follow semantics mzlite does not share.

Owns: the known-deviations file format and the lookup from a record to its reason.

File format (one entry per line; '#' starts a comment line; blank lines ignored):

    <selector> -- <reason>

    selector  = <file>:<lines>      records whose header is on one of <lines> in <file>
              | sql:<regex>         records whose SQL matches <regex> (Python re.search,
                                    case-insensitive), in any file
              | <file> sql:<regex>  the same, restricted to <file>
    <file>    = a base name, a path suffix ("sqlite-corpus/select1.test") or an fnmatch
                pattern on the base name ("slt_lang_*.test")
    <lines>   = comma-separated line numbers or ranges: 12,40,100-120

Invariant: a record that matches an entry is still executed (its side effects keep the
database state the file expects), but its outcome is reported as *skipped, with the
reason*: never counted as passed, never silently hidden.  An entry without a reason is
a parse error.

Deliberately not here: deciding that something is a deviation (that is a human judgment,
recorded in the file with its reason).
"""
from __future__ import annotations

import fnmatch
import os
import re
from dataclasses import dataclass
from typing import Optional

__all__ = ["Deviation", "Deviations", "DeviationFileError", "DEFAULT_PATH"]

DEFAULT_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "known_deviations.txt")


class DeviationFileError(Exception):
    pass


@dataclass
class Deviation:
    reason: str
    file: Optional[str] = None
    lines: Optional[frozenset] = None
    sql: Optional[re.Pattern] = None
    source_line: int = 0

    def matches_file(self, path: str) -> bool:
        if self.file is None:
            return True
        p = path.replace(os.sep, "/")
        base = os.path.basename(p)
        f = self.file
        return p == f or p.endswith("/" + f) or fnmatch.fnmatchcase(base, f)


def _parse_lines(spec: str) -> frozenset:
    out = set()
    for part in spec.split(","):
        part = part.strip()
        if not part:
            continue
        if "-" in part:
            a, b = part.split("-", 1)
            out.update(range(int(a), int(b) + 1))
        else:
            out.add(int(part))
    return frozenset(out)


class Deviations:
    def __init__(self, entries=()):
        self.entries = list(entries)
        self._by_line: dict = {}     # line -> [Deviation] for file:line entries
        self._patterns: list = []
        for d in self.entries:
            if d.lines is not None:
                for ln in d.lines:
                    self._by_line.setdefault(ln, []).append(d)
            else:
                self._patterns.append(d)

    @classmethod
    def parse(cls, text: str, source: str = "<deviations>") -> "Deviations":
        entries = []
        for no, raw in enumerate(text.splitlines(), 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            sel, sep, reason = line.partition(" -- ")
            reason = reason.strip()
            if not sep or not reason:
                raise DeviationFileError(f"{source}:{no}: entry needs ' -- <reason>': {raw!r}")
            sel = sel.strip()
            try:
                if sel.startswith("sql:"):
                    entries.append(Deviation(reason, sql=re.compile(sel[4:], re.I),
                                             source_line=no))
                elif " sql:" in sel:
                    f, _, rx = sel.partition(" sql:")
                    entries.append(Deviation(reason, file=f.strip(), sql=re.compile(rx, re.I),
                                             source_line=no))
                else:
                    f, colon, spec = sel.rpartition(":")
                    if not colon or not f:
                        raise ValueError("expected <file>:<lines>")
                    entries.append(Deviation(reason, file=f, lines=_parse_lines(spec),
                                             source_line=no))
            except (ValueError, re.error) as e:
                raise DeviationFileError(f"{source}:{no}: {e}: {raw!r}") from None
        return cls(entries)

    @classmethod
    def load(cls, path: Optional[str] = DEFAULT_PATH) -> "Deviations":
        if path is None or not os.path.exists(path):
            return cls()
        with open(path, encoding="utf-8") as f:
            return cls.parse(f.read(), path)

    def __bool__(self) -> bool:
        return bool(self.entries)

    def lookup(self, path: str, line: int, sql: str) -> Optional[str]:
        """The reason a record is a known deviation, or None."""
        for d in self._by_line.get(line, ()):
            if d.matches_file(path):
                return d.reason
        for d in self._patterns:
            if d.sql.search(sql) and d.matches_file(path):
                return d.reason
        return None
