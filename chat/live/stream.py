"""The answer of one turn as the browser has it while it streams, and the frames that grow it.

The message body holds the final blocks, each rendered once (`blocks.py` says which are
final), then the tail: the open block as escaped plain text (`<pre>` for an open code
fence). `advance` takes a state and the whole answer so far and returns the next state with
the frame that brings a tab from one to the other: new blocks go in before the tail
(`beforebegin:#msg-<turn>-tail`), and the tail grows by the new text or, once it holds
another block, is replaced. So a frame carries only what is new and the wire grows with
the answer, not with its square. Text that adds nothing visible (only white space) waits
for the next frame. `snapshot` draws the body from the HTML already rendered; `finish`
renders only the open rest once the answer is complete. Per-frame fragments are their
templates rendered once per turn around a slot (`_fill`), so growing the tail is string
work, and `due` says when a frame parses or renders markdown (the caller's cue to leave
the event loop). A tool card is a block too: `cut` makes the answer so far final and puts
the card after it, so what the model wrote before a call reads above the call's card, and
a snapshot draws the cards where they were. States are immutable. Non-goal: when frames
are sent (`frames.py`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from django.template.loader import render_to_string
from django.utils.html import escape

from chat.live.blocks import Split, fence_opening, split_final
from history.markup.render import render_markdown

Render = Callable[[str], str]

_BLANK_LINES = re.compile(r"(?:[ \t]*(?:\r\n?|\n))*")
_FENCE_CLOSING = re.compile(r"^ {0,3}(?:`{3,}|~{3,})[ \t]*\r?$", re.MULTILINE)
# A private-use character: no template and no escaping changes it, and model text holding
# it only lands inside the slot it fills.
_SLOT = "\ue000"


@dataclass(frozen=True, slots=True)
class StreamState:
    turn_id: str
    text: str = ""  # the answer as the tab shows it
    blocks: tuple[str, ...] = ()  # the HTML of its final blocks, in order
    open_at: int = 0  # where the open block starts: the final blocks are text[:open_at]
    parsed: int = 0  # text[:parsed] is the complete lines the last split saw
    tail_from: int = 0  # the tail shows text[tail_from:]
    code: bool = False  # the tail is an open code fence, shown without its opening line
    drawn: bool = False  # a tab that follows the frames has the body with a tail


def due(state: StreamState, text: str) -> bool:
    """Whether `advance(state, text)` would parse or render markdown; when not, it is a
    few string operations."""
    if not state.drawn or not text.startswith(state.text):
        return True
    return _worth_splitting(state, text, text.rfind("\n") + 1)


def advance(
    state: StreamState, text: str, render: Render = render_markdown
) -> tuple[StreamState, str]:
    """The state that shows `text`, and the frame from `state` to it ("" when none is needed)."""
    grew = text.startswith(state.text)
    if not grew and not text.startswith(state.text[: state.open_at]):
        state, grew = StreamState(state.turn_id), True  # the answer was rewritten: redraw it
    settled = text.rfind("\n") + 1
    split, parsed = Split((), state.open_at), state.parsed
    if not grew or _worth_splitting(state, text, settled):
        split, parsed = split_final(text, state.open_at), settled
    html = tuple(render(source) for source in split.final)
    code, tail_from = _tail(text, split.open_at)
    new = StreamState(
        state.turn_id, text, state.blocks + html, split.open_at, parsed, tail_from, code, True
    )
    if not state.drawn:
        return new, _answer_frame(new)
    if not html and grew and (code, tail_from) == (state.code, state.tail_from):
        added = text[len(state.text) :]
        if not added.strip():  # nothing visible: the tab keeps what it shows
            return replace(new, text=state.text), ""
        return new, _fill("chat/_frame_added.html", new.turn_id, escape(added))
    blocks = _fill("chat/_frame_blocks.html", new.turn_id, "".join(html)) if html else ""
    tail = escape(text[new.tail_from :])
    return new, blocks + _fill("chat/_stream_tail.html", new.turn_id, tail, new.code)


def finish(state: StreamState | None, text: str, render: Render = render_markdown) -> str | None:
    """The HTML that completes a streamed body once the answer is `text`: its blocks after
    the final ones the tab has, rendered once, to go where the tail was. None when no tab
    can have the body it would complete (nothing was drawn, or the answer was rewritten)."""
    if state is None or not state.drawn or not text.startswith(state.text[: state.open_at]):
        return None
    return render(text[state.open_at :])


def cut(
    state: StreamState, card_html: str, render: Render = render_markdown
) -> tuple[StreamState, str, int]:
    """The state with the answer so far final and a tool card after it, the frame that
    shows it, and the card's index among the blocks (`with_block` replaces it). Whatever
    the model writes next starts a block of its own, below the card."""
    rest = state.text[state.open_at :]
    html = (render(rest),) if rest.strip() else ()
    end = len(state.text)
    blocks = (*state.blocks, *html, card_html)
    new = StreamState(state.turn_id, state.text, blocks, end, end, end, False, True)
    if not state.drawn:
        return new, _answer_frame(new), len(blocks) - 1
    added = _fill("chat/_frame_blocks.html", new.turn_id, "".join(html) + card_html)
    return new, added + _fill("chat/_stream_tail.html", new.turn_id, ""), len(blocks) - 1


def with_block(state: StreamState, index: int, html: str) -> StreamState:
    """The state with block `index` drawn as `html` (a tool card that finished)."""
    blocks = (*state.blocks[:index], html, *state.blocks[index + 1 :])
    return replace(state, blocks=blocks)


def snapshot(state: StreamState) -> str:
    """One frame that draws the body as `state` has it, whatever the tab showed before."""
    return _answer_frame(state)


def _answer_frame(state: StreamState) -> str:
    context = {
        "turn_id": state.turn_id,
        "tail": state.text[state.tail_from :],
        "code": state.code,
        "blocks": "".join(state.blocks),
    }
    return render_to_string("chat/_frame_answer.html", context)


def _fill(template: str, turn_id: str, html: str, code: bool = False) -> str:
    """`template` for this turn with `html` (escaped by the caller) in its slot."""
    head, tail = _shell(template, turn_id, code)
    return head + html + tail


@functools.lru_cache(maxsize=256)
def _shell(template: str, turn_id: str, code: bool) -> tuple[str, str]:
    """A frame template rendered once for the turn, cut at its slot: what goes before and
    after the content that fills it."""
    context = {"turn_id": turn_id, "code": code, "oob": True, "fill": _SLOT, "tail": _SLOT}
    head, found, tail = render_to_string(template, context).partition(_SLOT)
    assert found, f"{template} has no slot"
    return head, tail


def _worth_splitting(state: StreamState, text: str, settled: int) -> bool:
    """Whether the complete lines that came since the last split may end the open block.

    Splitting parses the whole open block, so doing it at every new line would cost the
    square of a long list. It waits instead until the block has grown by an eighth
    since, which keeps the parsing linear in the answer. An open fence ends only with a
    line that may close it, so it is split at such a line and at no other. Waiting only
    delays a block."""
    if settled <= state.parsed:
        return False
    if state.code:
        return _FENCE_CLOSING.search(text, state.parsed, settled) is not None
    return settled - state.parsed >= (settled - state.open_at) // 8


def _tail(text: str, open_at: int) -> tuple[bool, int]:
    """Whether the open block is a code fence, and where the text the tail shows starts:
    past blank lines, and past a fence's opening line once that line is complete."""
    start = _BLANK_LINES.match(text, open_at).end()
    line_end = text.find("\n", start)
    if line_end != -1 and fence_opening(text[start:line_end]):
        return True, line_end + 1
    return False, start
