"""chat/live/stream.py: frames that carry only what is new, and the snapshot of a stream."""

from __future__ import annotations

import pytest
from django.template.loader import render_to_string

from chat.live import stream as stream_module
from chat.live.stream import StreamState, advance, due, finish, snapshot
from history import services
from history.markup.render import render_markdown
from history.models import Message

ANSWER = (
    "Here is **greet** from `src/app.py`, with a paragraph long enough to stream in pieces.\n\n"
    "```python\ndef greet(name):\n\n    return f'hello {name}'\n```\n\n"
    "## Why\n\nIt returns a greeting.\n\n- one\n- two\n\nThe end."
)


def stream(text: str, step: int = 20, render=render_markdown) -> tuple[StreamState, list[str]]:
    state, frames = StreamState("t1"), []
    for end in [*range(step, len(text), step), len(text)]:
        state, frame = advance(state, text[:end], render)
        frames.append(frame)
    return state, frames


def test_the_first_frame_draws_the_body_with_the_text_so_far_in_a_tail():
    _, frame = advance(StreamState("t1"), "Hello")
    assert 'id="msg-t1-body"' in frame and 'hx-swap-oob="outerHTML"' in frame
    assert 'id="msg-t1-tail"' in frame and ">Hello</div>" in frame


def test_a_frame_appends_only_the_new_text_to_the_tail():
    state, _ = advance(StreamState("t1"), "Hello")
    _, frame = advance(state, "Hello, world")
    assert 'hx-swap-oob="beforeend:#msg-t1-tail"' in frame
    assert ">, world</span>" in frame
    assert "Hello" not in frame


def test_nothing_new_sends_nothing():
    state, _ = advance(StreamState("t1"), "Hello")
    assert advance(state, "Hello")[1] == ""


def test_a_final_block_goes_in_before_the_tail_and_the_tail_starts_again():
    state, _ = advance(StreamState("t1"), "First paragraph.")
    _, frame = advance(state, "First paragraph.\n\nSecond")
    assert 'hx-swap-oob="beforebegin:#msg-t1-tail"' in frame
    assert "<p>First paragraph.</p>" in frame
    assert ">Second</div>" in frame


def test_every_block_is_rendered_once_and_sent_once():
    rendered: list[str] = []

    def render(source: str) -> str:
        rendered.append(source)
        return render_markdown(source)

    state, frames = stream(ANSWER, render=render)
    first_block = render_markdown("Here is **greet** from `src/app.py`")[:-5]
    assert sum(frame.count(first_block) for frame in frames) == 1
    assert "".join(rendered) == ANSWER[: state.open_at]
    assert len(rendered) == len(state.blocks)


def test_the_wire_grows_with_the_answer_not_with_its_square():
    _, short = stream(ANSWER * 10)
    _, long = stream(ANSWER * 40)
    # Each frame is its new content in a wrapper of fixed size (here a frame per 20 characters).
    assert sum(map(len, long)) < 2 * len(render_markdown(ANSWER * 40)) + 80 * len(long)
    assert sum(map(len, long)) < 4.4 * sum(map(len, short))


def test_code_is_highlighted_only_once_its_fence_closes():
    code = "Intro.\n\n```python\ndef greet(name):\n    return name\n"
    state, frames = stream(code, step=5)
    assert not any('class="k"' in frame for frame in frames)
    assert "<pre" in snapshot(state) and "def greet(name):" in snapshot(state)
    _, frame = advance(state, code + "```\n")
    assert '<span class="k">def</span>' in frame


def test_a_long_fence_is_highlighted_as_soon_as_its_closing_line_comes():
    code = "```python\n" + "".join(f"def f{n}(x):\n    return {n}\n" for n in range(300))
    state, _ = stream(code, step=80)
    assert state.blocks == ()
    state, frame = advance(state, code + "```\n")
    assert len(state.blocks) == 1 and '<span class="k">def</span>' in frame


def test_an_open_fence_shows_as_escaped_text_without_its_opening_line():
    state, frame = advance(StreamState("t1"), "```html\n<b>bold</b>")
    assert '<pre class="tail" id="msg-t1-tail"' in frame
    assert "&lt;b&gt;bold&lt;/b&gt;" in frame and "```" not in frame


def test_sanitizing_still_applies_to_every_block_and_the_tail():
    text = (
        "<script>alert(1)</script>\n\n[x](javascript:alert(1))\n\n"
        '<img src=x onerror="alert(1)">\n\n<script>open</script>'
    )
    _, frames = stream(text, step=7)
    wire = "".join(frames)
    assert "<script" not in wire and "<img" not in wire
    assert 'href="javascript' not in wire
    assert "&lt;script&gt;" in wire


def test_only_a_frame_with_blocks_to_find_parses_or_renders_markdown():
    state, _ = advance(StreamState("t1"), "Hello")
    assert due(StreamState("t1"), "Hello")  # the first frame draws the body
    assert not due(state, "Hello, world")  # the tail grows: string work only
    assert due(state, "Hello, world.\n\nNext")  # a paragraph may have ended
    assert due(state, "Something else")  # rewritten


def test_the_finish_renders_only_what_follows_the_final_blocks():
    rendered: list[str] = []

    def render(source: str) -> str:
        rendered.append(source)
        return render_markdown(source)

    state, _ = stream(ANSWER, render=render)
    count = len(rendered)
    rest = finish(state, ANSWER + "!", render)
    assert rendered[count:] == [ANSWER[state.open_at :] + "!"]
    assert "".join(state.blocks) + rest == render_markdown(ANSWER + "!")
    assert finish(None, ANSWER) is None and finish(state, "Rewritten.") is None


def test_an_open_fence_is_parsed_again_only_at_a_line_that_may_close_it(monkeypatch):
    splits: list[int] = []
    original = stream_module.split_final

    def split_final(text: str, start: int = 0):
        splits.append(len(text))
        return original(text, start)

    monkeypatch.setattr(stream_module, "split_final", split_final)
    code = "```python\n" + "".join(f"x = {n}\n" for n in range(200))
    state, _ = stream("Intro.\n\n" + code + "```\n\nAfter.", step=6)
    assert len(splits) <= 6  # the intro, the fence's first line, its closing line, the end
    assert state.blocks[-1].startswith("<pre><code") and "199</span>" in state.blocks[-1]


def test_a_rewritten_answer_is_drawn_again():
    state, _ = advance(StreamState("t1"), "First paragraph.\n\nSecond")
    state, frame = advance(state, "Something else entirely.")
    assert 'id="msg-t1-body"' in frame and "First paragraph" not in frame
    assert state.blocks == ()


def test_the_snapshot_draws_the_final_blocks_and_the_tail_without_rendering_again():
    rendered: list[str] = []

    def render(source: str) -> str:
        rendered.append(source)
        return render_markdown(source)

    state, _ = stream(ANSWER, render=render)
    count = len(rendered)
    frame = snapshot(state)
    assert len(rendered) == count
    assert frame.startswith('<div class="body" id="msg-t1-body"')
    assert 'hx-swap-oob="outerHTML"' in frame
    assert "".join(state.blocks) in frame
    assert "- one\n- two\n\nThe end.</div>" in frame


@pytest.mark.django_db
def test_a_page_drawn_mid_answer_has_the_ids_the_stream_frames_target(settings):
    settings.ACDC_EDITS = True
    session = services.session_create(repository="x", model="acdc/fake")
    fields = {"session": session, "role": "assistant"}
    streaming = Message(id="m2", status="streaming", turn_id="t1", content="Half an", **fields)
    done = Message(id="m1", status="complete", turn_id="t0", content="Done.", **fields)
    page = render_to_string("chat/_message.html", {"message": streaming, "html": "<p>Half</p>"})
    assert 'id="msg-t1"' in page and 'id="msg-t1-body"' in page
    # The turn's edit cards go where the stream sends them; the stored reply's section
    # comes with the finished frame (two would share one id).
    assert 'id="msg-t1-edits"' in page and "edits-m2" not in page
    page = render_to_string("chat/_message.html", {"message": done, "html": "<p>Done.</p>"})
    assert 'id="message-m1"' in page and "msg-t0" not in page
    assert 'id="edits-m1"' in page
