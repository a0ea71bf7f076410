from __future__ import annotations

from contextcore.prompt.revisions import (
    apply_diff,
    format_file_block,
    make_diff,
)
from tests.current_files import read_current_files


def test_a_diff_applies_back_to_the_new_text():
    old = "".join(f"line {i}\n" for i in range(50))
    new = old.replace("line 10\n", "changed\n").replace("line 40\n", "") + "tail\n"
    assert apply_diff(old, make_diff(old, new)) == new


def test_no_diff_is_offered_when_it_could_not_be_applied_exactly():
    assert make_diff("a\n", "b") is None


def test_a_crlf_files_diff_applies_back_byte_for_byte():
    # An edited CRLF file goes to the model as a diff too, not whole again (issue 22).
    old = "".join(f"line {i}\r\n" for i in range(30))
    new = old.replace("line 7\r\n", "seven\r\n").replace("line 20\r\n", "")
    diff = make_diff(old, new)
    assert diff is not None and "seven\r" in diff
    assert apply_diff(old, diff) == new
    mixed = "a\r\nb\nc\rd\n"
    assert apply_diff(mixed, make_diff(mixed, mixed.replace("b", "B"))) == mixed.replace("b", "B")


def test_read_current_files_uses_the_version_the_manifest_names():
    messages = [
        {"role": "user", "content": format_file_block("a.py", "old\n", 1)},
        {"role": "user", "content": format_file_block("a.py", "new\n", 2)},
        {"role": "user", "content": "# Current context\n- a.py: version 2"},
    ]
    assert read_current_files(messages) == {"a.py": "new\n"}
