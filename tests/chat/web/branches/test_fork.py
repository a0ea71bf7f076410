"""Fork: a session forked at message N sends a first request whose prefix is the parent's,
byte for byte, up to N (so a provider's prompt cache serves it)."""

from __future__ import annotations

import json

import pytest
from channels.db import database_sync_to_async
from django.test import Client

from history.models import Message, Session
from tests.chat.sockets import connect, frames_until, new_session, next_frame, send, stored

pytestmark = pytest.mark.django_db(transaction=True)


async def exchange(ws, fake, text: str, answer: str) -> None:
    fake.enqueue(answer)
    await send(ws, message=text)
    await frames_until(ws, 'data-status="complete"')


def fork_over_http(message_id: str) -> tuple[int, str]:
    response = Client().post(f"/m/{message_id}/fork/", headers={"HX-Request": "true"})
    return response.status_code, response.headers.get("HX-Redirect", "")


def up_to(messages: list[dict], text: str) -> bytes:
    """The request's messages up to and including the one holding `text`, as bytes."""
    at = next(i for i, m in enumerate(messages) if text in json.dumps(m))
    return json.dumps(messages[: at + 1], sort_keys=True).encode()


async def test_a_fork_at_message_n_sends_the_parents_prefix_up_to_n_byte_for_byte(fake):
    parent = await new_session()
    ws = await connect(parent.id)
    await send(ws, action="select", path=["src/app.py", "README.md"])  # the selection too
    await next_frame(ws)
    await exchange(ws, fake, "Explain the parser", "Parser answer.")
    await exchange(ws, fake, "Now the lexer", "Lexer answer.")
    await exchange(ws, fake, "And the grammar", "Grammar answer.")
    parents_third = fake.requests[-1].messages
    n = next(m for m in await stored(parent) if m.content == "Lexer answer.")

    status, url = await database_sync_to_async(fork_over_http)(n.id)
    assert status == 204 and url.startswith("/s/") and parent.id not in url
    child_id = url.strip("/").split("/")[-1]
    child = await database_sync_to_async(Session.objects.get)(pk=child_id)
    copied = [(m.role, m.content) for m in await stored(child)]
    assert copied == [
        ("user", "Explain the parser"),
        ("assistant", "Parser answer."),
        ("user", "Now the lexer"),
        ("assistant", "Lexer answer."),
    ]
    child_ws = await connect(child.id)
    await exchange(child_ws, fake, "And the tokenizer", "Tokenizer answer.")
    forked_first = fake.requests[-1].messages

    assert "def greet(name)" in json.dumps(forked_first)  # the files came along
    assert up_to(forked_first, "Lexer answer.") == up_to(parents_third, "Lexer answer.")
    assert "And the grammar" not in json.dumps(forked_first)
    rows = await stored(parent)
    assert [m.content for m in rows][-1] == "Grammar answer."  # the parent is untouched
    await ws.disconnect()
    await child_ws.disconnect()


async def test_forking_from_a_message_out_of_view_is_refused_with_a_message(fake):
    parent = await new_session()
    ws = await connect(parent.id)
    await exchange(ws, fake, "Explain the parser", "Parser answer.")
    reply = next(m for m in await stored(parent) if m.content == "Parser answer.")
    await database_sync_to_async(Message.objects.filter(pk=reply.pk).update)(rolled_back=True)

    status, url = await database_sync_to_async(fork_over_http)(reply.id)

    assert (status, url) == (200, "")
    sessions = await database_sync_to_async(Session.objects.count)()
    assert sessions == 1
    await ws.disconnect()
