"""SEARCH/REPLACE blocks in reply text: the shapes models write, garbage, and streaming."""

from __future__ import annotations

import json

import pytest

from contextcore.edits import parse_edit_blocks
from contextcore.paths import shown

BLOCK = "<<<<<<< SEARCH\n{old}=======\n{new}>>>>>>> REPLACE\n"


def block(old: str = "a = 1\n", new: str = "a = 2\n") -> str:
    return BLOCK.format(old=old, new=new)


def ops(text: str, **kwargs):
    return [(b.op.path, b.op.kind, b.op.old_text, b.op.new_text) for b in parse_edit_blocks(text)]


def test_it_reads_a_block_with_its_path_on_the_line_before_the_fence() -> None:
    text = f"Change it:\n\nsrc/app.py\n```python\n{block()}```\n"
    assert ops(text) == [("src/app.py", "replace", "a = 1\n", "a = 2\n")]
    assert parse_edit_blocks(text)[0].line == 5


def test_it_reads_paths_in_backticks_bold_headings_and_labels() -> None:
    for line in (
        "`src/app.py`",
        "**src/app.py**",
        "### src/app.py",
        "File: src/app.py",
        "**`src/app.py`**:",
        "In `src/app.py`:",
    ):
        assert ops(f"{line}\n```python\n{block()}```\n")[0][0] == "src/app.py", line


def test_it_reads_a_path_written_as_the_tools_show_an_odd_name() -> None:
    for name in ("new\nline.py", "a:b/mod.py", "with space/my mod.py", " edge .py"):
        quoted = shown(name, spaces=True)
        for line in (quoted, f"`{quoted}`", f"**{quoted}**:"):
            assert ops(f"{line}\n```python\n{block()}```\n")[0][0] == name, line


def test_it_reads_a_path_in_the_fences_info_string() -> None:
    assert ops(f"```python src/app.py\n{block()}```\n")[0][0] == "src/app.py"
    assert ops(f"```python:src/app.py\n{block()}```\n")[0][0] == "src/app.py"


def test_it_reads_a_path_inside_the_fence_and_a_block_without_a_fence() -> None:
    assert ops(f"```\nsrc/app.py\n{block()}```\n")[0][0] == "src/app.py"
    assert ops(f"src/app.py\n{block()}")[0][0] == "src/app.py"


def test_it_reads_several_blocks_per_reply_and_per_fence() -> None:
    x, p, m, s = (block(old, "new\n") for old in ("x\n", "p\n", "m\n", "s\n"))
    text = f"a.py\n```python\n{x}{p}```\n\nb.py\n```python\n{m}\nc.py\n{s}```\n"
    assert [(o[0], o[2]) for o in ops(text)] == [
        ("a.py", "x\n"),
        ("a.py", "p\n"),
        ("b.py", "m\n"),
        ("c.py", "s\n"),
    ]


def test_it_makes_an_empty_search_a_create() -> None:
    create = block("", "print(1)\n")
    assert ops(f"new.py\n```\n{create}```\n") == [("new.py", "create", "", "print(1)\n")]


def test_it_keeps_fences_and_markdown_inside_a_block_as_text() -> None:
    old = "Intro\n```sh\nmake\n```\n"
    edit = block(old, "Intro\n")
    text = f"README.md\n````markdown\n{edit}````\n"
    assert ops(text) == [("README.md", "replace", old, "Intro\n")]


def test_it_reports_an_unterminated_block_without_raising() -> None:
    [broken] = parse_edit_blocks("a.py\n```\n<<<<<<< SEARCH\nx\n=======\ny\n")
    assert broken.op is None and "no >>>>>>> REPLACE" in broken.error


def test_it_reports_a_block_without_a_path() -> None:
    [broken] = parse_edit_blocks(f"Here is the change:\n```python\n{block()}```\n")
    assert broken.op is None and "no file path" in broken.error


@pytest.mark.parametrize(
    "above", ["docs/my notes.md\n```\n", "**conf/a=b.ini**\n\n```ini\n", "`docs/my notes.md`\n"]
)
def test_a_bare_path_with_a_space_or_an_equals_sign_is_refused_with_the_form_that_reads(
    above: str,
) -> None:
    # Read bare, "Here is the change to app.py" would be a path too: a new file named so.
    name = "conf/a=b.ini" if "=" in above else "docs/my notes.md"
    [broken] = parse_edit_blocks(f"{above}{block()}")
    assert broken.op is None and "no file path" in broken.error
    assert broken.error.endswith(f'if the path is "{name}", write it so, in double quotes)')
    [read] = parse_edit_blocks(f"{above.replace(name, json.dumps(name))}{block()}")
    assert read.op is not None and read.op.path == name


@pytest.mark.parametrize("line", [".gitignore", "`.gitignore`", "### .gitignore", '".gitignore"'])
def test_it_reads_a_dotfile_at_the_top_as_a_path(line: str) -> None:
    create = block("", "dist/\n")
    assert ops(f"{line}\n```\n{create}```\n") == [(".gitignore", "create", "", "dist/\n")]


@pytest.mark.parametrize("line", ["...", ".", "..", "x.", "'.'", ".5"])
def test_dots_alone_name_no_file(line: str) -> None:
    [broken] = parse_edit_blocks(f"{line}\n```\n{block()}```\n")
    assert broken.op is None and "no file path" in broken.error


def test_a_sentence_above_a_block_is_refused_and_never_read_as_a_path() -> None:
    for sentence in ("Here is the change to app.py", "Then edit src/app.py like so"):
        [broken] = parse_edit_blocks(f"{sentence}\n```\n{block()}```\n")
        assert broken.op is None and "no file path" in broken.error


def test_it_reports_a_block_cut_off_by_the_next_one_and_still_reads_that_one() -> None:
    text = f"a.py\n<<<<<<< SEARCH\nx\n=======\nb.py\n{block()}"
    first, second = parse_edit_blocks(text)
    assert "before the next SEARCH (line 6)" in first.error
    assert second.op is not None and second.op.path == "b.py"


def test_it_refuses_a_block_with_two_dividers_instead_of_guessing() -> None:
    edit = block("Title\n=======\n", "Name\n")
    [broken] = parse_edit_blocks(f"doc.rst\n{edit}")
    assert "2 ======= lines" in broken.error


def test_it_reports_a_stray_replace_marker() -> None:
    [broken] = parse_edit_blocks("text\n>>>>>>> REPLACE\n")
    assert "no SEARCH before it" in broken.error


def test_it_ignores_conflict_markers_and_dividers_that_are_not_blocks() -> None:
    assert parse_edit_blocks("<<<<<<< HEAD\nmine\n=======\ntheirs\n>>>>>>> main\n") == []


def test_it_reports_an_open_block_only_once_the_text_is_final() -> None:
    assert parse_edit_blocks("a.py\n<<<<<<< SEARCH\nx\n", final=False) == []
    [broken] = parse_edit_blocks("a.py\n<<<<<<< SEARCH\nx\n")
    assert "no >>>>>>> REPLACE" in broken.error


def test_it_never_raises_on_garbage() -> None:
    for text in (
        "",
        "\n\n",
        "=======",
        "<<<<<<< SEARCH",
        "```\n<<<<<<< SEARCH\n=======\n```",
        ">>>>>>> REPLACE\n<<<<<<< SEARCH\n",
        "\r\n<<<<<<< SEARCH\r\n=\r\n",
    ):
        parse_edit_blocks(text)
        parse_edit_blocks(text, final=False)
