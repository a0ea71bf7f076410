"""Seed 001 §4.1 metadata lines and the §4.3 auto-collapse window."""

from __future__ import annotations

import pytest

from contextcore.objectview import (
    PoolItem,
    ToolOutput,
    active_label,
    collapsed,
    is_active_label,
    metadata_line,
    metadata_lines,
)


@pytest.mark.parametrize(
    ("item", "line"),
    [
        (
            PoolItem("abc", "file", "src/app.py", char_count=12),
            "id=abc type=file path=src/app.py file_type=py char_count=12",
        ),
        (
            PoolItem("abc", "file", "src/empty.py", char_count=0),
            "id=abc type=file path=src/empty.py file_type=py char_count=0",
        ),
        (
            PoolItem("abc", "file", "Makefile", stub=True),
            "id=abc type=file path=Makefile file_type= [unread]",
        ),
        (
            PoolItem("abc", "file", "gone.md", stub=True, deleted=True),
            "id=abc type=file path=gone.md file_type=md [deleted]",
        ),
        (
            PoolItem("toolcall:s:c1", "toolcall", tool="grep", status="fail"),
            "id=toolcall:s:c1 type=toolcall tool=grep status=fail",
        ),
    ],
)
def test_metadata_lines_follow_the_seed(item, line):
    assert metadata_line(item) == line


def test_active_labels_are_recognised():
    assert active_label("toolcall:s:c1") == "ACTIVE_CONTENT id=toolcall:s:c1"
    assert is_active_label(active_label("x")) and not is_active_label("src/app.py")


def _outputs(turns):
    return [ToolOutput(f"t{turn}-{i}", turn) for turn, count in turns for i in range(count)]


def test_the_window_keeps_the_last_three_turns():
    outputs = _outputs([(0, 1), (1, 1), (2, 1), (3, 1)])
    assert collapsed(outputs, current_turn=3) == {"t0-0"}
    assert collapsed(outputs, current_turn=5) == {"t0-0", "t1-0", "t2-0"}


def test_the_window_keeps_the_newest_five_per_turn():
    outputs = _outputs([(4, 7)])
    assert collapsed(outputs, current_turn=4) == {"t4-0", "t4-1"}


def test_pinned_outputs_are_never_collapsed():
    outputs = [ToolOutput("old", 0, pinned=True), *_outputs([(9, 6)])]
    assert collapsed(outputs, current_turn=9) == {"t9-0"}


def test_the_window_sizes_are_configurable():
    outputs = _outputs([(0, 2), (1, 2)])
    assert collapsed(outputs, current_turn=1, per_turn=1, turns_back=1) == {"t0-0", "t0-1", "t1-0"}


def test_only_the_newest_unread_stubs_are_listed():
    items = [PoolItem("a", "file", "a.py", char_count=3)]
    items += [PoolItem(f"s{n}", "file", f"s{n}.py", stub=True) for n in range(5)]
    lines = metadata_lines(items, max_unread=2)
    assert lines[0].startswith("id=a ")
    assert [line.split()[0] for line in lines[1:3]] == ["id=s3", "id=s4"]
    assert lines[-1] == "[3 older unread paths not listed; list_files or grep finds them again]"
    assert len(metadata_lines(items)) == 6  # under the default cap nothing is hidden
