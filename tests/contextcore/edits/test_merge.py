"""The three-way merge on lines: what `git merge-file` merges, and what it calls a conflict."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from contextcore.edits.merge import Conflict, merge3

BASE = "a\nb\nc\nd\ne\n"


def test_it_merges_changes_in_separate_regions() -> None:
    merged = merge3(BASE, "A\nb\nc\nd\ne\n", "a\nb\nc\nd\nE\n")
    assert merged.text == "A\nb\nc\nd\nE\n"


def test_it_takes_the_same_change_made_on_both_sides_once() -> None:
    assert merge3(BASE, "a\nB\nc\nd\ne\n", "a\nB\nc\nd\ne\n").text == "a\nB\nc\nd\ne\n"


def test_it_calls_different_changes_to_one_line_a_conflict_and_gives_no_text() -> None:
    merged = merge3(BASE, "a\nB\nc\nd\ne\n", "a\nX\nc\nd\ne\n")
    assert (merged.text, merged.conflicts) == (None, (Conflict(2, 2),))


def test_it_calls_touching_changes_a_conflict_as_git_does() -> None:
    merged = merge3(BASE, "a\nB\nc\nd\ne\n", "a\nb\nC\nd\ne\n")
    assert (merged.text, merged.conflicts) == (None, (Conflict(2, 3),))


def test_it_merges_lines_added_and_removed_on_the_two_sides() -> None:
    ours = "top\na\nb\nc\nd\ne\n"
    theirs = "a\nb\nd\ne\nend\n"
    assert merge3(BASE, ours, theirs).text == "top\na\nb\nd\ne\nend\n"


def test_it_keeps_crlf_lines_and_a_missing_final_newline() -> None:
    base, ours, theirs = "a\r\nb\r\nc", "A\r\nb\r\nc", "a\r\nb\r\nC"
    assert merge3(base, ours, theirs).text == "A\r\nb\r\nC"


def test_a_side_that_changed_nothing_gives_the_other_side() -> None:
    assert merge3(BASE, BASE, "x\n").text == "x\n"
    assert merge3(BASE, "y\n", BASE).text == "y\n"


def test_a_large_file_changed_at_both_ends_merges_a_change_in_the_middle() -> None:
    # Large enough that the middle is anchored on lines standing once (with many blank and
    # repeated lines, as real files have), not compared all with all.
    block = "def f{n}():\n    return None\n\n"
    base = "".join(block.format(n=n) for n in range(400))
    ours = "# top\n" + base.replace("def f3():", "def f3(x):") + "# end\n"
    theirs = base.replace("def f200():\n    return None", "def f200():\n    return 200")
    expected = ours.replace("def f200():\n    return None", "def f200():\n    return 200")
    assert merge3(base, ours, theirs).text == expected


def test_a_large_file_with_overlapping_changes_is_a_conflict() -> None:
    base = "".join(f"line {n}\n\n" for n in range(400))
    ours = base.replace("line 200\n", "line 200 (mine)\n")
    theirs = base.replace("line 200\n", "line 200 (theirs)\n")
    assert merge3(base, ours, theirs).conflicts == (Conflict(401, 401),)


lines = st.lists(st.sampled_from(["a\n", "b\n", "\n", "c\n", "d\r\n"]), max_size=40)


@settings(max_examples=200, deadline=None)
@given(lines, lines, lines)
def test_a_side_without_changes_always_gives_the_other(base, ours, theirs) -> None:
    base, ours, theirs = "".join(base), "".join(ours), "".join(theirs)
    assert merge3(base, ours, base).text == ours
    assert merge3(base, base, theirs).text == theirs
    assert merge3(base, ours, ours).text == ours
