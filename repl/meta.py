"""Backslash (meta) commands of the ``mzlite`` shell and scripts, psql's names and messages.

Owns: ``\\q``, ``\\x [on|off|auto]``, ``\\timing [on|off]``, ``\\pset [format|null|footer|
pager|tuples_only] [value]``, ``\\d [name]``, ``\\dt``, ``\\dv``, ``\\dm``, ``\\di [name]``, ``\\i FILE``,
``\\o [FILE]``, ``\\watch [seconds] [count=N]``, ``\\set [name [value]]``, ``\\echo``, ``\\?``.
Catalog commands are answered through SQL (``SHOW TABLES``, ``SHOW COLUMNS FROM x``, ...),
never by reaching into the engine.

Invariant: a meta command changes only the ``Runner``'s presentation state (settings,
output stream, variables, quit flag) or runs SQL through the runner; a failing meta command
reports an error and leaves the session usable.

Deliberately not here: query-buffer commands (``\\r``, ``\\e``, ``\\p``: the shell owns the
buffer), variable interpolation into SQL (``interpolate``), ``\\copy``, ``\\c``.
"""
from __future__ import annotations

import shlex
import sys
import time
from typing import Callable

from repl import format as fmt

HELP = """\
General
  \\q                     quit mzlite
  \\? or \\help            show this help
Query buffer / input
  \\i FILE                execute commands from file
  \\copy T FROM|TO FILE   COPY table T from/to a local file (or stdin/stdout); COPY's options follow
  \\watch [SEC] [count=N] execute the last query every SEC seconds (default 2) until Ctrl-C
Output
  \\o [FILE]              send query results to file (or back to stdout)
  \\echo [TEXT]           write text to standard output
Formatting
  \\x [on|off|auto]       toggle expanded output
  \\pset format aligned|csv|tsv|json
  \\pset null TEXT        how NULL is shown
  \\pset pager [on|off]   page results taller than the screen ($PAGER, else less -FRSX)
  \\timing [on|off]       toggle timing of commands
Informational (through SHOW ...)
  \\d [NAME]              list relations, or describe NAME (SHOW COLUMNS FROM NAME)
  \\dt  \\dv  \\dm          list tables, views, materialized views
  \\di [NAME]             list indexes (on NAME)
Variables
  \\set [NAME [VALUE]]    set or list variables; SQL uses them as :NAME, :'NAME', :"NAME"

Statements end with ';'. Alt-Enter inserts a newline; Ctrl-R searches history;
Ctrl-C cancels a running statement or stops a SUBSCRIBE; Ctrl-D exits.
"""

COMMANDS: dict[str, Callable] = {}


def command(*names: str):
    def register(fn):
        for n in names:
            COMMANDS[n] = fn
        return fn
    return register


class MetaError(Exception):
    pass


def run(runner, line: str) -> bool:
    """Run one backslash command line.  True on success."""
    text = line.strip()
    if not text.startswith("\\"):
        runner.error(f"invalid command {text}\n")
        return False
    name, _, rest = text[1:].partition(" ")
    # psql accepts \x-style commands glued to a trailing ';' in scripts rarely; strip it.
    name = name.rstrip(";")
    try:
        args = shlex.split(rest.strip().rstrip(";")) if rest.strip() else []
    except ValueError as exc:
        runner.error(f"\\{name}: {exc}\n")
        return False
    fn = COMMANDS.get(name)
    if fn is None:
        runner.error(f'invalid command \\{name}\nTry \\? for help.\n')
        return False
    try:
        result = fn(runner, args)
    except MetaError as exc:
        runner.error(f"\\{name}: {exc}\n")
        return False
    return result is not False


def _onoff(value: str, current: bool) -> bool:
    v = value.lower()
    if v in ("on", "true", "yes", "1", "t", "y"):
        return True
    if v in ("off", "false", "no", "0", "f", "n"):
        return False
    raise MetaError(f'unrecognized value "{value}": Boolean expected')


@command("q", "quit")
def _quit(runner, args):
    runner.quit_requested = True


@command("?", "help")
def _help(runner, args):
    runner.write(HELP)


@command("echo")
def _echo(runner, args):
    runner.write(" ".join(args) + "\n")


@command("x")
def _expanded(runner, args):
    s = runner.settings
    if not args:
        s.expanded = "off" if s.expanded in ("on", "auto") else "on"
    elif args[0].lower() == "auto":
        s.expanded = "auto"
    else:
        s.expanded = "on" if _onoff(args[0], s.expanded == "on") else "off"
    runner.write({"on": "Expanded display is on.\n", "off": "Expanded display is off.\n",
                  "auto": "Expanded display is used automatically.\n"}[s.expanded])


@command("timing")
def _timing(runner, args):
    runner.timing = (not runner.timing) if not args else _onoff(args[0], runner.timing)
    runner.write(f"Timing is {'on' if runner.timing else 'off'}.\n")


@command("pset")
def _pset(runner, args):
    s = runner.settings
    if not args:
        runner.write(f"expanded     {s.expanded}\nfooter       {'on' if s.footer else 'off'}\n"
                     f"format       {s.format}\nnull         '{s.null}'\n"
                     f"pager        {'on' if s.pager else 'off'}\n"
                     f"tuples_only  {'on' if s.tuples_only else 'off'}\n")
        return
    option, value = args[0], (args[1] if len(args) > 1 else None)
    if option == "format":
        if value is not None:
            matches = [f for f in fmt.FORMATS if f.startswith(value.lower())]
            if len(matches) != 1:
                raise MetaError("allowed formats are " + ", ".join(fmt.FORMATS))
            s.format = matches[0]
        runner.write(f"Output format is {s.format}.\n")
    elif option == "null":
        if value is not None:
            s.null = value
        runner.write(f'Null display is "{s.null}".\n')
    elif option == "footer":
        s.footer = (not s.footer) if value is None else _onoff(value, s.footer)
        runner.write(f"Default footer is {'on' if s.footer else 'off'}.\n")
    elif option == "pager":
        s.pager = (not s.pager) if value is None else _onoff(value, s.pager)
        runner.write(f"Pager usage is {'on' if s.pager else 'off'}.\n")
    elif option in ("tuples_only", "t"):
        s.tuples_only = (not s.tuples_only) if value is None else _onoff(value, s.tuples_only)
        runner.write(f"Tuples only is {'on' if s.tuples_only else 'off'}.\n")
    elif option == "expanded" or option == "x":
        return _expanded(runner, args[1:])
    else:
        raise MetaError(f"unknown option: {option}")


@command("t")
def _tuples_only(runner, args):
    return _pset(runner, ["tuples_only"] + args)


@command("a")
def _aligned_toggle(runner, args):
    runner.settings.format = "aligned"
    runner.write("Output format is aligned.\n")


@command("set")
def _set(runner, args):
    if not args:
        for k, v in sorted(runner.variables.items()):
            runner.write(f"{k} = '{v}'\n")
        return
    runner.variables[args[0]] = "".join(args[1:])


@command("unset")
def _unset(runner, args):
    for a in args:
        runner.variables.pop(a, None)


@command("i", "include")
def _include(runner, args):
    if not args:
        raise MetaError("missing required argument")
    return runner.run_file(args[0])


@command("o", "out")
def _out(runner, args):
    if runner.out is not runner.stdout:
        try:
            runner.out.close()
        except Exception:  # noqa: BLE001
            pass
    runner.out = runner.stdout
    if args:
        try:
            runner.out = open(args[0], "w", encoding="utf-8")
        except OSError as exc:
            raise MetaError(f"{args[0]}: {exc.strerror or exc}") from None


@command("copy")
def _copy(runner, args):
    """psql's ``\\copy``: COPY through this process's files or the shell's stdin/stdout, run
    as ``COPY ... FROM STDIN`` / ``TO STDOUT`` on ``Cursor.copy``."""
    words = list(args)
    lower = [w.lower() for w in words]
    at = next((i for i, w in enumerate(lower) if w in ("from", "to")), None)
    if at is None or at == 0 or at + 1 >= len(words):
        raise MetaError("parse error: expected \\copy TABLE [(COLUMNS)] FROM|TO FILE|STDIN|STDOUT [OPTIONS]")
    is_from = lower[at] == "from"
    source, target = " ".join(words[:at]), words[at + 1]
    rest = " ".join(words[at + 2:])
    sql = f"COPY {source} {'FROM STDIN' if is_from else 'TO STDOUT'} {rest}"
    local = target.lower() not in ("stdin", "stdout", "pstdin", "pstdout")
    try:
        cur = runner.connection().cursor()
        if is_from:
            if local:
                with open(target, "rb") as f:
                    data = f.read()
            else:
                lines = []
                for line in sys.stdin:
                    if line.rstrip("\r\n") == "\\.":
                        break
                    lines.append(line)
                data = "".join(lines).encode()
            with cur.copy(sql) as copy:
                copy.write(data)
        else:
            with cur.copy(sql) as copy:
                if local:
                    with open(target, "wb") as f:
                        for chunk in copy:
                            f.write(chunk)
                else:
                    for chunk in copy:
                        runner.write(chunk.decode())
    except OSError as exc:
        raise MetaError(f"{target}: {exc.strerror or exc}") from None
    except Exception as exc:  # noqa: BLE001 - a database error is printed as psql prints it
        runner.report(exc, sql)
        return False
    runner.write(f"{cur.statusmessage}\n")


@command("watch")
def _watch(runner, args):
    query = runner.last_query
    if not query:
        raise MetaError("\\watch cannot be used with an empty query")
    interval, count = 2.0, None
    for a in args:
        key, eq, val = a.partition("=")
        try:
            if eq and key in ("c", "count"):
                count = int(val)
            elif eq and key in ("i", "interval"):
                interval = float(val)
            else:
                interval = float(a)
        except ValueError:
            raise MetaError(f'incorrect interval value "{a}"') from None
    n = 0
    sleep = getattr(runner, "sleep", time.sleep)
    try:
        while True:
            runner.write(f"{time.strftime('%a %d %b %Y %I:%M:%S %p %Z')} (every {interval:g}s)\n\n")
            if not runner.run_statement(query):
                return False
            n += 1
            if count is not None and n >= count:
                return True
            sleep(interval)
    except KeyboardInterrupt:
        runner.write("\n")
        return True


# -- catalog (through SHOW) --------------------------------------------------------------

def _show(runner, sql: str, title: str | None = None) -> bool:
    try:
        result = runner.executor(sql)
    except Exception as exc:  # noqa: BLE001
        runner.report(exc, sql)
        return False
    if result.has_rows:
        runner.write(fmt.format_result(result.names, result.types, result.rows, runner.settings,
                                       runner.terminal_width(), title=title))
    return True


def _names(runner, sql: str) -> list[str]:
    try:
        result = runner.executor(sql)
    except Exception:  # noqa: BLE001 - an unsupported SHOW just lists nothing
        return []
    return [row[0] for row in (result.rows or [])]


RELATION_KINDS = (("SHOW TABLES", "table"), ("SHOW VIEWS", "view"),
                  ("SHOW MATERIALIZED VIEWS", "materialized view"))


@command("d", "d+")
def _describe(runner, args):
    if args:
        name = args[0]
        ok = _show(runner, f"SHOW COLUMNS FROM {name}", title=f'Relation "{name}"')
        if ok:
            idx = _names(runner, f"SHOW INDEXES ON {name}")
            if idx:
                runner.write("Indexes:\n" + "".join(f'    "{i}"\n' for i in idx) + "\n")
        return ok
    rows = []
    for sql, kind in RELATION_KINDS:
        rows.extend((n, kind) for n in _names(runner, sql))
    if not rows:
        runner.write("Did not find any relations.\n")
        return True
    rows.sort()
    runner.write(fmt.format_result(["Name", "Type"], ["text", "text"], rows, runner.settings,
                                   runner.terminal_width(), title="List of relations"))
    return True


@command("dt", "dt+")
def _dt(runner, args):
    return _show(runner, "SHOW TABLES")


@command("dv", "dv+")
def _dv(runner, args):
    return _show(runner, "SHOW VIEWS")


@command("dm", "dm+")
def _dm(runner, args):
    return _show(runner, "SHOW MATERIALIZED VIEWS")


@command("di", "di+")
def _di(runner, args):
    return _show(runner, f"SHOW INDEXES ON {args[0]}" if args else "SHOW INDEXES")
