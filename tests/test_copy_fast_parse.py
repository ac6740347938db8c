"""COPY FROM's fast parse (``mzlite.copy._plain_csv`` and the text format's equivalent):
lines with no quote, escape, NULL string or end marker are split on the delimiter in C, and
that gives exactly what the per-line parser gives, over random lines of the characters that
matter (delimiters, quotes, backslashes, newlines, the NULL strings, the end marker).
"""
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mzlite
from mzlite import copy as copy_module

_COLUMNS = [("a", "text"), ("b", "text"), ("c", "text")]
_SETTINGS = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
_piece = st.sampled_from(["1", "ab", ",", ",", '"', '""', "\\", "\\N", "N", "\\.", ".", "\n", "\r\n", "|", "NA", " "])
_text = st.lists(_piece, max_size=14).map("".join)
_options = st.sampled_from([
    [("format", "csv")], [("format", "csv"), ("null", "NA")], [("format", "csv"), ("delimiter", "|")],
    [("format", "csv"), ("force_not_null", ["b"])], [("format", "csv"), ("quote", "'")],
    [("format", "text")], [("format", "text"), ("null", "NA")], [("format", "text"), ("delimiter", "|")]])


def _parse(fmt, text):
    try:
        return ("ok", fmt.parse(text))
    except mzlite.Error as e:
        return ("error", e.sqlstate, str(e))


@_SETTINGS
@given(_options, _text)
def test_fast_parse_equals_the_per_line_parser(options, text):
    fmt = copy_module.CopyFormat(options, _COLUMNS, True)
    fast = _parse(fmt, text)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(copy_module, "_plain_csv", lambda *a: False)
        m.setattr(copy_module, "_plain_text", lambda *a: False)
        slow = _parse(fmt, text)
    assert fast == slow


@pytest.mark.parametrize("options, text", [([("format", "csv")], "1,2,x\n3,4,y\n"),
                                           ([("format", "text")], "1\t2\tx\n3\t4\ty\n")])
def test_plain_lines_are_split_in_c(monkeypatch, options, text):
    """The mechanism: plain lines never reach the per-line parser.  Sabotage: make
    ``_plain_csv`` (or ``_plain_text``) answer False; the per-line parser, made to fail
    here, is then called."""
    def per_line(*_a):
        raise AssertionError("per-line parser used")
    monkeypatch.setattr(copy_module.CopyFormat, "_text_lines", per_line)
    monkeypatch.setattr(copy_module.CopyFormat, "_csv_lines", per_line)
    fmt = copy_module.CopyFormat(options, _COLUMNS, True)
    rows, _lines = fmt.parse(text)
    assert rows == [("1", "2", "x"), ("3", "4", "y")]
