"""The interactive shell's pager: results taller than the screen go through ``$PAGER``.

Owns: the rule for when to page (``should_page``: paging is on (``\\pset pager``), results go
to the terminal (not ``\\o FILE``), stdout is a terminal, and the text has more lines than
the screen has rows minus the prompt line), which command pages (``pager_command``:
``$PAGER`` when set, an empty ``$PAGER`` meaning none, else ``less -FRSX`` when ``less``
is installed), and running it (``page``: the text on the pager's stdin, the pager writing
to the terminal; when it cannot be started the caller prints the text itself).

Invariant: paging never loses output: ``page`` returns False whenever the text was not
handed to a pager that ran, and the caller then writes it as usual.

Deliberately not here: batch mode (``main`` never installs a pager: ``-c``/``-f``/piped
input are not paged), streamed SUBSCRIBE rows (never paged), meta command output.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from typing import Callable, Mapping, Optional

DEFAULT_PAGER = "less -FRSX"


def pager_command(env: Mapping[str, str] = os.environ,
                  which: Callable[[str], Optional[str]] = shutil.which) -> Optional[str]:
    """The command to page with, or None."""
    if "PAGER" in env:
        return env["PAGER"].strip() or None
    return DEFAULT_PAGER if which("less") else None


def should_page(text: str, *, enabled: bool, to_terminal: bool, screen_rows: Optional[int]) -> bool:
    """Page ``text``?  Only when enabled, written to a terminal, and taller than the screen."""
    if not enabled or not to_terminal or not screen_rows:
        return False
    return text.count("\n") > screen_rows - 1


def page(text: str, command: Optional[str]) -> bool:
    """Run ``command`` with ``text`` on its stdin; True when the pager ran."""
    if not command:
        return False
    try:
        proc = subprocess.Popen(command, shell=True, stdin=subprocess.PIPE, text=True, encoding="utf-8")
    except OSError:
        return False
    try:
        try:
            proc.communicate(text)
        except BrokenPipeError:  # the user quit the pager before reading everything
            pass
        except KeyboardInterrupt:  # Ctrl-C goes to the pager too; wait for it to leave
            proc.wait()
    finally:
        if proc.poll() is None:
            proc.wait()
    return proc.returncode != 127  # 127: the shell could not find the command
