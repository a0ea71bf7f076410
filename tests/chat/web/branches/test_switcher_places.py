"""Where the ‹ n/m › switchers sit, and what every fold says made it (issue 30, item 2).

A switcher sits where its alternatives differ: the question's wordings (Edit) under the
question, the answers to the wording shown (Regenerate) under the reply. A fold's label
names what set its messages aside: Retry, an edit and resend, a rollback."""

from __future__ import annotations

import re

import pytest
from channels.db import database_sync_to_async

from chat.live.served import served
from chat.llm.fake import FakeStep
from chat.session.checkpoints import set_aside_last
from tests.chat.live.test_retry import failed_turn
from tests.chat.sockets import connect, frames_until, new_session, send, stored
from tests.chat.web.branches.test_versions import exchange, page

pytestmark = pytest.mark.django_db(transaction=True)
SWITCHER = re.compile(
    r'aria-label="(Versions of this (?:message|reply))">.*?Version (\d+) of (\d+)', re.S
)


def switchers(html: str) -> list[tuple[str, str, str]]:
    return SWITCHER.findall(html)


async def newest(session, role: str):
    return [m for m in await stored(session) if m.role == role and not m.rolled_back][-1]


async def test_after_edit_then_regenerate_each_switcher_sits_where_versions_differ(fake):
    session = await new_session()
    ws = await connect(session.id)
    await exchange(ws, fake, "Explain the parser", "Parser answer.")
    question = await newest(session, "user")
    fake.enqueue("Lexer answer.")
    await send(ws, message="Explain the lexer", branch=question.id)  # Edit
    await frames_until(ws, "Version 2 of 2")
    fake.enqueue("Lexer answer, again.")
    await send(ws, message="", branch=(await newest(session, "assistant")).id)  # Regenerate
    await frames_until(ws, 'data-status="complete"')
    await frames_until(ws, "Versions of this reply")

    html = await database_sync_to_async(page)(session)
    assert switchers(html) == [
        ("Versions of this message", "2", "2"),  # two wordings: parser, lexer
        ("Versions of this reply", "2", "2"),  # two answers to "Explain the lexer"
    ]
    reply_at = html.index("Lexer answer, again.")
    assert html.index("Versions of this reply") > reply_at  # under the reply
    assert html.index("Versions of this message") < reply_at  # under the question
    await ws.disconnect()


async def test_a_retried_exchange_stays_labelled_retry_after_the_question_is_edited(fake):
    fake.enqueue(FakeStep(text="Half an answer", chunk_size=5, error="server", error_after=1))
    fake.enqueue(FakeStep(text="The whole answer."))
    session = await new_session()
    ws = await connect(session.id)
    turn = await failed_turn(ws, "Explain the parser")
    await send(ws, message="Explain the parser", retry=turn)
    await frames_until(ws, 'data-status="complete"')
    assert "replaced by Retry" in await database_sync_to_async(page)(session)

    fake.enqueue("About the lexer.")
    await send(ws, message="Explain the lexer", branch=(await newest(session, "user")).id)
    await frames_until(ws, "Version 2 of 2")

    html = await database_sync_to_async(page)(session)
    assert "replaced by Retry" in html and "rollback" not in html
    await ws.disconnect()


async def test_an_edit_and_resend_says_so_on_its_fold(fake):
    session = await new_session()
    ws = await connect(session.id)
    await exchange(ws, fake, "Explain the parser", "Parser answer.")
    question = await newest(session, "user")
    await database_sync_to_async(set_aside_last)(session.id, question.id, served())

    html = await database_sync_to_async(page)(session)
    assert "set aside when the message was edited and sent again" in html
    assert "rollback" not in html
    await ws.disconnect()
