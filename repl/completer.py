"""Tab completion for the shell: keywords, backslash commands, and names from the live catalog.

Owns: ``CatalogCache`` (relation, index and column names fetched through SQL: ``SHOW TABLES``,
``SHOW VIEWS``, ``SHOW MATERIALIZED VIEWS``, ``SHOW INDEXES``, ``SHOW COLUMNS FROM x``; marked
stale after DDL and refetched on the next completion), ``suggest`` (the pure rule: what to
offer for the text before the cursor) and ``SQLCompleter`` (prompt_toolkit's adapter).

Invariant: completion never raises into the prompt and never runs anything but SHOW
statements; a failing SHOW just offers fewer names.

Deliberately not here: parsing SQL (a few keyword cues decide the context, like pgcli's
first cut), fuzzy matching, schema-qualified names.
"""
from __future__ import annotations

import re
from typing import Callable, Iterable, Optional

from prompt_toolkit.completion import Completer, Completion

KEYWORDS = sorted(set("""
SELECT FROM WHERE GROUP BY HAVING ORDER LIMIT OFFSET AS AND OR NOT NULL IS IN EXISTS BETWEEN LIKE
ILIKE CASE WHEN THEN ELSE END DISTINCT ON ALL UNION INTERSECT EXCEPT JOIN INNER LEFT RIGHT FULL
OUTER CROSS LATERAL USING WITH RECURSIVE VALUES INSERT INTO UPDATE SET DELETE CREATE DROP ALTER
TABLE VIEW MATERIALIZED INDEX DEFAULT IF CASCADE SHOW COLUMNS TABLES VIEWS INDEXES EXPLAIN
SUBSCRIBE AS OF UP TO ENVELOPE DEBEZIUM WITHIN TIMESTAMP BEGIN COMMIT ROLLBACK DECLARE FETCH
CURSOR CLOSE SYSTEM ASC DESC NULLS FIRST LAST TRUE FALSE CAST INTEGER BIGINT SMALLINT INT TEXT
NUMERIC DOUBLE PRECISION BOOLEAN REAL VARCHAR COUNT SUM MIN MAX AVG COALESCE NULLIF GREATEST
LEAST ABS LENGTH LOWER UPPER SUBSTR REPLACE TRIM GENERATE_SERIES UNNEST MZ_NOW OPTIMIZED PLAN
PHYSICAL
""".split()))

META_COMMANDS = ["\\?", "\\q", "\\x", "\\timing", "\\pset", "\\d", "\\dt", "\\dv", "\\dm", "\\di",
                 "\\i", "\\o", "\\watch", "\\set", "\\unset", "\\echo"]

# After these words a relation name comes next.
RELATION_CUES = {"FROM", "JOIN", "INTO", "UPDATE", "TABLE", "VIEW", "ON", "DESCRIBE", "SUBSCRIBE",
                 "TABLES", "VIEWS", "EXISTS"}
COLUMN_CUES = {"SELECT", "WHERE", "BY", "AND", "OR", "HAVING", "SET", "ON", ",", "(", "=", "<",
               ">", "DISTINCT", "NOT", "WHEN", "THEN", "ELSE"}
META_RELATION = {"\\d", "\\d+", "\\di", "\\di+"}
_WORD = re.compile(r"[A-Za-z_0-9$\"]*$")
_TOKENS = re.compile(r"\"[^\"]*\"|[A-Za-z_][A-Za-z_0-9$]*|\\[A-Za-z?+]+|[(),=<>;]")


class CatalogCache:
    """Names from the catalog, fetched through ``run(sql) -> rows`` (the first column of
    each row is the name)."""

    def __init__(self, run: Callable[[str], Optional[list]]):
        self._run = run
        self.relations: list[str] = []
        self.indexes: list[str] = []
        self._columns: dict[str, list[str]] = {}
        self.stale = True

    def invalidate(self) -> None:
        self.stale = True

    def _names(self, sql: str) -> list[str]:
        try:
            rows = self._run(sql) or []
        except Exception:  # noqa: BLE001 - completion never fails
            return []
        return [str(r[0]) for r in rows if r]

    def refresh(self) -> None:
        rels: list[str] = []
        for sql in ("SHOW TABLES", "SHOW VIEWS", "SHOW MATERIALIZED VIEWS"):
            rels.extend(self._names(sql))
        self.relations = sorted(set(rels))
        self.indexes = sorted(set(self._names("SHOW INDEXES")))
        self._columns = {}
        self.stale = False

    def ensure(self) -> None:
        if self.stale:
            self.refresh()

    def columns(self, relation: str) -> list[str]:
        key = relation.strip('"')
        if key not in self._columns:
            self._columns[key] = self._names(f"SHOW COLUMNS FROM {relation}") \
                if key in self.relations else []
        return self._columns[key]


def _relations_mentioned(text: str, catalog: CatalogCache) -> list[str]:
    known = {r.lower(): r for r in catalog.relations}
    seen = []
    for tok in _TOKENS.findall(text):
        r = known.get(tok.strip('"').lower())
        if r is not None and r not in seen:
            seen.append(r)
    return seen


def suggest(text_before_cursor: str, catalog: Optional[CatalogCache]) -> tuple[str, list[tuple[str, str]]]:
    """What to offer: returns (the word being completed, [(candidate, kind)]) where kind is
    "keyword", "relation", "column", "index" or "command".  Candidates are filtered by a
    case-insensitive prefix match and ordered: catalog names first, then keywords."""
    stripped = text_before_cursor.lstrip()
    if stripped.startswith("\\") and " " not in stripped:
        word = stripped
        return word, [(c, "command") for c in META_COMMANDS if c.startswith(word)]
    m = _WORD.search(text_before_cursor)
    word = m.group(0) if m else ""
    before = text_before_cursor[:len(text_before_cursor) - len(word)]
    tokens = _TOKENS.findall(before)
    prev = tokens[-1].upper() if tokens else ""
    if catalog is not None:
        catalog.ensure()
    prefix = word.strip('"').lower()
    out: list[tuple[str, str]] = []

    def add(names: Iterable[str], kind: str):
        for n in names:
            if n.lower().startswith(prefix) and (n, kind) not in out:
                out.append((n, kind))

    if tokens and tokens[0].startswith("\\"):
        if tokens[0] in META_RELATION and catalog is not None:
            add(catalog.relations, "relation")
        if tokens[0] == "\\pset":
            add(["format", "null", "footer", "tuples_only", "expanded"] if len(tokens) == 1
                else ["aligned", "csv", "tsv", "json"], "keyword")
        if tokens[0] in ("\\x", "\\timing"):
            add(["on", "off"] + (["auto"] if tokens[0] == "\\x" else []), "keyword")
        return word, out
    if catalog is not None:
        if prev in RELATION_CUES:
            add(catalog.relations, "relation")
            if prev == "INDEX" or (len(tokens) > 1 and tokens[-2].upper() == "INDEX"):
                add(catalog.indexes, "index")
        if prev in ("INDEX", "INDEXES"):
            add(catalog.indexes, "index")
        if prev in COLUMN_CUES or prev not in RELATION_CUES:
            for rel in _relations_mentioned(text_before_cursor, catalog):
                add(catalog.columns(rel), "column")
    keywords = KEYWORDS
    if word and word[0].islower():
        keywords = [k.lower() for k in KEYWORDS]
    if prefix or prev not in RELATION_CUES:
        add(keywords, "keyword")
    return word, out


class SQLCompleter(Completer):
    """prompt_toolkit adapter over ``suggest``."""

    def __init__(self, catalog: Optional[CatalogCache]):
        self.catalog = catalog

    def get_completions(self, document, complete_event):
        try:
            word, cands = suggest(document.text_before_cursor, self.catalog)
        except Exception:  # noqa: BLE001 - completion never fails
            return
        for text, kind in cands:
            yield Completion(text, start_position=-len(word), display_meta=kind)
