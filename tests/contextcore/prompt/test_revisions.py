from __future__ import annotations

from contextcore.prompt.revisions import (
    apply_diff,
    format_file_block,
    make_diff,
    read_current_files,
)


def test_a_diff_applies_back_to_the_new_text():
    old = "".join(f"line {i}\n" for i in range(50))
    new = old.replace("line 10\n", "changed\n").replace("line 40\n", "") + "tail\n"
    assert apply_diff(old, make_diff(old, new)) == new


def test_no_diff_is_offered_when_it_could_not_be_applied_exactly():
    assert make_diff("a\n", "b") is None and make_diff("a\r\n", "b\r\n") is None


def test_read_current_files_uses_the_version_the_manifest_names():
    messages = [
        {"role": "user", "content": format_file_block("a.py", "old\n", 1)},
        {"role": "user", "content": format_file_block("a.py", "new\n", 2)},
        {"role": "user", "content": "# Current context\n- a.py: version 2"},
    ]
    assert read_current_files(messages) == {"a.py": "new\n"}
