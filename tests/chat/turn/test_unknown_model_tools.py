"""A model litellm does not know, on an OpenAI-compatible server: offered tools, and a
server that refuses them is asked once more without, said so, and remembered.

Through the real turn, litellm and HTTP; only the server is faked (a loopback one,
tests/chat/llm/openai_server.py).
"""

from __future__ import annotations

import pytest

from chat.live.served import served
from chat.llm.client import LiteLLMClient
from chat.llm.facts import ModelSettings, model_facts
from chat.llm.runtime import Runtime
from chat.turn.events import TurnNotice
from chat.turn.turns import TurnInput, TurnServices, run_turn
from contextcore.llm import BadRequestError, ContextWindowExceededError
from tests.chat.llm.openai_server import answer, error
from tests.chat.sockets import new_session

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.filterwarnings("ignore:Accessing the 'model_:DeprecationWarning"),
]

MODEL = "openai/my-model"  # not in litellm's map: the README's path for a local server
VLLM_REFUSAL = (
    '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set'
)


async def ask(server, session, text: str) -> tuple[object, list[object]]:
    events: list[object] = []

    async def emit(event) -> None:
        events.append(event)

    client = LiteLLMClient(api_base=server.url, give_up_after=30.0, backoff_base=0.01)
    finished = await run_turn(
        TurnInput(session_id=session.id, user_text=text, model=MODEL),
        TurnServices(emit=emit, wiring=served(), client=client),
    )
    return finished, events


def system_text(request: dict) -> str:
    content = request["messages"][0]["content"]
    return content if isinstance(content, str) else " ".join(p["text"] for p in content)


async def test_an_unknown_models_first_request_offers_acdcs_tools(openai_server):
    openai_server.enqueue(answer(["Hello."]))
    session = await new_session(model=MODEL)
    finished, _ = await ask(openai_server, session, "hi")
    assert finished.status == "complete"
    names = [t["function"]["name"] for t in openai_server.requests[0]["tools"]]
    assert {"read_file", "edit_file"} <= set(names)
    assert "edit_file tool" in system_text(openai_server.requests[0])


async def test_a_server_that_refuses_tools_is_asked_once_without_and_remembered(openai_server):
    openai_server.enqueue(error(400, VLLM_REFUSAL), answer(["Done without tools."]))
    session = await new_session(model=MODEL)
    finished, events = await ask(openai_server, session, "first")
    assert finished.status == "complete" and "Done without tools." in finished.text
    first, retry = openai_server.requests
    assert first.get("tools") and "tools" not in retry
    assert retry["messages"][1:] == first["messages"][1:]
    assert "SEARCH/REPLACE" in system_text(retry) and "edit_file tool" not in system_text(retry)
    notices = [e.text for e in events if type(e) is TurnNotice and "refused tools" in e.text]
    assert notices == [
        "my-model's server refused tools; this session goes on without them "
        "(set ACDC_MODEL_TOOLS=openai/my-model=off to skip the try)."
    ]

    openai_server.enqueue(answer(["Second."]))
    finished, events = await ask(openai_server, session, "second")
    assert finished.status == "complete"
    assert len(openai_server.requests) == 3 and "tools" not in openai_server.requests[2]
    assert "SEARCH/REPLACE" in system_text(openai_server.requests[2])
    assert not [e for e in events if type(e) is TurnNotice and "refused tools" in e.text]


def test_refusals_of_tools_are_told_from_other_client_errors():
    from chat.llm.errors import refuses_tools

    said = [
        VLLM_REFUSAL,
        "registry.ollama.ai/library/gemma:2b does not support tools",
        "tools param requires --jinja flag",
        "1 validation error: tools Extra inputs are not permitted",
        "litellm.UnsupportedParamsError: ollama does not support parameters: ['tools']",
        "Unrecognized request argument supplied: functions",
    ]
    assert all(refuses_tools(BadRequestError("rejected", detail=text)) for text in said)
    others = [
        BadRequestError(
            "rejected",
            detail="messages: an assistant message with tool_calls "
            "must be followed by tool messages responding to each tool_call_id",
        ),
        BadRequestError("rejected", detail="max_tokens must be at least 1"),
        ContextWindowExceededError("too long", detail="maximum context length is 4096 tokens"),
    ]
    assert not any(refuses_tools(error) for error in others)


def test_the_settings_turn_tools_off_and_name_the_window_and_prices():
    def unknown(model: str) -> dict:
        raise ValueError(model)

    said = ModelSettings.parse(f"{MODEL}=off", 128_000, "0.5", "1.5")
    facts, warning = model_facts(MODEL, unknown, said)
    assert not facts.supports_tools and facts.max_input_tokens == 128_000
    assert facts.input_cost_per_token == 0.5e-6 and facts.output_cost_per_token == 1.5e-6
    plain, notice = model_facts(MODEL, unknown)
    assert plain.supports_tools and plain.max_input_tokens == 32_000
    for name in ("ACDC_CONTEXT_WINDOW", "ACDC_INPUT_PRICE", "ACDC_OUTPUT_PRICE"):
        assert name in notice
    assert not model_facts("someprovider/x", unknown)[0].supports_tools
    runtime = Runtime(None, model_info=unknown, model_settings=ModelSettings.parse("off"))
    assert not runtime.supports_tools("openai/gpt-4o")


async def test_what_acdc_assumes_of_an_unknown_model_is_said_once_a_session(openai_server):
    """The window, prices and tools acdc assumes are a note in the conversation the first
    time, not again on every turn (the journey on express showed one before each reply)."""
    from channels.db import database_sync_to_async

    from history.models import Message

    openai_server.enqueue(answer(["One."]), answer(["Two."]))
    session = await new_session(model=MODEL)
    for text in ("first", "second"):
        finished, _ = await ask(openai_server, session, text)
        assert finished.status == "complete"
    notes = await database_sync_to_async(list)(
        Message.objects.filter(session_id=session.id, system_event=True).values_list(
            "content", flat=True
        )
    )
    assert [n for n in notes if "has no entry for 'openai/my-model'" in n] == [
        next(n for n in notes if "has no entry" in n)
    ]
