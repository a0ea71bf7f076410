"""No credential leaves unseen: through real turns with `acdc/fake`, which records every
request it receives, what goes out holds markers where the repository, the person's text
or the history held credentials, and the person is told in the turn that first sends it."""

from __future__ import annotations

import base64
import json
from urllib.parse import quote

import pytest
from channels.db import database_sync_to_async
from django.test import override_settings

from chat.live.served import served
from chat.llm.fake import FakeStep
from chat.repo import sessionsets
from chat.session.compaction import compact_session
from chat.turn.events import TurnFinished, TurnNotice
from chat.turn.turns import TurnInput, TurnServices, run_turn
from history.models import Message
from tests import serving
from tests.chat.repo.test_credentials import AWS_KEY, GITHUB_TOKEN, SECRETS, SETTINGS
from tests.chat.sockets import new_session

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def repo_files():
    return {
        "settings.py": SETTINGS,
        "app.py": "from settings import connect\nconnect()\n",
        ".env": f"DEBUG=1\nGITHUB_TOKEN={GITHUB_TOKEN}\n",
    }


@pytest.fixture
def repo_is_git():
    return True


@pytest.fixture
def root(root):
    with override_settings(ACDC_REPO=root, ACDC_MAP_TOKENS=2000):
        yield root


def wire(request) -> str:
    """Everything a recorded request carried, as one text."""
    return json.dumps(request.messages, ensure_ascii=False)


async def turn(session, fake, text: str) -> list[tuple[object, int]]:
    """The turn's events, each with the number of requests the model had received when it
    was emitted (a warning at 0 was shown before the first request left)."""
    events = []

    async def emit(event) -> None:
        events.append((event, len(fake.requests)))

    await run_turn(
        TurnInput(session_id=session.id, user_text=text, model="acdc/fake"),
        TurnServices(emit=emit, wiring=served()),
    )
    return events


def warnings(events) -> list[tuple[str, int]]:
    return [(e.text, sent) for e, sent in events if isinstance(e, TurnNotice)]


async def test_the_first_request_of_a_fresh_session_carries_no_secret_of_the_map(root, fake):
    session = await new_session()
    before = len(fake.requests)

    events = await turn(session, fake, "hello")

    sent = wire(fake.requests[before])
    assert "AWS_ACCESS_KEY_ID" in sent and "GITHUB_TOKEN" in sent  # the map names them
    assert not any(secret in sent for secret in SECRETS)
    assert warnings(events) == [
        (
            "settings.py holds what looks like an AWS access key, an AWS secret access key "
            "and a GitHub token; the repository map shows its constants without their values.",
            before,
        )
    ]


async def test_a_selected_file_goes_out_redacted_and_is_warned_of_before_it_leaves(root, fake):
    session = await new_session()
    await database_sync_to_async(sessionsets.set_active_files)(
        session, ["settings.py"], repo=serving.repository()
    )
    before = len(fake.requests)

    events = await turn(session, fake, "what does connect do?")

    sent = wire(fake.requests[before])
    assert "[redacted: a GitHub token]" in sent and "REGION" in sent
    assert not any(secret in sent for secret in SECRETS)
    assert (
        "settings.py holds what looks like an AWS access key, an AWS secret access key and "
        "a GitHub token; it is sent to the model provider as [redacted: …] in its place, "
        "never as itself.",
        before,
    ) in warnings(events)


async def test_a_secret_file_the_person_confirmed_is_sent_but_its_credentials_are_not(root, fake):
    session = await new_session()
    await database_sync_to_async(sessionsets.set_active_files)(
        session, [".env"], confirmed={".env"}, repo=serving.repository()
    )
    before = len(fake.requests)

    events = await turn(session, fake, "why is debug on?")

    sent = wire(fake.requests[before])
    assert "DEBUG=1" in sent and "GITHUB_TOKEN=[redacted: a GitHub token]" in sent
    assert GITHUB_TOKEN not in sent
    assert any(
        w.startswith(".env holds what looks like a GitHub token") for w, _ in warnings(events)
    )


async def test_a_token_pasted_in_a_message_is_redacted_in_every_request_and_kept_here(root, fake):
    session = await new_session()
    text = f"why does git push fail with {GITHUB_TOKEN}?"
    before = len(fake.requests)

    first = await turn(session, fake, text)
    second = await turn(session, fake, "and now?")

    for request in fake.requests[before:]:
        assert GITHUB_TOKEN not in wire(request)
    assert "with [redacted: a GitHub token]?" in wire(fake.requests[-1])  # in the history
    said = (
        "Your message holds what looks like a GitHub token; it is sent to the model provider "
        "as [redacted: …] in its place, never as itself."
    )
    assert (said, before) in warnings(first)
    assert not [w for w, _ in warnings(second) if w.startswith("Your message")]
    stored = await database_sync_to_async(
        lambda: Message.objects.get(session_id=session.id, role="user", content=text)
    )()
    assert stored.content == text  # the person's own copy keeps what they wrote


async def test_every_paste_of_a_token_is_warned_of(root, fake):
    session = await new_session()
    text = f"use {AWS_KEY} for this"

    first = await turn(session, fake, text)
    again = await turn(session, fake, text)

    assert [w for w, _ in warnings(first) if w.startswith("Your message")]
    assert [w for w, _ in warnings(again) if w.startswith("Your message")]


async def test_a_tool_round_sends_the_tool_output_redacted(root, fake):
    session = await new_session()
    call = {"name": "read_file", "arguments": {"path": "settings.py"}}
    fake.enqueue(FakeStep(tool_calls=[call]), FakeStep(text="It reads AWS settings."))
    before = len(fake.requests)

    events = await turn(session, fake, "read settings.py")

    assert len(fake.requests) - before == 2
    second = wire(fake.requests[-1])
    assert "3 credential-shaped values redacted" in second
    assert not any(secret in second for secret in SECRETS)
    finished = next(e for e, _ in events if isinstance(e, TurnFinished))
    assert not any(s in finished.tool_cards[0].output for s in SECRETS)


@override_settings(
    ACDC_COMPACTION_TRIGGER_TOKENS=300,
    ACDC_VERBATIM_WINDOW_TOKENS=100,
    ACDC_SMALLER_MODEL="acdc/fake",
    ACDC_CHECKPOINT_EVERY=0,
)
async def test_side_requests_that_read_the_history_send_it_redacted(root, fake):
    session = await new_session()
    for number in range(4):
        token = f"my token is {GITHUB_TOKEN}; " if number == 3 else ""
        await turn(session, fake, f"{token}question {number}: " + "and the lexer? " * 30)
    before = len(fake.requests)
    answer = {"boundary_index": None, "boundary_reason": "r", "confidence": 0.0, "summary": "s"}
    fake.enqueue(FakeStep(text=json.dumps(answer)), FakeStep(text="They talked of parsing."))

    await compact_session(session.id, served(), force=True)

    side = fake.requests[before:]
    assert side and any("my token is" in wire(r) for r in side)
    assert not any(GITHUB_TOKEN in wire(r) for r in side)


async def test_encoded_copies_of_a_found_value_leave_as_its_marker(root, fake):
    session = await new_session()
    await database_sync_to_async(sessionsets.set_active_files)(
        session, ["settings.py"], repo=serving.repository()
    )
    password = "Tr0ub4dor&3/xy"
    copies = (
        base64.b64encode(f"ci:{GITHUB_TOKEN}".encode()).decode(),  # as Basic auth sends it
        GITHUB_TOKEN.encode().hex(),
        quote(password, safe=""),
    )
    text = f"DB_PASSWORD = '{password}'. Why Basic {copies[0]}, 0x{copies[1]}, ?pw={copies[2]}?"
    before = len(fake.requests)

    await turn(session, fake, text)

    sent = wire(fake.requests[before])
    assert not any(copy in sent for copy in copies)
    assert "Basic [redacted: a GitHub token], 0x[redacted: a GitHub token]" in sent
    assert "?pw=[redacted: a password or secret]?" in sent
