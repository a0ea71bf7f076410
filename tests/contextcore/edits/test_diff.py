"""Unified diffs for display, and applying some hunks of a change but not others."""

from __future__ import annotations

from contextcore.edits import apply_hunks, diff_hunks, unified_diff

BEFORE = "".join(f"line {n}\n" for n in range(1, 21))
AFTER = BEFORE.replace("line 2\n", "line two\n").replace("line 18\n", "line 18\nline 18b\n")


def test_it_cuts_a_change_into_hunks_with_counts_and_headers() -> None:
    first, second = diff_hunks(BEFORE, AFTER)
    assert (first.header(), first.added, first.removed) == ("@@ -1,5 +1,5 @@", 1, 1)
    assert (second.header(), second.added, second.removed) == ("@@ -16,5 +16,6 @@", 1, 0)
    assert first.lines[:3] == (" line 1", "-line 2", "+line two")


def test_it_writes_a_unified_diff_and_dev_null_for_a_new_file() -> None:
    assert unified_diff("a.py", BEFORE, BEFORE) == ""
    assert unified_diff("new.py", None, "x\n") == "--- /dev/null\n+++ b/new.py\n@@ -0,0 +1 @@\n+x\n"
    assert unified_diff("a.py", "x\n", None).startswith("--- a/a.py\n+++ /dev/null\n")


def test_it_diffs_a_crlf_file_without_showing_line_endings() -> None:
    [hunk] = diff_hunks("a\r\nb\r\n", "a\r\nc\r\n")
    assert hunk.lines == (" a", "-b", "+c")


def test_it_applies_only_the_accepted_hunks() -> None:
    assert apply_hunks(BEFORE, AFTER, {0, 1}) == AFTER
    assert apply_hunks(BEFORE, AFTER, set()) == BEFORE
    assert apply_hunks(BEFORE, AFTER, {1}) == BEFORE.replace("line 18\n", "line 18\nline 18b\n")
