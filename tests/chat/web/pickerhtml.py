"""Reading the Files panel's server-drawn HTML in tests: the states an answer names and a
file's row."""

from __future__ import annotations

import re


def answer_states(frame: str) -> dict[str, str]:
    """The rows and folders a choice's answer (or a tool's news) names: row key → data-sel."""
    return dict(re.findall(r'<i id="s([0-9A-Za-z_-]{11})"[^>]*? data-sel="(\w+)"', frame))


def file_row(html: str, path: str) -> str:
    """The row drawn for `path` (fails the test when there is none)."""
    found = re.search(
        rf'<div class="picker-row file[^"]*"[^>]*data-row="{re.escape(path)}".*?</div>', html
    )
    assert found, f"no row for {path}"
    return found.group(0)
