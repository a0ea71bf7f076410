"""Images in a turn, through the websocket: multimodal once, then one stable history rule."""

from __future__ import annotations

import io
import json

import pytest
from channels.db import database_sync_to_async
from PIL import Image as PILImage

from chat.llm.fake import FakeStep
from history.images import DecodeGate, image_store, images_for_messages
from history.models import Message, Session
from tests.chat.sockets import connect, frames_until, new_session, send

pytestmark = pytest.mark.django_db(transaction=True)
QUESTION = "What is in this picture?"


@database_sync_to_async
def stored_image(size: tuple[int, int] = (300, 200)):
    out = io.BytesIO()
    PILImage.new("RGB", size, (0, 160, 90)).save(out, format="PNG")
    return image_store(out.getvalue(), decodes=DecodeGate())


@database_sync_to_async
def user_images(session):
    message = Message.objects.get(session=session, role="user", content=QUESTION)
    return [i.sha256 for i in images_for_messages([message.pk]).get(message.pk, [])]


@database_sync_to_async
def forget_turn_and_state(session, turn_text: str) -> None:
    """As after a restart without saved engine state: history is rebuilt from the rows."""
    turn = Message.objects.get(session=session, content=turn_text).turn_id
    Message.objects.filter(session=session, turn_id=turn).delete()
    Session.objects.filter(pk=session.pk).update(context_state={})


def history_entry(messages: list[dict]) -> dict:
    [entry] = [m for m in messages if str(m.get("content", "")).startswith(QUESTION)]
    return entry


async def turn(ws, fake, **fields) -> list[str]:
    fake.enqueue(FakeStep(text="A green rectangle."))
    await send(ws, **fields)
    return await frames_until(ws, 'data-status="complete"')


async def test_a_message_with_an_image_is_sent_to_the_model_as_multimodal(fake):
    image = await stored_image()
    session = await new_session()
    ws = await connect(session.id)
    frames = await turn(ws, fake, message=QUESTION, image=image.sha256)
    content = fake.requests[-1].messages[-1]["content"]
    assert content[0] == {"type": "text", "text": QUESTION}
    assert content[1]["type"] == "image_url"
    assert content[1]["image_url"]["url"].startswith("data:image/png;base64,")
    assert f"/images/{image.sha256}/thumb/" in frames[0]
    assert await user_images(session) == [image.sha256]
    await ws.disconnect()


async def test_later_turns_replay_the_image_the_same_way_live_and_after_a_reload(fake):
    image = await stored_image()
    session = await new_session()
    ws = await connect(session.id)
    await turn(ws, fake, message=QUESTION, image=[image.sha256])
    await ws.disconnect()
    ws = await connect(session.id)  # a reloaded page: the engine state comes back
    await turn(ws, fake, message="And its colour?")
    live = history_entry(fake.requests[-1].messages)
    await forget_turn_and_state(session, "And its colour?")
    await turn(ws, fake, message="And its colour?")
    rebuilt = history_entry(fake.requests[-1].messages)
    reference = f"[image {image.sha256[:12]} 300x200 image/png]"
    assert live == rebuilt == {"role": "user", "content": f"{QUESTION}\n\n{reference}"}
    assert "image_url" not in json.dumps(fake.requests[-1].messages)
    await ws.disconnect()


async def test_an_unknown_image_refuses_the_turn_and_stores_nothing(fake):
    session = await new_session()
    ws = await connect(session.id)
    await send(ws, message=QUESTION, image="0" * 64)
    frames = await frames_until(ws, "attach it again")
    assert "is not stored" in frames[-1]
    assert not await database_sync_to_async(Message.objects.filter(session=session).exists)()
    await ws.disconnect()


async def test_a_malformed_image_reference_is_a_clear_frame_error(fake):
    session = await new_session()
    ws = await connect(session.id)
    await send(ws, message=QUESTION, image="../etc/passwd")
    frames = await frames_until(ws, "sha256")
    assert "Attached images must be referenced" in frames[-1]
    await ws.disconnect()
