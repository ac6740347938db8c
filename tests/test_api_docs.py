"""Every ``python`` block of docs/API.md runs as written (each in a fresh namespace)."""
from __future__ import annotations

import pathlib
import re

import pytest

DOC = pathlib.Path(__file__).resolve().parent.parent / "docs" / "API.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)


def test_the_page_has_examples_for_each_use():
    text = DOC.read_text()
    for heading in ("## Connecting", "## Querying", "## Parameters", "## Transactions", "## Errors",
                    "## Interrupting", "## System parameters", "## Subscribe"):
        assert heading in text, heading
    assert len(BLOCKS) >= 7


@pytest.mark.parametrize("i", range(len(BLOCKS)))
def test_example_runs(i, capsys):
    exec(compile(BLOCKS[i], f"docs/API.md block {i + 1}", "exec"), {"__name__": f"api_doc_{i}"})
