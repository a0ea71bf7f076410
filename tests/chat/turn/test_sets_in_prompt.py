"""The session's object sets as the model sees them (seed 001 §4.1–4.3), through real turns."""

from __future__ import annotations

import json

import pytest
from channels.db import database_sync_to_async
from django.conf import settings

from chat.live.served import served
from chat.repo import sessionsets
from chat.repo.indexing import discover_file, record_toolcall
from chat.turn.turns import TurnInput, TurnServices, run_turn
from history.models import SessionObject
from tests import serving
from tests.chat.sockets import new_session
from tests.current_files import read_current_files

pytestmark = pytest.mark.django_db(transaction=True)


async def ignore(event) -> None:
    return None


async def turn(session, fake, text: str) -> str:
    await run_turn(
        TurnInput(session_id=session.id, user_text=text, model="acdc/fake"),
        TurnServices(emit=ignore, wiring=served()),
    )
    return json.dumps(fake.requests[-1].messages)


@database_sync_to_async
def toolcall(session, call_id: str, output: str):
    return record_toolcall(
        session=session, call_id=call_id, tool="grep", args={}, status="ok", output=output
    ).object.id


async def test_active_objects_and_the_pool_reach_the_prompt(fake):
    session = await new_session()
    repo = serving.repository()
    await database_sync_to_async(sessionsets.activate)(session, "src/app.py", repo=repo)
    await database_sync_to_async(discover_file)(repo, "README.md", session=session)
    object_id = await toolcall(session, "c1", "src/app.py:1:def greet(name):")

    sent = await turn(session, fake, "what is there?")

    assert "def greet(name)" in sent  # the active file's content
    assert f"ACTIVE_CONTENT id={object_id}" in sent and "src/app.py:1:def greet" in sent
    assert "path=src/app.py file_type=py char_count=" in sent
    assert "path=README.md file_type=md [unread]" in sent
    assert f"id={object_id} type=toolcall tool=grep status=ok" in sent


async def test_tool_outputs_collapse_after_three_turns_unless_pinned(fake):
    session = await new_session()
    await turn(session, fake, "turn one")
    loose = await toolcall(session, "loose", "LOOSE OUTPUT")
    kept = await toolcall(session, "kept", "PINNED OUTPUT")
    await database_sync_to_async(sessionsets.pin)(session, kept, repo=serving.repository())

    assert "LOOSE OUTPUT" in await turn(session, fake, "turn two")
    assert "LOOSE OUTPUT" in await turn(session, fake, "turn three")
    sent = await turn(session, fake, "turn four")

    # The append-only layout may keep the old block in the cached prefix; what counts is
    # what the prompt marks as current.
    current = read_current_files(fake.requests[-1].messages)
    assert f"ACTIVE_CONTENT id={loose}" not in current
    assert current[f"ACTIVE_CONTENT id={kept}"] == "PINNED OUTPUT"
    assert f"id={loose} type=toolcall" in sent  # still in the metadata pool
    link = await database_sync_to_async(SessionObject.objects.get)(object_id=loose)
    assert link.in_pool and not link.active


async def test_a_picker_file_deleted_on_disk_leaves_the_context_with_a_notice(fake, tmp_path):
    session = await new_session()
    scratch = settings.ACDC_REPO / "scratch.txt"
    scratch.write_text("SCRATCH CONTENT\n")
    try:
        await database_sync_to_async(sessionsets.set_active_files)(
            session, ["scratch.txt"], repo=serving.repository()
        )
        assert "SCRATCH CONTENT" in await turn(session, fake, "first")
    finally:
        scratch.unlink()
    await turn(session, fake, "second")
    assert "scratch.txt" not in read_current_files(fake.requests[-1].messages)
    assert (
        await database_sync_to_async(sessionsets.active_paths)(session, repo=serving.repository())
        == []
    )
