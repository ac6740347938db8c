"""Key bindings of the shell (prompt_toolkit), in the spirit of pgcli's ``key_bindings``.

Owns: Enter (accept a selected completion; otherwise submit the buffer when the completeness
rule says it is complete, else insert a newline), a bracketed paste (inserted; submitted when
it ends with a newline and the buffer is then complete), Alt-Enter / Esc-Enter (always a newline),
Ctrl-Space (open completion), Tab (complete or indent).

Invariant: Enter never submits an incomplete statement, and never swallows a newline the
user asked for; reverse search (Ctrl-R) and the other defaults are left untouched.

Deliberately not here: what "complete" means (``complete.is_complete``), running anything.
"""
from __future__ import annotations

from typing import Callable

from prompt_toolkit.filters import Condition, has_completions, is_searching
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.keys import Keys


def build_key_bindings(is_complete: Callable[[str], bool]) -> KeyBindings:
    kb = KeyBindings()

    @Condition
    def completion_selected() -> bool:
        from prompt_toolkit.application import get_app
        state = get_app().current_buffer.complete_state
        return bool(state and state.current_completion)

    @kb.add("enter", filter=~is_searching & completion_selected)
    def _(event):
        buf = event.current_buffer
        buf.complete_state = None

    @kb.add("enter", filter=~is_searching & ~completion_selected)
    def _(event):
        buf = event.current_buffer
        if is_complete(buf.text):
            buf.validate_and_handle()
        else:
            buf.insert_text("\n")

    @kb.add("escape", "enter")
    def _(event):
        event.current_buffer.insert_text("\n")

    @kb.add(Keys.BracketedPaste)
    def _(event):
        """A pasted block that ends with a newline runs when it is complete, as if its last
        Enter had been typed (it waited for another Enter)."""
        data = event.data.replace("\r\n", "\n").replace("\r", "\n")
        buf = event.current_buffer
        if data.endswith("\n") and is_complete(buf.text[:buf.cursor_position] + data):
            buf.insert_text(data.rstrip("\n"))
            if is_complete(buf.text):
                buf.validate_and_handle()
                return
            buf.insert_text("\n")
            return
        buf.insert_text(data)

    @kb.add("c-space")
    def _(event):
        buf = event.current_buffer
        if buf.complete_state:
            buf.complete_next()
        else:
            buf.start_completion(select_first=False)

    @kb.add("tab", filter=~has_completions)
    def _(event):
        buf = event.current_buffer
        before = buf.document.current_line_before_cursor
        if not before.strip():
            buf.insert_text("    ")
        else:
            buf.start_completion(select_first=True)

    return kb
