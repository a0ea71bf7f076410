"""What the model said before a tool call goes back to it with the call, through litellm.

A loopback OpenAI-compatible server answers with text and then a tool call; the next
request of the turn must carry that assistant message whole: its text, then its calls, and
the same bytes on every later request of the turn (the cached prefix is append-only).
"""

from __future__ import annotations

import json

import pytest

from chat.live.served import served
from chat.llm.client import LiteLLMClient
from chat.turn.turns import TurnInput, TurnServices, run_turn
from tests.chat.llm.openai_server import answer, tool_call_answer
from tests.chat.sockets import new_session

pytestmark = pytest.mark.django_db(transaction=True)

MODEL = "openai/gpt-4o-mini"  # a model litellm knows to take tools
READ = json.dumps({"path": "src/app.py"})


async def ask(server, text: str):
    session = await new_session(model=MODEL)

    async def emit(event) -> None:
        pass

    client = LiteLLMClient(api_base=server.url, give_up_after=30.0, backoff_base=0.01)
    return await run_turn(
        TurnInput(session_id=session.id, user_text=text, model=MODEL),
        TurnServices(emit=emit, wiring=served(), client=client),
    )


def _round(request: dict) -> list[dict]:
    """The assistant message with tool calls and what follows it."""
    messages = request["messages"]
    start = next(i for i, m in enumerate(messages) if m.get("tool_calls"))
    return messages[start:]


async def test_the_text_before_a_tool_call_goes_back_with_the_call(openai_server):
    openai_server.enqueue(
        tool_call_answer(["Let me read ", "app.py first."], [("c1", "read_file", READ)]),
        answer(["It greets by name."]),
    )
    finished = await ask(openai_server, "What does app.py do?")
    assert finished.status == "complete"
    assert len(openai_server.requests) == 2
    said, result = _round(openai_server.requests[1])
    assert said["role"] == "assistant"
    assert said["content"] == "Let me read app.py first."
    assert [c["function"]["name"] for c in said["tool_calls"]] == ["read_file"]
    assert list(said).index("content") < list(said).index("tool_calls")
    assert result["role"] == "tool" and result["tool_call_id"] == "c1"


async def test_later_requests_of_the_turn_repeat_the_round_unchanged(openai_server):
    openai_server.enqueue(
        tool_call_answer(["First I look."], [("c1", "read_file", READ)]),
        tool_call_answer([], [("c2", "read_file", READ)]),
        answer(["Done."]),
    )
    finished = await ask(openai_server, "Look twice")
    assert finished.status == "complete"
    second, third = openai_server.requests[1]["messages"], openai_server.requests[2]["messages"]
    assert third[: len(second)] == second  # append-only within the turn
    rounds = [m for m in third if m.get("tool_calls")]
    assert [m.get("content") for m in rounds] == ["First I look.", None]
