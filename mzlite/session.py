"""Sessions and variables.

Owns: session variables (``SET``/``SHOW``/``RESET``), system parameters (``ALTER SYSTEM
SET``, ``connect(system_parameters=...)``) with their types and defaults, and a
session's transaction state.  Invariants: a variable's value always has its declared
type; a transaction is read-only or write-only (as in Materialize) and its writes are
invisible until COMMIT, when they apply at one timestamp.  Deliberately not here:
executing anything.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from mzlite.dialect import parse_dialect
from sql import errors as E


class _InvalidValue(Exception):
    """A generic parser refused its value; ``_parsed`` names the parameter (PostgreSQL's
    ``invalid value for parameter "name": "value"``), which the parsers are not told."""


def _parsed(var, value):
    try:
        return var.parse(value)
    except _InvalidValue as e:
        raise E.error_for(E.INVALID_PARAMETER_VALUE,
                          f'invalid value for parameter "{var.name}": "{e.args[0]}"') from None


def _parse_bool(v) -> bool:
    if isinstance(v, bool):
        return v
    s = str(v).strip().lower()
    if s in ("true", "on", "yes", "1", "t", "y"):
        return True
    if s in ("false", "off", "no", "0", "f", "n"):
        return False
    raise _InvalidValue(v)


def _parse_duration_ms(v) -> int:
    """PostgreSQL durations: an integer is milliseconds; '1s', '500ms', '2min' are accepted."""
    if isinstance(v, bool):
        raise _InvalidValue(v)
    if isinstance(v, (int, float)):
        return int(v)
    s = str(v).strip().lower().replace(" ", "")
    units = [("ms", 1), ("min", 60000), ("s", 1000), ("h", 3600000), ("d", 86400000)]
    for suffix, mul in units:
        if s.endswith(suffix) and s[: -len(suffix)].replace(".", "", 1).isdigit():
            return int(float(s[: -len(suffix)]) * mul)
    if s.isdigit():
        return int(s)
    raise _InvalidValue(v)


def _parse_isolation(v) -> str:
    s = str(v).strip().lower()
    if s in ("strict serializable", "serializable"):
        return s
    if s in ("read committed", "repeatable read", "read uncommitted"):
        return "serializable"
    raise _InvalidValue(v)


def _parse_text(v) -> str:
    return str(v)


#: schemas a search_path may name: public (where unqualified names resolve), "$user" (no such
#: schema, skipped as in PostgreSQL) and the system schemas (searched for system names anyway)
_SEARCH_PATH_OK = ("public", "$user", "pg_catalog", "mz_catalog", "mz_internal", "information_schema")


def _parse_search_path(v) -> str:
    """Unqualified names resolve in ``public`` only; a search_path naming any other schema would
    be accepted and ignored, so it is refused (0A000)."""
    names = [n.strip() for n in str(v).split(",") if n.strip()]
    for n in names:
        bare = n[1:-1] if len(n) > 1 and n[0] == n[-1] == '"' else n.lower()
        if bare not in _SEARCH_PATH_OK:
            raise E.error_for(E.FEATURE_NOT_SUPPORTED,
                              f'search_path naming schema "{bare}" is not supported: unqualified '
                              f'names resolve in schema "public" only',
                              hint=f"qualify names with their schema instead ({bare}.name)")
    return ", ".join(names) if names else "public"


def _parse_utc(v) -> str:
    """Only UTC, as Materialize (timestamptz values are UTC;)."""
    if str(v).strip().lower() in ("utc", "etc/utc", "+00:00", "+00", "z", "zulu", "gmt", "default"):
        return "UTC"
    raise E.error_for("22023", f'invalid value for parameter "TimeZone": "{v}"')


def _parse_datestyle(v) -> str:
    """Only ISO output with MDY input order, as Materialize (other styles would be ignored)."""
    words = [w for w in str(v).replace(",", " ").split() if w]
    if words and all(w.lower() in ("iso", "mdy") for w in words):
        return "ISO, MDY"
    raise E.error_for(E.INVALID_PARAMETER_VALUE, f'invalid value for parameter "DateStyle": "{v}"',
                      hint='mzlite supports only "ISO, MDY"')


def _parse_encoding(v) -> str:
    if str(v).strip().strip("'").lower().replace("-", "").replace("_", "") in ("utf8", "unicode"):
        return "UTF8"
    raise E.error_for(E.INVALID_PARAMETER_VALUE, f'invalid value for parameter "client_encoding": "{v}"',
                      hint="mzlite supports only UTF8")


def _parse_float_digits(v) -> str:
    """1 to 3 print floats shortest-exact, as mzlite always does; 0 and below (fewer digits)
    would be ignored, so they are refused."""
    try:
        n = int(str(v).strip())
    except ValueError:
        raise E.error_for(E.INVALID_PARAMETER_VALUE, f'invalid value for parameter "extra_float_digits": "{v}"') \
            from None
    if not -15 <= n <= 3:
        raise E.error_for(E.INVALID_PARAMETER_VALUE, f"{n} is outside the valid range for parameter "
                                                     f'"extra_float_digits" (-15 .. 3)')
    if n < 1:
        raise E.error_for(E.FEATURE_NOT_SUPPORTED, f"extra_float_digits = {n} is not supported: floats always "
                                                   f"print shortest-exact (1 to 3)")
    return str(n)


def _parse_always(value: bool, why: str):
    """A Materialize feature flag whose one value is mzlite's behaviour: setting the other
    is refused (0A000), never accepted and ignored."""
    def parse(v):
        b = _parse_bool(v)
        if b != value:
            raise E.error_for(E.FEATURE_NOT_SUPPORTED, f"this feature flag cannot be turned {'on' if b else 'off'}: "
                                                       f"{why}")
        return b
    return parse


#: ``max_result_size``'s default: 1 GiB (no pure-Python result reaches it, so it is not counted)
DEFAULT_MAX_RESULT_SIZE = 1 << 30


@dataclass(frozen=True)
class VarDef:
    name: str
    default: Any
    parse: Any
    description: str


SESSION_VARS = {v.name: v for v in [
    VarDef("transaction_isolation", "strict serializable", _parse_isolation,
           "Isolation of reads: 'strict serializable' reads every committed write; 'serializable' never waits."),
    VarDef("statement_timeout", 0, _parse_duration_ms, "Cancel a statement after this long (0: never)."),
    VarDef("application_name", "", _parse_text, "Reported name of the client."),
    VarDef("client_encoding", "UTF8", _parse_encoding, "Client encoding (always UTF8)."),
    VarDef("datestyle", "ISO, MDY", _parse_datestyle, "Date output style (always ISO, MDY)."),
    VarDef("timezone", "UTC", _parse_utc, "Time zone (Materialize supports only UTC)."),
    VarDef("search_path", "public", _parse_search_path, "Schema search path."),
    VarDef("cluster", "quickstart", _parse_text, "The cluster (mzlite has one)."),
    VarDef("database", "materialize", _parse_text, "The database (mzlite has one)."),
    VarDef("sql_dialect", "postgres", parse_dialect,
           "Dialect of incoming SQL: postgres, sqlite or duckdb (translated with sqlglot)."),
    VarDef("extra_float_digits", "3", _parse_float_digits, "Float output precision (1 to 3: shortest-exact)."),
]}

SYSTEM_VARS = {v.name: v for v in [
    VarDef("enable_compute_interactive_runtime", True, _parse_bool,
           "Serve one-shot reads on the interactive runtime, off the arrangements maintenance publishes."),
    VarDef("compaction_window_ms", 1000, _parse_duration_ms,
           "How much history indexes and materialized views keep readable (AS OF)."),
    VarDef("max_result_size", DEFAULT_MAX_RESULT_SIZE, int,
           "Largest result a read may return, in bytes (values counted at their text or 8-byte size)."),
    VarDef("enable_alter_set_cluster", False, _parse_bool,
           "Accept ALTER MATERIALIZED VIEW ... SET CLUSTER (Materialize's feature flag; off: refused)."),
    VarDef("enable_rbac_checks", False, _parse_always(False, "mzlite has no roles or privileges to check"),
           "Role-based access control (mzlite has none: always off)."),
    VarDef("enable_index_options", True, _parse_always(True, "mzlite always takes WITH (RETAIN HISTORY ...) "
                                                             "on indexes"),
           "Accept index options (always on)."),
    VarDef("enable_connection_validation_syntax", True,
           _parse_always(True, "mzlite always takes CREATE CONNECTION ... WITH (VALIDATE = ...) and VALIDATE "
                               "CONNECTION"),
           "Accept connection validation syntax (always on)."),
]}


def _duration_text(ms: int) -> str:
    """PostgreSQL's display of a duration in milliseconds: the largest unit that divides it."""
    if not ms:
        return "0"
    for unit, size in (("d", 86400000), ("h", 3600000), ("min", 60000), ("s", 1000)):
        if ms % size == 0:
            return f"{ms // size}{unit}"
    return f"{ms}ms"


def _format(value) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


class SystemParameters:
    """The system parameters in force.  ``defaults``: the values the database was opened with
    (``connect(system_parameters=)`` over the built-in defaults), what ``ALTER SYSTEM RESET``
    returns a parameter to, as Materialize's RESET returns to its system parameter defaults."""

    def __init__(self, overrides=None):
        self.values = {name: v.default for name, v in SYSTEM_VARS.items()}
        for name, value in (overrides or {}).items():
            self.set(name, value)
        self.defaults = dict(self.values)

    def set(self, name: str, value) -> None:
        name = name.lower()
        if name not in SYSTEM_VARS:
            raise E.error_for(E.UNDEFINED_OBJECT, f"unrecognized configuration parameter \"{name}\"")
        if value is None:
            self.values[name] = getattr(self, "defaults", {}).get(name, SYSTEM_VARS[name].default)
        else:
            self.values[name] = _parsed(SYSTEM_VARS[name], value)

    def __getitem__(self, name: str):
        return self.values[name]

    def show(self, name: str) -> str:
        return _format(self.values[name])


@dataclass
class Transaction:
    explicit: bool
    #: "read" or "write" once the first statement decides; None before
    kind: Optional[str] = None
    #: pending writes: table id -> [(row, diff)]
    writes: dict = field(default_factory=dict)
    #: the read timestamp of a read transaction (all its reads see one time)
    read_ts: Optional[int] = None
    #: read holds at ``read_ts`` on the transaction's time domain, from its first read until
    #: it ends (``mzlite.reads.Reader.end_transaction``); None when it has not read
    holds: Optional[tuple] = None
    failed: bool = False
    #: table id -> per-key deltas of ``writes`` (``mzlite.constraints``), to validate later statements
    key_deltas: dict = field(default_factory=dict)
    #: BEGIN READ ONLY: every write is refused (25006)
    read_only: bool = False
    #: SET LOCAL: variable -> its value before the transaction first set it (restored at its end)
    saved_vars: dict = field(default_factory=dict)


class Session:
    def __init__(self, conn_id: int, system: SystemParameters):
        self.conn_id = conn_id
        self.system = system
        self.vars = {name: v.default for name, v in SESSION_VARS.items()}
        self.txn: Optional[Transaction] = None
        #: while a multi-statement string runs outside a transaction block: the writes it has
        #: committed so far, undone if a later statement fails (``Writer.rollback_implicit``)
        self.undo: Optional[list] = None
        self.cancel_requested = False
        #: SUBSCRIBE cursors and the like, by name (a later issue)
        self.portals: dict = {}
        #: named prepared statements (``mzlite.prepared``): SQL's PREPARE and the wire
        #: protocol's named Parse share them, as in PostgreSQL
        self.prepared: dict = {}
        #: True while a caller that drives COPY's data runs a statement (``Cursor.copy``, the
        #: shell's ``\copy``, the wire protocol): COPY FROM STDIN / TO STDOUT hand it the data
        self.copy_driver = False
        #: the copy driver speaks COPY's binary format (the wire protocol: ``server.copy_binary``)
        self.copy_binary = False

    def in_transaction(self) -> bool:
        return self.txn is not None and self.txn.explicit

    def note_read(self) -> None:
        """A read (SELECT, SUBSCRIBE) starts: 25006 in an explicit transaction that has written
        (a transaction is read-only or write-only, as in Materialize); else it is a read one."""
        self._note("read", "transaction in write-only mode: reads cannot follow writes in a transaction")

    def note_write(self) -> None:
        """A write joins the explicit transaction: 25006 when it has read or is READ ONLY; else
        it is a write one."""
        if self.txn is not None and self.txn.read_only:
            raise E.error_for("25006", "cannot execute a write in a read-only transaction")
        self._note("write", "transaction in read-only mode: writes cannot follow reads in a transaction")

    def _note(self, kind: str, refusal: str) -> None:
        txn = self.txn
        if txn is not None and txn.explicit:
            if txn.kind not in (None, kind):
                raise E.error_for(E.INVALID_TRANSACTION_STATE, refusal)
            txn.kind = kind

    def refuse_in_transaction(self, plan) -> None:
        """25001 when ``plan``'s type may not run in this session's transaction (its
        ``transaction`` rule, ``planner.plans.Plan``): "never" inside a transaction block;
        "idle" once the transaction has read or written."""
        rule = plan.transaction
        txn = self.txn
        if rule == "any" or txn is None or not txn.explicit:
            return
        if rule == "never" or txn.kind is not None or txn.writes:
            raise E.error_for(E.ACTIVE_SQL_TRANSACTION, f"{plan.tag} cannot be run inside a transaction block")

    def set_var(self, name: str, value) -> None:
        name = name.lower()
        if name in SYSTEM_VARS:
            raise E.error_for("55P02", f"parameter \"{name}\" cannot be changed now; use ALTER SYSTEM SET")
        if name not in SESSION_VARS:
            raise E.error_for(E.UNDEFINED_OBJECT, f"unrecognized configuration parameter \"{name}\"")
        self.vars[name] = SESSION_VARS[name].default if value is None else _parsed(SESSION_VARS[name], value)

    def set_local_var(self, name: str, value) -> None:
        """SET LOCAL: ``set_var`` until the transaction block ends; outside one it has no
        effect (PostgreSQL warns and ignores it)."""
        txn = self.txn
        if txn is None or not txn.explicit:
            name = name.lower()
            if name not in SESSION_VARS and name not in SYSTEM_VARS:
                raise E.error_for(E.UNDEFINED_OBJECT, f"unrecognized configuration parameter \"{name}\"")
            return
        key = name.lower()
        before = self.vars.get(key)
        self.set_var(name, value)
        txn.saved_vars.setdefault(key, before)

    def restore_local_vars(self, txn) -> None:
        """The transaction ``txn`` ended: its SET LOCAL values go."""
        if txn is not None:
            for name, value in txn.saved_vars.items():
                self.vars[name] = value

    def show_var(self, name: str) -> str:
        name = name.lower()
        if name in SESSION_VARS:
            v = self.vars[name]
            if name == "statement_timeout":
                return _duration_text(v)
            return _format(v)
        if name in SYSTEM_VARS:
            return self.system.show(name)
        if name in ("server_version", "server_version_num"):
            return "9.5.0" if name == "server_version" else "90500"
        raise E.error_for(E.UNDEFINED_OBJECT, f"unrecognized configuration parameter \"{name}\"")

    def all_vars(self) -> list[tuple[str, str, str]]:
        out = [(n, self.show_var(n), v.description) for n, v in SESSION_VARS.items()]
        out += [(n, self.system.show(n), v.description) for n, v in SYSTEM_VARS.items()]
        return sorted(out)
