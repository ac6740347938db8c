"""psql variable interpolation: ``\\set`` variables substituted into SQL statements.

Owns ``interpolate(sql, variables)``: ``:name`` becomes the variable's value as is,
``:'name'`` a single-quoted literal (quotes doubled), ``:"name"`` a double-quoted identifier
(double quotes doubled), as psql does.

Invariants: nothing inside single-quoted strings (``E'...'`` with backslash escapes
included), double-quoted identifiers, ``--``/``/* */`` comments or dollar-quoted strings is
touched; ``::`` (a cast) is never a reference; a reference to an undefined variable is left
as typed (psql's behaviour), so text without references comes back unchanged.

Deliberately not here: substitution in backslash commands' arguments, ``\\if``, special
variables (``ON_ERROR_STOP`` ...), backquoted shell commands.
"""
from __future__ import annotations

import re
from typing import Mapping

_NAME = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")
_DOLLAR_TAG = re.compile(r"\$([A-Za-z_][A-Za-z_0-9]*)?\$")


def interpolate(sql: str, variables: Mapping[str, str]) -> str:
    """``sql`` with its variable references replaced (see the module docstring)."""
    if not variables or ":" not in sql:
        return sql
    out: list[str] = []
    i, n = 0, len(sql)
    while i < n:
        c = sql[i]
        if c == "-" and sql.startswith("--", i):
            j = sql.find("\n", i)
            j = n if j < 0 else j + 1
        elif c == "/" and sql.startswith("/*", i):
            j, depth = i + 2, 1
            while j < n and depth:
                if sql.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif sql.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
        elif c in "'\"":
            backslash = c == "'" and i > 0 and sql[i - 1] in "eE" and not (i > 1 and (sql[i - 2].isalnum() or sql[i - 2] == "_"))
            j = i + 1
            while j < n:
                if backslash and sql[j] == "\\":
                    j += 2
                    continue
                if sql[j] == c:
                    if j + 1 < n and sql[j + 1] == c:
                        j += 2
                        continue
                    break
                j += 1
            j = min(n, j + 1)
        elif c == "$" and (m := _DOLLAR_TAG.match(sql, i)) and not (i > 0 and (sql[i - 1].isalnum() or sql[i - 1] == "_")):
            k = sql.find(m.group(0), m.end())
            j = n if k < 0 else k + len(m.group(0))
        elif c == ":" and sql.startswith("::", i):
            j = i + 2
        elif c == ":":
            rep, j = _reference(sql, i, variables)
            if rep is not None:
                out.append(rep)
                i = j
                continue
            j = i + 1
        else:
            j = i + 1
        out.append(sql[i:j])
        i = j
    return "".join(out)


def _reference(sql: str, i: int, variables: Mapping[str, str]):
    """The replacement of the reference at ``sql[i] == ':'`` and where it ends, or (None, i)."""
    nxt = sql[i + 1:i + 2]
    if nxt in ("'", '"'):
        m = _NAME.match(sql, i + 2)
        if m and sql[m.end():m.end() + 1] == nxt and m.group(0) in variables:
            value = variables[m.group(0)]
            return nxt + value.replace(nxt, nxt * 2) + nxt, m.end() + 1
        return None, i
    m = _NAME.match(sql, i + 1)
    if m and m.group(0) in variables:
        return variables[m.group(0)], m.end()
    return None, i
