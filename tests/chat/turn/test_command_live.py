"""A running command's output streams into its card, capped and batched, colours drawn.

Real processes in real bubblewrap, driven by a real turn of `acdc/fake`: a command that
prints 5 MB reaches the card as a few frames of at most LIVE_BYTES each, not 5 MB of
frames; a quiet command's last line is not held back; ANSI colours become HTML spans and
what the command prints is text (a `<script>` it prints is shown, never run).
"""

from __future__ import annotations

import asyncio

import pytest
from channels.db import database_sync_to_async
from django.template.loader import render_to_string

from chat.live.frames import render_event
from chat.llm.fake import FakeStep
from chat.repo.commands import declaring
from chat.repo.commands.livefeed import LIVE_BYTES, LiveOutput
from chat.turn.events import ToolCallFinished, ToolCallOutput
from chat.turn.turns import TurnInput, TurnServices, run_turn
from chat.web.fragments import live_output
from tests.chat.repo.commands_support import PYTHON
from tests.chat.sockets import WAIT, new_session

pytestmark = pytest.mark.django_db(transaction=True)


async def page_turn(served, fake, root, argv: list[str], session=None) -> list:
    await database_sync_to_async(declaring.add)(str(root), "it", argv)
    session = session or await new_session()
    call = {"id": "c1", "name": "run_command", "arguments": {"name": "it"}}
    fake.enqueue(FakeStep(tool_calls=[call]), FakeStep(text="Done."))
    events: list = []

    async def emit(event) -> None:
        events.append(event)

    async with asyncio.timeout(WAIT * 4):
        await run_turn(
            TurnInput(session_id=session.id, user_text="Run it", model="acdc/fake"),
            TurnServices(emit=emit, wiring=served, commands=served.commands, page_served=True),
        )
    return [e for e in events if isinstance(e, ToolCallOutput | ToolCallFinished)]


async def test_five_megabytes_reach_the_card_as_a_few_capped_frames(fake, served, served_root):
    code = (
        "import sys, time\n"
        "for n in range(50_000):\n"
        "    sys.stdout.write(f'{n:09d} ' + 'x' * 90 + '\\n')\n"
        "    if n % 1000 == 999: sys.stdout.flush(); time.sleep(0.03)\n"
    )
    live = await page_turn(served, fake, served_root, [PYTHON, "-c", code])
    live = [e for e in live if isinstance(e, ToolCallOutput)]

    assert len(live) >= 2, "no live output while it ran"
    assert live[-1].total > 1_000_000  # frames kept coming while megabytes went by
    assert all(len(e.text.encode()) <= LIVE_BYTES for e in live)
    sent = sum(len(e.text.encode()) for e in live)
    assert sent < 5_000_000 / 10, f"{len(live)} frames, {sent:,} bytes"
    assert all(e.text[:9].isdigit() for e in live)  # a cut starts at a line


async def test_a_quiet_commands_last_line_is_not_held_back(fake, served, served_root):
    script = "echo first; echo second; sleep 1; echo third"
    live = await page_turn(served, fake, served_root, ["sh", "-c", script])

    texts = [e.text for e in live if isinstance(e, ToolCallOutput)]
    assert "first\nsecond\n" in texts  # sent before the sleep ended, not only at the end
    assert texts[-1] == "first\nsecond\nthird\n"


async def test_the_live_card_draws_colours_and_shows_markup_as_text(fake, served, served_root):
    script = r"printf '\033[31mFAILED\033[0m <script>alert(1)</script>\n'"
    *live, _ = await page_turn(served, fake, served_root, ["sh", "-c", script])
    last = live[-1]

    [frame] = render_event(last, served.files)

    assert '<span class="ansi31">FAILED</span>' in frame
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in frame and "<script>" not in frame
    assert 'hx-swap-oob="outerHTML"' in frame and live_output(last)["id"] in frame


async def test_the_finished_card_draws_colours_after_a_reload_and_the_model_reads_plain(
    fake, served, served_root, async_client
):
    script = r"printf '\033[32m✔\033[39m 3 passing\n\033[31m  1 failing\033[0m\n'; exit 1"
    session = await new_session()
    *_, finished = await page_turn(served, fake, served_root, ["sh", "-c", script], session)

    page = (await async_client.get(f"/s/{session.id}/")).content.decode()
    frame = "".join(render_event(finished, served.files))
    for html in (frame, page):
        assert '<span class="ansi32">✔</span> 3 passing' in html
        assert '<span class="ansi31">  1 failing</span>' in html
        assert "\x1b" not in html and "␛" not in html
    [answer] = [m["content"] for m in fake.requests[-1].messages if m.get("role") == "tool"]
    assert answer.endswith("\n✔ 3 passing\n  1 failing\n") and "\x1b" not in answer


async def test_the_card_says_how_much_is_left_out():
    sent: list = []

    async def send(text: str, total: int) -> None:
        sent.append((text, total))

    feed = LiveOutput(send, keep=100, interval=0)
    await feed(b"a" * 50 + b"\n" + b"b" * 200 + b"\n")
    await feed.close()

    [(text, total)] = sent
    event = ToolCallOutput("t", "c", text, total)
    html = render_to_string("chat/_tool_live.html", {"live": live_output(event), "oob": True})
    assert total == 252 and len(text.encode()) <= 100
    assert "before this are not shown here" in html and "252" in html
