"""Edit ops from tool arguments: what a call asks for, and a clear refusal of a bad one."""

from __future__ import annotations

import pytest

from contextcore.edits import EditArgsError, EditOp, op_from_tool


def test_it_makes_a_replace_from_edit_file_arguments() -> None:
    args = {"path": "a.py", "old_text": "x", "new_text": "y", "replace_all": True}
    assert op_from_tool("edit_file", args, base_sha256="abc") == EditOp(
        "a.py", "replace", "x", "y", replace_all=True, base_sha256="abc"
    )


def test_it_makes_an_overwriting_create_from_write_file_arguments() -> None:
    op = op_from_tool("write_file", {"path": "a.py", "content": "x\n"})
    assert (op.kind, op.new_text, op.overwrite, op.source) == ("create", "x\n", True, "write_file")


def test_it_makes_an_edit_with_empty_old_text_a_create_that_overwrites_nothing() -> None:
    op = op_from_tool("edit_file", {"path": "a.py", "old_text": "", "new_text": "x\n"})
    assert (op.kind, op.overwrite) == ("create", False)


@pytest.mark.parametrize(
    ("name", "args", "says"),
    [
        ("edit_file", {"old_text": "x", "new_text": "y"}, "'path' is required"),
        ("edit_file", {"path": " ", "old_text": "x", "new_text": "y"}, "'path' is empty"),
        ("edit_file", {"path": "a", "old_text": 3, "new_text": "y"}, "'old_text' is required"),
        ("edit_file", {"path": "a", "old_text": "x", "new_text": "x"}, "the same"),
        (
            "edit_file",
            {"path": "a", "old_text": "x", "new_text": "y", "replace_all": "yes"},
            "true or false",
        ),
        ("write_file", {"path": "a"}, "'content' is required"),
        ("edit_file", ["a"], "must be an object"),
        ("run_shell", {}, "not an edit tool"),
    ],
)
def test_it_refuses_arguments_that_make_no_edit_with_a_reason(name, args, says) -> None:
    with pytest.raises(EditArgsError, match=says):
        op_from_tool(name, args)
