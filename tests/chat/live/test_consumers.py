"""The chat websocket, end to end through the ASGI app with the scripted fake model."""

from __future__ import annotations

import asyncio
import json
from urllib.parse import urlsplit

import pytest
from channels.db import database_sync_to_async

from acdc.asgi import application
from chat.live.consumers import _query
from chat.llm.fake import FakeStep
from chat.web.broadcast import session_socket_url
from history.models import Session
from tests.chat.sockets import (
    ORIGIN,
    Socket,
    connect,
    eventually,
    frames_until,
    new_session,
    next_frame,
    send,
    stored,
)

pytestmark = pytest.mark.django_db(transaction=True)


async def test_a_turn_streams_in_order_and_is_stored(fake):
    fake.enqueue(FakeStep(text="Hello **there**, friend.", chunk_size=4))
    session = await new_session()
    ws = await connect(session.id)
    await send(ws, message="Say hello")
    frames = await frames_until(ws, 'data-status="complete"')
    assert "Say hello" in frames[0] and 'hx-swap-oob="beforeend:#conversation"' in frames[0]
    assert "<strong>there</strong>" in frames[-1]
    turn = frames[0].split('data-turn="')[1].split('"')[0]
    assert all(f'data-turn="{turn}"' in frame for frame in frames)
    user, answer = await stored(session)
    assert (user.role, user.content, user.status) == ("user", "Say hello", "complete")
    assert (answer.content, answer.status) == ("Hello **there**, friend.", "complete")
    assert answer.usage["completion_tokens"] > 0
    await ws.disconnect()


async def test_stop_cancels_the_turn_and_keeps_the_partial_answer(fake):
    fake.enqueue(FakeStep(text="word " * 200, chunk_size=5, chunk_delay=0.02))
    session = await new_session()
    ws = await connect(session.id)
    await send(ws, message="Talk a lot")
    await frames_until(ws, "word")
    await send(ws, action="stop")
    frames = await frames_until(ws, 'data-status="cancelled"')
    assert "Stopped" in frames[-1]
    _, answer = await stored(session)
    assert answer.status == "cancelled"
    assert answer.content.startswith("word")
    assert len(answer.content) < len("word " * 200)
    await ws.disconnect()


async def test_an_error_mid_stream_is_shown_and_the_partial_text_kept(fake):
    fake.enqueue(FakeStep(text="partial answer here", chunk_size=4, error="server", error_after=2))
    session = await new_session()
    ws = await connect(session.id)
    await send(ws, message="Fail please")
    frames = await frames_until(ws, 'data-status="error"')
    assert 'role="alert"' in frames[-1]
    _, answer = await stored(session)
    assert (answer.status, answer.content) == ("error", "partial ")
    assert answer.error
    await send(ws, message="Now work")
    await frames_until(ws, 'data-status="complete"')
    await ws.disconnect()


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        ("{broken", "not valid JSON"),
        ("[]", "JSON object"),
        (json.dumps({"action": "dance"}), "Unknown action"),
        (json.dumps({"message": "x" * 1_000_001}), "too large"),
        (json.dumps({"message": "   "}), "empty"),
        (
            json.dumps({"message": "hi", "mention": '{"path": "a.py", "line": 1%s}' % ("0" * 500)}),
            "A mention must name a file",
        ),
    ],
)
async def test_bad_frames_get_a_clear_message_and_the_socket_keeps_working(fake, raw, says):
    session = await new_session()
    ws = await connect(session.id)
    await ws.send_to(text_data=raw)
    error = await next_frame(ws)
    assert says in error and 'role="alert"' in error
    await send(ws, message="still there?")
    await frames_until(ws, 'data-status="complete"')
    assert [m.content for m in await stored(session)][0] == "still there?"
    await ws.disconnect()


async def test_an_unknown_session_is_refused_with_a_message():
    ws = Socket(application, "/ws/session/sess_0_000000/", ORIGIN)
    connected, _ = await ws.connect()
    assert connected
    assert "no session" in await next_frame(ws)
    assert (await ws.receive_output())["type"] == "websocket.close"


async def test_an_unknown_model_fails_the_turn_with_a_clear_message(fake):
    session = await new_session()
    ws = await connect(session.id)
    await send(ws, message="hi", model="nonexistent-provider/xyz")
    frames = await frames_until(ws, 'data-status="error"')
    assert "nonexistent-provider/xyz" in frames[-1]
    user, *_ = await stored(session)
    assert user.content == "hi"
    await ws.disconnect()


async def test_a_socket_closed_mid_turn_does_not_cancel_it(fake):
    fake.enqueue(FakeStep(text="tick " * 100, chunk_size=5, chunk_delay=0.01))
    session = await new_session()
    ws = await connect(session.id)
    await send(ws, message="Go slowly")
    await frames_until(ws, "tick")
    await ws.disconnect()
    messages = await eventually(
        lambda: stored(session), lambda m: len(m) == 2 and m[1].status != "streaming"
    )
    assert messages[1].status == "complete" and messages[1].content == "tick " * 100
    # The turn's last write is the HUD saved with the session; let it land before the
    # test database is flushed (PostgreSQL would deadlock the flush against it).
    state = await eventually(
        database_sync_to_async(lambda: Session.objects.get(pk=session.pk).context_state),
        lambda state: (state.get("hud") or {}).get("turns"),
    )
    assert state["hud"]["turns"] == 1


async def test_a_second_tab_on_the_same_session_sees_the_stream(fake):
    fake.enqueue(FakeStep(text="shared reply", chunk_size=3))
    session = await new_session()
    first, second = await connect(session.id), await connect(session.id)
    await send(first, message="for both")
    frames = await frames_until(second, 'data-status="complete"')
    assert "for both" in frames[0] and "shared reply" in frames[-1]
    await first.disconnect()
    await second.disconnect()


async def test_ticking_files_updates_the_hud_and_persists_the_selection(fake):
    session = await new_session()
    ws = await connect(session.id)
    await send(ws, action="select", path="src/app.py")
    frame = (await frames_until(ws, 'id="hud"'))[-1]  # after the picker's answer
    assert "Active files" in frame
    await send(ws, action="select", path=["src/app.py", "README.md"])
    await frames_until(ws, 'id="hud"')
    await send(ws, message="what is selected?")
    await frames_until(ws, 'data-status="complete"')
    await frames_until(ws, 'id="hud"')  # the turn's own HUD update follows its last frame
    request = fake.requests[-1]
    sent = json.dumps(request.messages)
    assert "def greet(name)" in sent and "A sample repository" in sent
    await send(ws, action="select")  # nothing ticked: everything deselected
    frame = (await frames_until(ws, 'id="hud"'))[-1]
    # The budget counts what the next request sends, the cached copies included.
    assert "· 0 files" in frame
    await ws.disconnect()


async def test_a_refused_file_says_why(fake):
    session = await new_session()
    ws = await connect(session.id)
    await send(ws, action="select", path=["../../etc/passwd"])
    error = await next_frame(ws)
    assert "../../etc/passwd was not added" in error and 'role="alert"' in error
    await ws.disconnect()


async def test_a_tab_that_opens_mid_turn_gets_what_streamed_and_then_the_rest(fake):
    words = " ".join(f"w{n}" for n in range(200))  # litellm refuses a chunk repeated 100 times
    fake.enqueue(FakeStep(text="para one.\n\n" + words, chunk_size=5, chunk_delay=0.01))
    session = await new_session()
    first = await connect(session.id)
    await send(first, message="Talk for a while")
    await frames_until(first, "para one.")
    late = await connect(session.id)  # as a reload, or another window, would
    frames = await frames_until(late, 'data-status="complete"')
    snapshot = frames[0]
    assert "msg-" in snapshot and "para one." in snapshot  # what streamed before it came
    assert "w198 w199" in frames[-1]
    _, answer = await stored(session)
    assert answer.status == "complete" and answer.content.endswith("w199")
    await first.disconnect()
    await late.disconnect()


async def test_stop_from_another_tab_cancels_the_turn(fake):
    fake.enqueue(FakeStep(text="word " * 400, chunk_size=5, chunk_delay=0.02))
    session = await new_session()
    first, second = await connect(session.id), await connect(session.id)
    await send(first, message="Talk a lot")
    await frames_until(second, "word")
    await send(second, action="stop")
    await frames_until(first, 'data-status="cancelled"')
    _, answer = await stored(session)
    assert answer.status == "cancelled" and len(answer.content) < len("word " * 400)
    await first.disconnect()
    await second.disconnect()


async def test_a_second_message_while_one_streams_is_refused_in_that_tab(fake):
    words = " ".join(f"w{n}" for n in range(200))
    fake.enqueue(FakeStep(text=words, chunk_size=5, chunk_delay=0.03))
    session = await new_session()
    first, second = await connect(session.id), await connect(session.id)
    await send(first, message="first question")
    await frames_until(second, "w1")
    await send(second, message="second question")
    refusal = await frames_until(second, 'role="alert"')
    told = "A reply is still being written in another tab; wait for it or press Stop."
    assert told in refusal[-1]
    await send(first, message="again from the first tab")
    own = await frames_until(first, 'role="alert"')
    assert "A reply is still being written; wait for it or press Stop." in own[-1]
    await frames_until(first, 'data-status="complete"')
    rows = await stored(session)
    assert [m.content for m in rows if m.role == "user"] == ["first question"]
    await first.disconnect()
    await second.disconnect()


async def test_two_workers_sending_at_once_leave_a_well_formed_history(fake, served):
    """Two processes, each with its own turn host, get a message for one session at the
    same moment: the lease lets one turn run and the other tab is told why."""
    from channels.layers import get_channel_layer

    from chat.live.protocol import parse_frame
    from chat.live.turnhost import LocalTabs, TurnHost

    fake.enqueue(FakeStep(text="answer A " * 10, chunk_size=4, chunk_delay=0.005))
    fake.enqueue(FakeStep(text="answer B"))
    session = await new_session()
    watching = await connect(session.id)
    layer = get_channel_layer()
    tabs = [await layer.new_channel() for _ in range(2)]  # the two asking tabs' channels
    frames = [
        parse_frame(json.dumps({"message": text}), None, max_bytes=10_000)
        for text in ("tab one", "tab two")
    ]
    parts = served.runtime, served.maps, served.files
    more = {"repository": served.repository, "histories": served.histories}
    workers = TurnHost(LocalTabs(), *parts, **more), TurnHost(LocalTabs(), *parts, **more)
    await asyncio.gather(
        *(w.submit(session.id, f, t) for w, f, t in zip(workers, frames, tabs, strict=True))
    )
    await frames_until(watching, 'data-status="complete"')
    waits = [asyncio.ensure_future(layer.receive(tab)) for tab in tabs]
    done, pending = await asyncio.wait(waits, timeout=60, return_when="FIRST_COMPLETED")
    for wait in pending:
        wait.cancel()
    [refusal] = [wait.result() for wait in done]
    assert "already being written" in refusal["html"]
    rows = await eventually(
        lambda: stored(session), lambda m: len(m) == 2 and m[1].status != "streaming"
    )
    assert [m.role for m in rows] == ["user", "assistant"] and [m.seq for m in rows] == [0, 1]
    await watching.disconnect()


async def test_an_edited_last_message_replaces_it_and_its_reply(fake):
    session = await new_session()
    ws = await connect(session.id)
    await send(ws, message="How do I greet Bob?")
    await frames_until(ws, 'data-status="complete"')
    first, _ = await stored(session)
    await send(ws, message="How do I greet Alice?", replaces=first.id)
    frames = await frames_until(ws, 'data-status="complete"')
    redrawn = next(f for f in frames if 'id="conversation"' in f)
    assert "fold-edited" in redrawn and frames.index(redrawn) < len(frames) - 1
    assert "set aside when the message was edited and sent again" in redrawn
    assert "Fake reply to: How do I greet Alice?" in frames[-1]
    rows = await stored(session)
    set_aside = [(m.role, m.content) for m in rows if m.rolled_back]
    assert set_aside == [
        ("user", "How do I greet Bob?"),
        ("assistant", "Fake reply to: How do I greet Bob?"),
    ]
    assert "Bob" not in json.dumps(fake.requests[-1].messages)  # answered without the old one
    await ws.disconnect()


async def test_only_the_last_message_can_be_edited_and_a_refusal_says_so(fake):
    session = await new_session()
    ws = await connect(session.id)
    for text in ("first question", "second question"):
        await send(ws, message=text)
        await frames_until(ws, 'data-status="complete"')
    first = (await stored(session))[0]
    await send(ws, message="first, edited", replaces=first.id)
    error = await frames_until(ws, "Only your last message can be edited")
    assert 'role="alert"' in error[-1]
    assert not any(m.rolled_back for m in await stored(session))  # nothing set aside
    await ws.disconnect()


def test_the_socket_query_is_read_back_as_the_page_wrote_it():
    url = session_socket_url("sess_0_000000", streaming=True, seen="a/b+c d é&x=y")
    query = urlsplit(url).query.encode()
    assert _query({"query_string": query}) == {"drawn": "streaming", "seen": "a/b+c d é&x=y"}
    encoded = b"seen=a%2Fb+c&caf%C3%A9=%E2%9C%93"  # %2F, + for a space, a non-ASCII name
    assert _query({"query_string": encoded}) == {"seen": "a/b c", "café": "✓"}
    assert _query({}) == {}
