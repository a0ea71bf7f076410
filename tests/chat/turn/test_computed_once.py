"""A turn computes once: its request is assembled once, and the HUD and the Files panel's
budget read the breakdown that assembly made; one session context serves the whole turn,
its compaction and after-turn work included; an attached image is read once; a plain turn
copies no whole history (the map's focus takes the last entries, the search memory keeps
the engine's own). Counted
through the real path: the websocket, the turn host, the turn and the engine, with the
offline `acdc/fake`."""

from __future__ import annotations

import io
from collections import Counter

import pytest
from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from django.db import connection
from django.test import override_settings
from django.test.utils import CaptureQueriesContext
from PIL import Image as PILImage

from chat.live.served import served
from chat.llm.fake import FakeStep
from chat.repo import sessionsets
from chat.session import SessionContext
from chat.turn.turns import TurnInput, TurnServices, run_turn
from contextcore.manager import ContextManager
from contextcore.prompt.assembly import PromptAssembler
from history import services
from history.images import DecodeGate, image_store
from history.models import Compaction, Session, TokenUsage
from tests import serving
from tests.chat.sockets import connect, eventually, frames_until, new_session, send

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("served_root")]
LAYOUTS = ("flat", "tiered", "appendonly")  # each call lays out one whole prompt
LONG = "Explain the lexer, the parser and how errors are recovered, in detail please. " * 6


@pytest.fixture
def assemblies(monkeypatch: pytest.MonkeyPatch) -> Counter:
    """How many prompts the engine laid out, by layout."""
    counted: Counter = Counter()
    for name in LAYOUTS:
        real = getattr(PromptAssembler, name)

        def counting(self, *args, _real=real, _name=name, **kwargs):
            counted[_name] += 1
            return _real(self, *args, **kwargs)

        monkeypatch.setattr(PromptAssembler, name, counting)
    return counted


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The session ids `SessionContext.open` was called for, in order."""
    calls: list[str] = []
    real = SessionContext.open.__func__

    def counting(cls, session_id, wiring, **kwargs):
        calls.append(session_id)
        return real(cls, session_id, wiring, **kwargs)

    monkeypatch.setattr(SessionContext, "open", classmethod(counting))
    return calls


@pytest.fixture
def history_copies(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The length of every whole copy of an engine's working history made."""
    copies: list[int] = []
    real = ContextManager.get_history

    def counting(self):
        copied = real(self)
        if copied:  # the state codec takes the state with an empty history in its place
            copies.append(len(copied))
        return copied

    monkeypatch.setattr(ContextManager, "get_history", counting)
    return copies


async def _turn(ws, session_id: str, text: str) -> list[str]:
    """Send a message; the frames up to the HUD's, once the turn's work is all done."""
    await send(ws, message=text)
    frames = await frames_until(ws, 'id="hud"')
    idle = await eventually(lambda: _idle(session_id), bool)
    assert idle, "the turn's after-reply work did not finish"
    return frames


async def _idle(session_id: str) -> bool:
    return not served().host.running(session_id)  # the test's own (tests/conftest.py)


@database_sync_to_async
def _select(session, path: str) -> None:
    sessionsets.activate(session, path, repo=serving.repository())


@database_sync_to_async
def _last_usage(session_id: str) -> TokenUsage:
    return TokenUsage.objects.filter(session_id=session_id).order_by("-id").first()


@database_sync_to_async
def _saved_hud(session_id: str) -> dict:
    return Session.objects.get(pk=session_id).context_state["hud"]


async def test_a_turn_assembles_its_request_once_and_the_hud_reads_its_breakdown(fake, assemblies):
    session = await new_session()
    await _select(session, "src/app.py")
    ws = await connect(session.id)
    await _turn(ws, session.id, "What does greet do?")  # the layout settles
    assemblies.clear()
    requests_before = len(fake.requests)

    frames = await _turn(ws, session.id, "And what does it return?")

    requests = len(fake.requests) - requests_before
    assert requests == 1
    assert sum(assemblies.values()) == requests, dict(assemblies)
    hud = await _saved_hud(session.id)
    assert {s["name"] for s in hud["sections"]} >= {"system", "active_files", "history"}
    assert "current_message" not in {s["name"] for s in hud["sections"]}  # now history
    sent = await _last_usage(session.id)  # the request's own breakdown, as recorded
    assert {t["name"]: t["tokens"] for t in hud["tiers"]} == {
        name: tokens for name, tokens in sent.tiers.items() if tokens
    }
    assert any("Active files" in frame for frame in frames)
    await ws.disconnect()


async def test_a_plain_turn_copies_no_whole_history(fake, history_copies):
    session = await new_session()
    await _select(session, "src/app.py")
    ws = await connect(session.id)
    for n in range(3):
        await _turn(ws, session.id, f"Question {n} about greet?")
    history_copies.clear()

    await _turn(ws, session.id, "And what does it return?")

    assert history_copies == []
    found = await database_sync_to_async(_memory_hits)(session.repository, "what does it return")
    assert found, "the search memory holds the turn's exchange"
    await ws.disconnect()


def _memory_hits(repository: str, text: str) -> list:
    from chat.live.served import served

    return [
        m
        for s in served().histories.sessions(repository)
        for m in s.history
        if text in m["content"].lower()
    ]


@override_settings(
    ACDC_COMPACTION_TRIGGER_TOKENS=400,
    ACDC_VERBATIM_WINDOW_TOKENS=150,
    ACDC_SMALLER_MODEL="acdc/fake",
    ACDC_CHECKPOINT_EVERY=0,
)
async def test_a_turn_that_compacts_opens_the_session_context_once(fake, opened):
    session = await new_session()
    ws = await connect(session.id)
    fake.enqueue(FakeStep(text="They went over the lexer.", purpose="history_summary"))
    compacted = False
    for n in range(8):
        opened.clear()
        await _turn(ws, session.id, f"{n} {LONG}")
        compacted = await database_sync_to_async(
            Compaction.objects.filter(session_id=session.id, case="summarize").exists
        )()
        if compacted:
            break
    assert compacted, "no turn went past the trigger"
    assert opened == [session.id]
    hud = await _saved_hud(session.id)
    now = await database_sync_to_async(SessionContext.open)(session.id, served())
    assert hud["history_tokens"] == now.manager.history_token_count()  # the compacted one
    await ws.disconnect()


def test_an_attached_image_is_read_once_for_its_turn(fake):
    out = io.BytesIO()
    PILImage.new("RGB", (300, 200), (0, 160, 90)).save(out, format="PNG")
    image = image_store(out.getvalue(), decodes=DecodeGate())
    session = services.session_create(repository="x", model="acdc/fake")

    async def ignore(event) -> None:
        return None

    with CaptureQueriesContext(connection) as captured:
        async_to_sync(run_turn)(
            TurnInput(session_id=session.id, user_text="What is this?", images=(image.sha256,)),
            TurnServices(emit=ignore, wiring=served()),
        )

    reads = [q["sql"] for q in captured.captured_queries if _reads_images(q["sql"])]
    rows = [sql for sql in reads if '"history_image"."data"' not in sql]
    pixels = [sql for sql in reads if '"history_image"."data"' in sql]
    assert (len(rows), len(pixels)) == (1, 1), "\n".join(reads)  # the pixels for the request
    assert fake.requests[-1].messages[-1]["content"][1]["type"] == "image_url"


def _reads_images(sql: str) -> bool:
    return sql.startswith("SELECT") and 'FROM "history_image"' in sql
