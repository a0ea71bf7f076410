"""chat/live/blocks.py: which blocks of a streaming answer are final, and that rendering them
one by one gives the HTML of rendering the whole answer."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chat.live.blocks import split_final
from chat.live.stream import StreamState, advance
from history.markup.render import render_markdown


def final(text: str) -> list[str]:
    return list(split_final(text).final)


def test_a_paragraph_is_final_once_a_blank_line_follows_it():
    assert final("One paragraph\nstill going") == []
    assert final("One paragraph\nstill going\n") == []
    assert final("One paragraph\n\nTwo") == ["One paragraph\n\n"]


def test_a_blank_line_inside_a_fence_does_not_end_it():
    text = "```python\ndef f():\n\n    return 1\n\n"
    assert final(text) == []
    assert final(text + "```") == []  # the closing line is not complete yet
    assert final(text + "```\n") == [text + "```\n"]


def test_an_unclosed_fence_stays_open_whatever_follows():
    text = "```\ncode\n\n# not a heading\n\n- not a list\n\nmore\n"
    assert final(text) == []
    assert split_final(text).open_at == 0


def test_a_fence_closes_only_with_its_own_kind_and_length():
    assert final("~~~\n```\n~~~\n") == ["~~~\n```\n~~~\n"]
    assert final("````md\n```\nnested\n```\n") == []
    assert final("````md\n```\nnested\n```\n````\n") == ["````md\n```\nnested\n```\n````\n"]
    assert final("```\nx\n    ```\n") == []  # indented four spaces: still code


def test_a_heading_is_final_as_soon_as_its_line_is_complete():
    assert final("## Setup") == []
    assert final("## Setup\n") == ["## Setup\n"]
    assert final("Title\n") == []  # may become a setext heading
    assert final("Title\n=====\n") == ["Title\n=====\n"]


def test_a_list_goes_on_across_blank_lines_until_another_block_starts():
    text = "- one\n\n- two\n\n"
    assert final(text) == []
    assert final(text + "  still two\n\n") == []
    assert final(text + "After the list\n") == [text]


def test_a_partial_line_decides_nothing():
    # "1" may become "1. second item" of the same list.
    assert final("1. first\n\n1") == []
    assert final("1. first\n\n1. second\n\nDone\n") == ["1. first\n\n1. second\n\n"]


def test_the_final_blocks_are_the_text_before_the_open_block():
    text = "# Title\n\nIntro.\n\n```sh\nls\n```\n\n- a\n- b\n\nOpen"
    split = split_final(text)
    assert "".join(split.final) == text[: split.open_at]
    assert text[split.open_at :] == "- a\n- b\n\nOpen"


def test_a_split_can_start_where_an_earlier_one_ended():
    text = "Intro.\n\n## Next\n\nBody\n\n"
    first = split_final(text[:8])
    rest = split_final(text, first.open_at)
    assert first.final + rest.final == split_final(text).final


def test_windows_line_ends_split_like_unix_ones():
    assert final("a\r\nb\r\n\r\nc\r\n") == ["a\r\nb\r\n\r\n"]


# -- rendering block by block equals rendering the whole --------------------------------

_WORDS = st.sampled_from(
    [
        "acdc",
        "streams",
        "**bold**",
        "`code`",
        "*it*",
        "[a link](https://example.org)",
        "x < y",
        "a_b",
        "~~gone~~",
        "1.",
        "-",
        "#",
        "|",
        "&amp;",
        "<b>raw</b>",
        "\\*",
    ]
)
_LINE = st.lists(_WORDS, min_size=1, max_size=6).map(" ".join)
_CODE_LINE = st.sampled_from(
    ["def f(x):", "    return x", "", "    ", "# comment", "```not closing", "~~~", "x = 1  # ok"]
)


@st.composite
def _fence(draw) -> str:
    marker = draw(st.sampled_from(["```", "````", "~~~"]))
    info = draw(st.sampled_from(["", "python", "sh", "nosuchlanguage"]))
    body = draw(st.lists(_CODE_LINE, max_size=6))
    closed = draw(st.booleans())
    return "\n".join([marker + info, *body, *([marker] if closed else [])])


@st.composite
def _list(draw) -> str:
    marker = draw(st.sampled_from(["- ", "* ", "1. ", "2) "]))
    items = draw(st.lists(_LINE, min_size=1, max_size=4))
    gap = draw(st.sampled_from(["\n", "\n\n"]))
    nested = draw(st.sampled_from(["", "\n   - nested", "\n\n   continued"]))
    return gap.join(marker + item for item in items) + nested


_BLOCK = st.one_of(
    _LINE,
    st.lists(_LINE, min_size=2, max_size=3).map("\n".join),
    _LINE.map(lambda line: "## " + line),
    _LINE.map(lambda line: line + "\n---"),
    _fence(),
    _list(),
    st.lists(_LINE, min_size=1, max_size=3).map(lambda ls: "\n".join("> " + x for x in ls)),
    st.just("| a | b |\n|---|:-:|\n| 1 | 2 |"),
    st.just("***"),
    st.just("    indented code\n\n    more of it"),
)
_GAP = st.sampled_from(["\n", "\n\n", "\n\n\n", "\n \n"])


@st.composite
def _answer(draw) -> str:
    blocks = draw(st.lists(_BLOCK, min_size=1, max_size=7))
    gaps = draw(st.lists(_GAP, min_size=len(blocks), max_size=len(blocks)))
    return "".join(b + g for b, g in zip(blocks, gaps, strict=True))[: -1 or None]


# Line soup: the awkward lines of markdown in any order, to find interactions no grammar has.
_SOUP_LINE = st.sampled_from(
    [
        "text",
        "more text",
        "",
        "   ",
        "- item",
        "  - nested",
        "1. one",
        "2. two",
        "1",
        "> quote",
        ">",
        "```",
        "```py",
        "~~~",
        "````",
        "    code",
        "# h",
        "===",
        "---",
        "***",
        "| a | b |",
        "|---|---|",
        "   lazy",
        "\t- tab",
        "* star",
        "+ plus",
        "<div>",
        "[ref]: https://x.org",
    ]
)


def _stream(text: str, cuts: list[int]) -> StreamState:
    state = StreamState("t1")
    for cut in sorted(set(cuts)):
        state, _ = advance(state, text[:cut])
        whole = render_markdown(text)
        assert whole.startswith("".join(state.blocks)), "a final block changed later"
    state, _ = advance(state, text)
    return state


def _check_equivalent(text: str, cuts: list[int]) -> None:
    state = _stream(text, cuts)
    streamed = "".join(state.blocks) + render_markdown(text[state.open_at :])
    assert streamed == render_markdown(text)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), text=_answer())
def test_rendering_the_final_blocks_one_by_one_equals_rendering_the_whole(data, text):
    cuts = data.draw(st.lists(st.integers(0, len(text)), max_size=12))
    _check_equivalent(text, cuts)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), lines=st.lists(_SOUP_LINE, min_size=1, max_size=14))
def test_any_mix_of_markdown_lines_streams_to_the_same_html(data, lines):
    text = "\n".join(line for line in lines if not line.startswith("[ref]"))
    cuts = data.draw(st.lists(st.integers(0, len(text)), max_size=12))
    _check_equivalent(text, cuts)


@pytest.mark.parametrize("text", ["# |\n---", "# a | b\n--- | ---\n| 1 | 2 |", "x\n\n# |\n---\n"])
def test_a_heading_line_with_a_pipe_waits_for_the_line_that_may_make_it_a_table(text):
    """markdown-it reads a one-line heading followed by a delimiter row as a table's
    header: such a heading is not final on its own (found by the property test)."""
    for cut in range(len(text) + 1):
        _check_equivalent(text, [cut])


def test_streaming_one_character_at_a_time_equals_rendering_the_whole():
    text = (
        "# Plan\n\nFirst we read `app.py`:\n\n```python\ndef greet(name):\n\n"
        "    return f'hi {name}'\n```\n\n1. one\n2. two\n\n   more of two\n\n"
        "> a quote\n> goes on\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n~~~~\n~~~\n~~~~\nEnd."
    )
    _check_equivalent(text, list(range(len(text))))
