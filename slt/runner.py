"""Run the records of one sqllogictest file against a fresh engine and judge each one.

Owns: the per-file run loop (skipif/onlyif, halt, hash-threshold, control sortmode,
reset-server), the judgment of each record (statement ok|error|count, query results by
value or hash, labels, colnames, multiline, simple blocks), known deviations (reported as
skipped with their reason), --auto-index-selects, and the edits --rewrite-results makes.

Invariants:
- Each file runs against its own fresh engine (made by ``Config.make_engine``).
- Every record that runs ends as exactly one of passed, failed or skipped (skipped only
  for a known deviation, always with its reason); records a skipif/onlyif excludes are
  not run and not counted (as SQLite's runner does).
- An internal engine error never satisfies an expected error.
- A failing `statement ok` fails that record and the file goes on (as SQLite's runner
  does; Materialize's gives up on the file).  A statement that hangs past
  ``Config.timeout`` fails and stops its file: the engine is abandoned.
- A rewrite replaces only the span of a failing record's expected output (or the regex or
  count in its header); every other character of the file is kept.

Comparison follows the form of the expected output (a list of values, or "N values
hashing to MD5"), as Materialize's runner does; hash-threshold (default 8 for .test files,
0 = never for .slt) only decides the form a rewrite writes.  Labels: every query with the
same label in a file must produce the same values (count and hash).

Deliberately not here: finding files, parallelism, progress bars and the summary
(``slt/__init__.py``), output formatting of failures (``slt/report.py``).

Over 600 lines (barely): every record kind is run and judged against one file state.
"""
from __future__ import annotations

import re
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Optional

from . import engines as _engines
from .deviations import Deviations
from .parser import (Halt, HashThreshold, ParseError, Query, ResetServer, Simple, SortMode,
                     Statement, parse_file, split_cockroach_line)
from .render import md5_of, pg_text, render_rows, renderers_for, sort_values

__all__ = ["Config", "Failure", "FileResult", "run_file", "run_records", "apply_edits"]

_SELECT_RE = re.compile(r"^\s*\(*\s*(select|with|values)\b", re.I)
_LIMIT_RE = re.compile(r"\b(limit|offset|fetch)\b|\bas\s+of\b", re.I)
_BEGIN_RE = re.compile(r"^\s*(begin|start\s+transaction)\b", re.I)
_END_RE = re.compile(r"^\s*(commit|rollback|end|abort)\b", re.I)
#: EXPLAIN, after any leading comments (Materialize's tpch_select.slt heads each with ``-- Query 01``)
_EXPLAIN_RE = re.compile(r"^(?:\s*--[^\n]*(?:\n|$)|\s*/\*.*?\*/)*\s*explain\b", re.I | re.S)


def _is_plan(rec) -> bool:
    """An EXPLAIN record with expected output: its text is Materialize's optimizer's plan,
    which mzlite's optimizer does not print, so it is its own category: run (an internal
    error still fails it), counted, shown with -v, and judged only with --compare-plans."""
    return isinstance(rec, Query) and not rec.error and rec.has_results and \
        _EXPLAIN_RE.match(rec.sql) is not None


@dataclass
class Config:
    engine: str = "mzlite"
    system_parameters: dict = field(default_factory=dict)
    rewrite: bool = False
    auto_index_selects: bool = False
    fail_fast: bool = False
    verbose: bool = False
    deviations: Deviations = field(default_factory=Deviations)
    junit: bool = False
    timeout: float = 0.0        # seconds per statement; 0: no limit
    engine_factory: Optional[Callable] = None   # tests: a callable returning an Engine
    compare_plans: bool = False  # judge EXPLAIN-plan records too (else: counted as plans)
    url: Optional[str] = None   # run against the PostgreSQL-protocol server at this URL (``--url``)

    def make_engine(self):
        if self.engine_factory is not None:
            factory = self.engine_factory
        else:
            def factory(name=self.engine, params=self.system_parameters, url=self.url):
                return _engines.make_engine(name, params, url=url)
        if self.timeout and self.timeout > 0:
            return _engines.GuardedEngine(factory, self.timeout)
        return factory()


@dataclass
class Failure:
    path: str
    line: int
    sql: str
    message: str
    expected: list = field(default_factory=list)
    actual: list = field(default_factory=list)


@dataclass
class FileResult:
    path: str
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    not_applicable: int = 0
    plans: int = 0              # EXPLAIN-plan records run but not compared (see _is_plan)
    failures: list = field(default_factory=list)
    skips: list = field(default_factory=list)        # (path, line, reason)
    notes: list = field(default_factory=list)        # (path, line, text): what a reset could not do
    cases: list = field(default_factory=list)        # junit: (path, line, status, message)
    edits: dict = field(default_factory=dict)        # path -> [(start, end, text)]
    log: list = field(default_factory=list)          # lines printed with -v (when buffered)
    stopped: bool = False                            # --fail-fast stopped the run
    bailed: Optional[str] = None                     # why the rest of the file did not run
    seconds: float = 0.0

    @property
    def records(self) -> int:
        return self.passed + self.failed + self.skipped


class _Verdict(Exception):
    """A record's failure, raised inside the judging code."""

    def __init__(self, message, expected=(), actual=(), edit=None):
        super().__init__(message)
        self.message, self.expected, self.actual, self.edit = message, list(expected), \
            list(actual), edit


def _error_matches(err, regex, pgcode) -> bool:
    if err.internal:
        return False
    if pgcode and err.sqlstate.upper() != pgcode:
        return False
    if not regex:
        return True
    text = err.full_text()
    try:
        return re.search(regex, text) is not None or re.search(regex, err.message) is not None
    except re.error:
        return regex in text


def _applies(conditions, names) -> bool:
    for kind, name in conditions:
        if kind == "skipif" and name in names:
            return False
        if kind == "onlyif" and name not in names:
            return False
    return True


class _FileRun:
    def __init__(self, path, records, config, emit, progress):
        self.path = path
        self.records = records
        self.cfg = config
        self.emit = emit
        self.progress = progress
        self.res = FileResult(path)
        self.threshold = 8 if path.endswith(".test") else 0
        self.sortmode = "nosort"
        self.labels: dict = {}
        self.view_seq = 0
        self.in_transaction = False     # no auto-index DDL inside an explicit transaction
        self.engine = None

    # -- the loop ---------------------------------------------------------------------
    def run(self) -> FileResult:
        res = self.res
        t0 = time.perf_counter()
        try:
            self.engine = self.cfg.make_engine()
        except Exception as e:  # the engine cannot start: one failure for the file
            self._fail_record(self.path, 0, "", f"could not start engine: "
                                                 f"{type(e).__name__}: {e}")
            res.seconds = time.perf_counter() - t0
            return res
        names = self.engine.names
        self._note_reset(0)
        try:
            for rec in self.records:
                if rec.conditions and not _applies(rec.conditions, names):
                    if isinstance(rec, (Statement, Query, Simple)):
                        res.not_applicable += 1
                    continue
                if isinstance(rec, Halt):
                    break
                if isinstance(rec, HashThreshold):
                    self.threshold = rec.threshold
                    continue
                if isinstance(rec, SortMode):
                    self.sortmode = rec.sort
                    continue
                if isinstance(rec, ResetServer):
                    if not self._reset_server(rec):
                        break
                    continue
                self._run_record(rec)
                if self.progress is not None:
                    self.progress(1)
                if res.stopped:
                    break
                if getattr(self.engine, "dead", False):
                    res.bailed = (f"the engine hung at line {rec.line}; "
                                  f"the rest of the file was not run")
                    break
        finally:
            try:
                self.engine.close()
            except Exception:
                pass
            res.seconds = time.perf_counter() - t0
        return res

    def _reset_server(self, rec) -> bool:
        """``reset-server``: the engine's reset (a fresh database; against a server, what
        Materialize's runner does before each file, as a remote server cannot be restarted).
        A reset that fails fails the record and ends the file (its state is unknown)."""
        try:
            self.engine.reset()
        except _engines.EngineError as e:
            self._fail_record(rec.path, rec.line, "reset-server", "reset-server failed", ["ok"], [_err_line(e)])
            self.res.bailed = f"reset-server failed at line {rec.line}; the rest of the file was not run"
            return False
        self.labels.clear()
        self.in_transaction = False
        self._note_reset(rec.line)
        return True

    def _note_reset(self, line: int) -> None:
        for text in getattr(self.engine, "reset_notes", None) or ():
            self.res.notes.append((self.path, line, text))
            if self.cfg.verbose:
                self.emit(f"NOTE {self.path}:{line}: {text}")

    def _run_record(self, rec):
        cfg = self.cfg
        if cfg.verbose:
            first = rec.sql.strip().splitlines()[0] if rec.sql.strip() else ""
            self.emit(f"{rec.path}:{rec.line}: {first[:120]}")
        reason = cfg.deviations.lookup(rec.path, rec.line, rec.sql) if cfg.deviations else None
        if not cfg.compare_plans and _is_plan(rec):
            self._plan(rec)
            return
        try:
            if isinstance(rec, Statement):
                self._statement(rec)
            elif isinstance(rec, Query):
                self._query(rec)
            else:
                self._simple(rec)
        except _Verdict as v:
            if reason is not None:
                self._skip(rec, reason)
                return
            self._fail_record(rec.path, rec.line, rec.sql, v.message, v.expected, v.actual)
            if v.edit is not None and cfg.rewrite:
                self.res.edits.setdefault(rec.path, []).append(v.edit)
            return
        if reason is not None:
            self._skip(rec, reason + " (passes now: the entry may be stale)")
            return
        self.res.passed += 1
        if cfg.junit:
            self.res.cases.append((rec.path, rec.line, "passed", ""))

    def _plan(self, rec):
        try:
            self.engine.execute(rec.sql)
        except _engines.EngineError as e:
            if e.internal:
                self._fail_record(rec.path, rec.line, rec.sql, "EXPLAIN: internal error", [], [_err_line(e)])
                return
        self.res.plans += 1
        if self.cfg.junit:
            self.res.cases.append((rec.path, rec.line, "skipped", "EXPLAIN plan (not compared)"))
        if self.cfg.verbose:
            self.emit(f"PLAN {rec.path}:{rec.line}: not compared (--compare-plans compares it)")

    def _skip(self, rec, reason):
        self.res.skipped += 1
        self.res.skips.append((rec.path, rec.line, reason))
        if self.cfg.junit:
            self.res.cases.append((rec.path, rec.line, "skipped", reason))
        if self.cfg.verbose:
            self.emit(f"SKIP {rec.path}:{rec.line}: {reason}")

    def _fail_record(self, path, line, sql, message, expected=(), actual=()):
        res = self.res
        res.failed += 1
        res.failures.append(Failure(path, line, sql, message, list(expected), list(actual)))
        if self.cfg.junit:
            res.cases.append((path, line, "failed", message))
        if self.cfg.fail_fast:
            res.stopped = True

    # -- statements -------------------------------------------------------------------
    def _statement(self, rec: Statement):
        err = res = None
        try:
            res = self.engine.execute(rec.sql)
        except _engines.EngineError as e:
            err = e
        if rec.expect == "error":
            if err is None:
                raise _Verdict("statement succeeded; an error was expected",
                               [f"error {rec.error_regex or ''}".rstrip()], ["ok"])
            if not _error_matches(err, rec.error_regex, rec.pgcode):
                edit = None
                if rec.error_span is not None and not err.internal:
                    edit = self._error_edit(rec.error_span, err)
                raise _Verdict("statement failed with a different error",
                               [f"error {rec.error_regex or ''}".rstrip()],
                               [_err_line(err)], edit)
            return
        if err is None:
            if _BEGIN_RE.match(rec.sql):
                self.in_transaction = True
            elif _END_RE.match(rec.sql):
                self.in_transaction = False
        if err is not None:
            raise _Verdict("statement failed", ["ok"], [_err_line(err)])
        if rec.expect == "count":
            actual = res.rowcount
            if actual != rec.count:
                edit = (rec.count_span[0], rec.count_span[1], str(actual))
                raise _Verdict("wrong number of rows affected", [str(rec.count)], [str(actual)],
                               edit)

    def _error_edit(self, span, err):
        msg = _regex_escape(err.message.split("\n")[0])
        start, end = span
        if start == end:
            msg = " " + msg
        return (start, end, msg)

    # -- queries ----------------------------------------------------------------------
    def _query(self, rec: Query):
        err = res = None
        try:
            res = self.engine.execute(rec.sql)
        except _engines.EngineError as e:
            err = e
        if rec.error:
            if err is None:
                raise _Verdict("query succeeded; an error was expected",
                               [f"error {rec.error_regex or ''}".rstrip()], ["ok"])
            if not _error_matches(err, rec.error_regex, rec.pgcode):
                edit = None
                if rec.error_span is not None and not err.internal:
                    edit = self._error_edit(rec.error_span, err)
                raise _Verdict("query failed with a different error",
                               [f"error {rec.error_regex or ''}".rstrip()],
                               [_err_line(err)], edit)
            self._auto_index(rec, None, err)
            return
        if err is not None:
            raise _Verdict("query failed", self._expected_display(rec), [_err_line(err)])
        if res.rows is None:
            raise _Verdict("query returned no result set", self._expected_display(rec),
                           ["(no rows; status " + (res.status or "?") + ")"])
        ncols = len(rec.types)
        types = rec.types or "T" * len(res.columns or (res.rows[0] if res.rows else ()))
        if rec.types and res.columns is not None and len(res.columns) != ncols:
            raise _Verdict(f"wrong column count: expected {ncols}, got {len(res.columns)}",
                           [rec.types], [f"{len(res.columns)} columns"])
        sort = rec.sort or self.sortmode
        rendered = render_rows(res.rows, renderers_for(types, rec.mode, rec.multiline))
        if rec.colnames is not None and res.columns is not None and \
                list(res.columns) != rec.colnames:
            values = sort_values(rendered, sort)
            raise _Verdict("wrong column names", [" ".join(rec.colnames)],
                           [" ".join(res.columns)], self._query_edit(rec, res, rendered,
                                                                     values, sort))
        values = sort_values(rendered, sort)
        if rec.has_results and not self._output_matches(rec, rendered, values, sort):
            raise _Verdict("wrong results", self._expected_display(rec),
                           self._actual_display(rec, values),
                           self._query_edit(rec, res, rendered, values, sort))
        if rec.label is not None:
            h = (len(values), md5_of(values))
            first = self.labels.setdefault(rec.label, (h, rec.line))
            if first[0] != h:
                raise _Verdict(f"{rec.label}: results differ from the query with the same "
                               f"label at line {first[1]}",
                               [f"{first[0][0]} values hashing to {first[0][1]}"],
                               [f"{h[0]} values hashing to {h[1]}"])
        self._auto_index(rec, rendered, None)

    def _output_matches(self, rec, rendered, values, sort) -> bool:
        if rec.expected_hash is not None:
            n, md5 = rec.expected_hash
            return n == len(values) and md5 == md5_of(values)
        exp = rec.expected_lines
        if rec.multiline:
            return "\n".join(exp) == "\n".join(values)
        if rec.mode == "cockroach":
            return self._cockroach_matches(rec, rendered, sort)
        if values == exp:
            return True
        # lenient: one row per line, values separated by single spaces
        ncols = len(rec.types)
        if ncols > 1 and len(exp) == len(rendered):
            rows = [" ".join(r) for r in rendered]
            if sort == "rowsort":
                return sorted(rows) == sorted(exp)
            return rows == exp
        return False

    @staticmethod
    def _cockroach_matches(rec, rendered, sort) -> bool:
        ncols = len(rec.types)
        exp_rows = [split_cockroach_line(ln, ncols) for ln in rec.expected_lines]
        if ncols == 1:
            act_rows = [[r[0].strip()] for r in rendered]
        else:
            act_rows = [[tok for v in r for tok in v.split()] for r in rendered]
            exp_rows = [[tok for v in r for tok in v.split()] for r in exp_rows]
        if sort == "rowsort":
            exp_rows.sort()
            act_rows.sort()
        exp = [v for r in exp_rows for v in r]
        act = [v for r in act_rows for v in r]
        if sort == "valuesort":
            exp.sort()
            act.sort()
        if exp == act:
            return True
        # one value per line (as standard mode writes them): regroup into rows
        lines = [ln.strip().replace("\u2420", " ") for ln in rec.expected_lines]
        if ncols > 1 and len(lines) == len(rendered) * ncols:
            rows = [lines[i:i + ncols] for i in range(0, len(lines), ncols)]
            act_rows = [[v.strip() for v in r] for r in rendered]
            if sort == "rowsort":
                rows.sort()
                act_rows.sort()
            exp = [v for r in rows for v in r]
            act = [v for r in act_rows for v in r]
            if sort == "valuesort":
                exp.sort()
                act.sort()
            return exp == act
        return False

    def _expected_display(self, rec):
        if not rec.has_results:
            return ["(results not checked)"]
        if rec.expected_hash is not None:
            return [f"{rec.expected_hash[0]} values hashing to {rec.expected_hash[1]}"]
        return list(rec.expected_lines)

    @staticmethod
    def _actual_display(rec, values):
        if rec.expected_hash is not None:
            return [f"{len(values)} values hashing to {md5_of(values)}"]
        return list(values)

    def _query_edit(self, rec, res, rendered, values, sort):
        if rec.output_span is None:
            return None
        lines = []
        if rec.colnames is not None:
            lines.append(" ".join(c.replace(" ", "\u2420") for c in (res.columns or [])))
        if rec.expected_hash is not None or (self.threshold > 0 and
                                             len(values) > self.threshold):
            lines.append(f"{len(values)} values hashing to {md5_of(values)}")
        elif rec.multiline:
            lines.append("\n".join(values).replace("\n", rec.newline))
        elif rec.mode == "cockroach":
            rows = sorted(rendered) if sort == "rowsort" else rendered
            if sort == "valuesort":
                rows = [[v] for v in values]
            multi = len(rec.types) > 1
            for r in rows:
                lines.append("  ".join(v.replace(" ", "\u2420") if multi else v for v in r))
        else:
            lines.extend(values)
        return (rec.output_span[0], rec.output_span[1], _join_lines(lines, rec.newline))

    # -- auto-index-selects -----------------------------------------------------------
    def _auto_index(self, rec, rendered, err):
        """Run a SELECT again through an indexed view; a disagreement fails the record."""
        if not self.cfg.auto_index_selects or not _SELECT_RE.match(rec.sql):
            return
        if _LIMIT_RE.search(rec.sql) or self.in_transaction:
            return  # LIMIT/OFFSET: a view may pick other rows; AS OF belongs to a SELECT,
            #         not to a view; DDL is not allowed inside a transaction
        if err is not None and err.internal:
            return
        eng = self.engine
        self.view_seq += 1
        view = f"mzlite_slt_auto_view_{self.view_seq}"
        ncols = len(rec.types) if rec.types else None
        cols = f" ({', '.join(f'a{i + 1}' for i in range(ncols))})" if ncols else ""
        body = rec.sql.strip().rstrip(";")
        view_err = view_rows = None
        try:
            eng.execute(f"CREATE VIEW {view}{cols} AS {body}")
        except _engines.EngineError as e:
            view_err = e
        else:
            try:
                eng.execute(f"CREATE DEFAULT INDEX ON {view}")
                view_rows = eng.execute(f"SELECT * FROM {view}").rows
            except _engines.EngineError as e:
                view_err = e
            finally:
                try:
                    eng.execute(f"DROP VIEW {view}")
                except _engines.EngineError:
                    try:
                        eng.execute(f"DROP VIEW {view} CASCADE")
                    except _engines.EngineError:
                        pass
        if err is not None or view_err is not None:
            if err is not None and view_err is not None:
                return
            if view_err is not None and view_err.internal:
                raise _Verdict("auto-index-selects: the indexed view failed",
                               ["(as the query)"], [_err_line(view_err)])
            raise _Verdict("auto-index-selects: query and indexed view disagree",
                           ["query: " + (_err_line(err) if err else "ok")],
                           ["indexed view: " + (_err_line(view_err) if view_err else "ok")])
        vr = render_rows(view_rows or [], renderers_for(rec.types, rec.mode, rec.multiline))
        a = Counter(tuple(r) for r in rendered)
        b = Counter(tuple(r) for r in vr)
        if a != b:
            only_q = sorted((a - b).elements())[:10]
            only_v = sorted((b - a).elements())[:10]
            raise _Verdict("auto-index-selects: indexed view returns other rows",
                           ["only in query: " + " | ".join(" ".join(r) for r in only_q)],
                           ["only in view: " + " | ".join(" ".join(r) for r in only_v)])

    # -- simple -----------------------------------------------------------------------
    def _simple(self, rec: Simple):
        actual = []
        try:
            for stmt in _engines.split_statements(rec.sql):
                res = self.engine.execute(stmt, conn=rec.conn)
                if res.rows is not None:
                    for row in res.rows:
                        actual.append(",".join(pg_text(v) for v in row))
                    actual.append(f"COMPLETE {len(res.rows)}")
                else:
                    actual.append(f"COMPLETE {max(res.rowcount, 0)}")
        except _engines.EngineError as e:
            if e.internal:
                raise _Verdict("simple: internal error", rec.expected_lines, [_err_line(e)])
            actual.extend(e.full_text().split("\n"))
        if rec.multiline:
            # the first expected value is all the rows as one text; COMPLETE lines follow
            rows = [a for a in actual if not a.startswith("COMPLETE ")]
            tail = [a for a in actual if a.startswith("COMPLETE ")]
            actual = ["\n".join(rows)] + tail
        if actual != rec.expected_lines:
            edit = None
            if rec.output_span is not None:
                if rec.multiline:
                    nl = rec.newline
                    text = actual[0].replace("\n", nl) + nl + "EOF" + nl + \
                        _join_lines(actual[1:], nl)
                else:
                    text = _join_lines(actual, rec.newline)
                edit = (rec.output_span[0], rec.output_span[1], text)
            raise _Verdict("simple: wrong output", rec.expected_lines, actual, edit)


_META = re.compile(r"([.^$*+?{}\[\]\\|()])")


def _regex_escape(s: str) -> str:
    """Escape only what a regex would misread (re.escape also escapes spaces)."""
    return _META.sub(r"\\\1", s)


def _join_lines(lines, nl):
    return "".join(ln + nl for ln in lines)


def _err_line(err) -> str:
    if err.internal:
        return err.message
    return f"error {err.sqlstate}: {err.message}"


def run_records(path, records, config: Config, emit=None, progress=None) -> FileResult:
    """Run parsed ``records`` of ``path`` against a fresh engine."""
    return _FileRun(path, records, config, emit or (lambda s: None), progress).run()


def run_file(path, config: Config, emit=None, progress=None, records=None) -> FileResult:
    """Parse (unless ``records`` are given) and run one file; apply rewrites if asked."""
    if records is None:
        try:
            records = parse_file(path)
        except (ParseError, OSError, UnicodeDecodeError) as e:
            res = FileResult(path, failed=1)
            res.failures.append(Failure(path, getattr(e, "line", 0), "",
                                        f"cannot parse: {e}"))
            if config.junit:
                res.cases.append((path, getattr(e, "line", 0), "failed", f"cannot parse: {e}"))
            res.stopped = config.fail_fast
            return res
    res = run_records(path, records, config, emit, progress)
    if config.rewrite and res.edits:
        for p, edits in res.edits.items():
            apply_edits(p, edits)
    return res


def apply_edits(path: str, edits) -> None:
    """Replace each (start, end, text) span of the file (character offsets of the text as
    read with newline=''), keeping every other character as it was."""
    with open(path, encoding="utf-8", newline="") as f:
        text = f.read()
    out = []
    pos = 0
    for start, end, new in sorted(edits):
        if start < pos:
            continue  # overlapping edit of the same span: keep the first
        out.append(text[pos:start])
        if new and start > 0 and start == len(text) and not text.endswith(("\n", "\r")):
            new = "\n" + new          # ---- was the last line, without a newline
        if new.endswith("\n") and end == len(text) and not text.endswith("\n") and \
                end > start:
            new = new.rstrip("\r\n")  # the file did not end with a newline: keep it so
        out.append(new)
        pos = end
    out.append(text[pos:])
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write("".join(out))
