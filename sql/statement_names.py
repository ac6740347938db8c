"""A statement's name in the user's words, for refusals: ``CREATE TRIGGER``, ``ANALYZE``,
``ALTER TABLE ... ADD CONSTRAINT``.

Owns reading the leading keywords of a statement's text (PostgreSQL's scanner, so quoting
and comments are the parser's) up to the object it names.  Invariant: the name is made only
of words the user typed, upper-cased, never a parser node's name (``CreateTrigStmt``) or an
enum (``OBJECT_FOREIGN_TABLE``).  Deliberately not here: deciding what is supported (the
planner's dispatch does) or the message around the name.
"""
from __future__ import annotations

from pglast import parser

#: words after which a statement's name ends (the kind of object it creates, alters, ...)
_NOUNS = frozenset("""
    TABLE VIEW INDEX FUNCTION PROCEDURE ROUTINE TRIGGER SEQUENCE TYPE DOMAIN DATABASE TABLESPACE
    RULE POLICY EXTENSION ROLE USER GROUP SERVER PUBLICATION SUBSCRIPTION AGGREGATE OPERATOR
    CAST STATISTICS SCHEMA COLLATION CONVERSION LANGUAGE WRAPPER PRIVILEGES MAPPING
    CONFIGURATION DICTIONARY PARSER TEMPLATE TRANSFORM METHOD OWNED SYSTEM SOURCE SINK SECRET
    CONNECTION CLUSTER REPLICA LABEL LARGE OBJECT TRANSACTION FAMILY CLASS
""".split())

#: statements whose name goes on past their first word (``CREATE FUNCTION``, ``DROP OWNED``)
_LEADS = frozenset("""
    CREATE DROP ALTER COMMENT SECURITY REFRESH IMPORT REASSIGN PREPARE SET
""".split())

#: words that end a name before any noun (``GRANT SELECT ON t``: the name is ``GRANT``)
_STOPS = frozenset("ON TO FROM IS AS IN USING FOR WITH IF".split())

_MAX_WORDS = 5


def _words(text: str):
    """``(word, is_keyword)`` for each token of ``text``; empty if it does not scan."""
    try:
        toks = parser.scan(text)
    except Exception:  # noqa: BLE001 - an unscannable text has no name; the caller falls back
        return []
    return [(text[t.start:t.end + 1], t.kind != "NO_KEYWORD") for t in toks
            if t.name not in ("SQL_COMMENT", "C_COMMENT")]


def statement_name(text: str, fallback: str = "this statement") -> str:
    """The statement's leading words as the user typed them (upper-cased): ``CREATE TRIGGER``
    for ``create trigger tr ...``, ``VACUUM`` for ``VACUUM FULL t``, ``COMMENT ON FUNCTION``.
    ``fallback`` when the text has no leading keyword."""
    toks = _words(text)
    if not toks or not toks[0][1]:
        return fallback
    words = [toks[0][0].upper()]
    if words[0] not in _LEADS:
        return words[0]
    for w, keyword in toks[1:]:
        u = w.upper()
        comment_on = u == "ON" and words == ["COMMENT"]
        if not keyword or (u in _STOPS and not comment_on) or len(words) == _MAX_WORDS:
            break
        words.append(u)
        if u in _NOUNS:
            break
    return " ".join(words)


def alter_subcommand(text: str) -> str:
    """The subcommand of an ``ALTER <object> [IF EXISTS] [ONLY] name ...`` statement in the
    user's words (``ADD CONSTRAINT``, ``OWNER TO``, ``ENABLE ROW LEVEL SECURITY``): the
    keywords after the object's (possibly qualified) name, up to the next name; empty when
    there are none."""
    toks = _words(text)
    j = 0
    while j < len(toks) and toks[j][1] and toks[j][0].upper() not in _NOUNS:
        j += 1
    j += 1  # the noun
    if j < len(toks) and toks[j][0].upper() == "VIEW":  # MATERIALIZED VIEW
        j += 1
    while j < len(toks) and toks[j][0].upper() in ("IF", "EXISTS", "ONLY"):
        j += 1
    j += 1  # the name
    while j + 1 < len(toks) and toks[j][0] == ".":
        j += 2
    words = []
    for w, keyword in toks[j:]:
        if not keyword or len(words) == _MAX_WORDS:
            break
        words.append(w.upper())
    return " ".join(words)


#: Materialize's objects mzlite does not have (PostgreSQL's grammar has no such statements)
_MATERIALIZE_OBJECTS = frozenset("SOURCE SINK SECRET CONNECTION".split())
#: the forms of those that mzlite parses (a syntax error in one is the user's, not a refusal)
_PARSED_HERE = frozenset({("CREATE", "SOURCE"), ("DROP", "SOURCE"), ("ALTER", "SOURCE"), ("CREATE", "SECRET"), ("ALTER", "SECRET"),
                          ("DROP", "SECRET"), ("CREATE", "CONNECTION"), ("DROP", "CONNECTION")})


def materialize_only_form(text: str) -> str:
    """The name of a Materialize form mzlite lacks and PostgreSQL's grammar cannot parse
    (``CREATE SINK``, ``ALTER SOURCE``, ``ALTER INDEX ... SET CLUSTER``), or empty: such a statement is refused (0A000), not
    reported as a syntax error at a word the user spelled right."""
    upper = [w.upper() for w, _ in _words(text)]
    name = statement_name(text, "")
    words = name.split()
    if not words or words[0] not in ("CREATE", "DROP", "ALTER"):
        return ""
    j = 3 if upper[1:3] == ["OR", "REPLACE"] else 1
    if j < len(upper) and upper[j] in _MATERIALIZE_OBJECTS:  # SINK and SECRET are no keywords
        if (upper[0], upper[j]) in _PARSED_HERE:
            return ""  # their own grammar (sql.mzsources, sql.mzconnections) parsed it: its syntax errors are the user's
        return f"{upper[0]} {upper[j]}"
    if words[0] == "ALTER" and alter_subcommand(text).startswith("SET CLUSTER"):
        return f"{name} ... SET CLUSTER"
    return ""


def keyword_at(text: str, index: int) -> str:
    """The keyword that starts at character ``index`` of ``text``, upper-cased (``XMLELEMENT``,
    ``GROUPING``), or empty when a name, literal or nothing starts there."""
    for w, keyword in _words_at(text, index):
        return w.upper() if keyword else ""
    return ""


def _words_at(text: str, index: int):
    if index is None or not 0 <= index < len(text):
        return []
    return _words(text[index:])


def explained_name(text: str) -> str:
    """The name of the statement an ``EXPLAIN ...`` explains (``INSERT``, ``CREATE VIEW``), in
    the user's words, or ``this statement``."""
    toks = _words(text)
    for i, (w, keyword) in enumerate(toks):
        if i and keyword and w.upper() in ("INSERT", "UPDATE", "DELETE", "CREATE", "COPY", "SUBSCRIBE", "DROP"):
            return statement_name(" ".join(t for t, _ in toks[i:]))
    return "this statement"
