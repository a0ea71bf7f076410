"""A page's turn waits for the person's answer to a command the model proposed.

A real turn of `acdc/fake` (through litellm) calls `propose_command` with `page_served`
on, as the turn host starts a tab's turn: the card is shown as waiting, the answer comes
through the real view (Run once in real bubblewrap, or Deny), and the tool's answer the
model reads next is the run's result or the denial. Stop (the turn's task cancelled) ends
the wait: the proposal is stopped and can no longer be answered.
"""

from __future__ import annotations

import asyncio

import pytest
from channels.db import database_sync_to_async

from chat.llm.fake import FakeStep
from chat.repo.commands.proposal_state import argv_digest
from chat.turn.events import ToolCallFinished, ToolCallWaiting
from chat.turn.turns import TurnInput, TurnServices, run_turn
from history.models import CommandProposal
from tests.chat.sockets import WAIT, new_session

pytestmark = pytest.mark.django_db(transaction=True)


class Turn:
    """A page's turn in which the model proposes `argv`, running as a task."""

    def __init__(self, served, session, fake, argv: list[str]) -> None:
        call = {"id": "c1", "name": "propose_command", "arguments": {"argv": argv, "reason": "r"}}
        fake.enqueue(FakeStep(tool_calls=[call]), FakeStep(text="Thanks."))
        self.events: list = []
        self.waiting = asyncio.Event()

        async def emit(event) -> None:
            self.events.append(event)
            if isinstance(event, ToolCallWaiting):
                self.waiting.set()

        self.task = asyncio.create_task(
            run_turn(
                TurnInput(session_id=session.id, user_text="Run it", model="acdc/fake"),
                TurnServices(emit=emit, wiring=served, commands=served.commands, page_served=True),
            )
        )

    async def proposal_id(self) -> int:
        async with asyncio.timeout(WAIT):
            await self.waiting.wait()
        [shown] = [e for e in self.events if isinstance(e, ToolCallWaiting)]
        return shown.proposal["id"]


def tool_answer(fake) -> str:
    [answer] = [m["content"] for m in fake.requests[-1].messages if m.get("role") == "tool"]
    return answer


async def test_the_turn_waits_and_the_model_reads_the_runs_result(
    fake, served, served_root, async_client
):
    session = await new_session()
    argv = ["sh", "-c", "echo made > marker; echo printed; exit 3"]
    turn = Turn(served, session, fake, argv)
    proposal_id = await turn.proposal_id()
    assert not turn.task.done() and len(fake.requests) == 1  # it waits for the person

    approval = {"decision": "once", "argv": argv_digest(argv)}  # as the card's form sends it
    response = await async_client.post(f"/proposals/{proposal_id}/answer/", approval)
    async with asyncio.timeout(WAIT):
        await turn.task

    assert response.status_code == 200
    assert (served_root / "marker").read_text() == "made\n"
    answer = tool_answer(fake)
    assert answer.startswith("$ sh -c 'echo made > marker; echo printed; exit 3'  [a shell]\n")
    assert "\nexit status 3 after " in answer and answer.endswith("printed\n")
    [finished] = [e for e in turn.events if isinstance(e, ToolCallFinished)]
    assert finished.status == "fail"
    assert (finished.proposal["status"], finished.proposal["run"]["ended"][:6]) == (
        "approved",
        "exit 3",
    )


async def test_a_denial_is_the_answer_and_nothing_runs(fake, served, served_root, async_client):
    session = await new_session()
    turn = Turn(served, session, fake, ["sh", "-c", "echo made > marker"])
    proposal_id = await turn.proposal_id()

    await async_client.post(f"/proposals/{proposal_id}/answer/", {"decision": "deny"})
    async with asyncio.timeout(WAIT):
        await turn.task

    assert tool_answer(fake) == (
        "denied: the developer did not allow `sh -c 'echo made > marker'  [a shell]`; nothing ran."
    )
    assert not (served_root / "marker").exists()


async def test_stop_ends_the_wait_and_the_proposal_is_stopped(
    fake, served, served_root, async_client
):
    session = await new_session()
    turn = Turn(served, session, fake, ["sh", "-c", "echo made > marker"])
    proposal_id = await turn.proposal_id()

    turn.task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await turn.task
    late = await async_client.post(f"/proposals/{proposal_id}/answer/", {"decision": "once"})

    row = await database_sync_to_async(CommandProposal.objects.get)(pk=proposal_id)
    assert row.status == "stopped"
    assert not served.commands.answers.waiting(proposal_id)
    shown = [e.proposal["status"] for e in turn.events if isinstance(e, ToolCallWaiting)]
    assert shown == ["pending", "stopped"]
    assert late.status_code == 409
    assert "Its turn was stopped before an answer came: nothing ran." in late.content.decode()
    assert not (served_root / "marker").exists()
    assert len(fake.requests) == 1
