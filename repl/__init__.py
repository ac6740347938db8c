"""The ``mzlite`` command: batch runner and interactive shell (psql's look, pgcli's parts).

Owns: ``main`` (command line and batch mode), ``format`` (psql output formats and error
reports), ``complete`` (where statements end), ``meta`` (backslash commands), ``shell``
(the prompt-toolkit loop), ``keys`` (key bindings) and ``completer`` (keywords and catalog
names).  Invariant: the engine is reached only through ``mzlite``'s public API (connect,
cursor, description, statusmessage, Error), so any PEP 249 connection with those works.
Deliberately not here: anything about how statements are planned or executed.
Importing this package imports nothing heavy (no prompt_toolkit, no engine).
"""
