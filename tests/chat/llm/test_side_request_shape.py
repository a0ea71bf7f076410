"""A request meant to read the chat's cache repeats the chat's prefix byte for byte in
the body the provider receives: litellm's own transformations of the chat's next request
and of a side request (summarizer) and a keep-alive refresh, for Anthropic Messages and
OpenAI Chat Completions, agree on tools, tool choice, system and every message block up
to the side request's instruction."""

from __future__ import annotations

import json
from typing import Any

import pytest

from chat.llm import sdk
from chat.llm.facts import model_facts
from chat.repo.edittools import with_edit_tools
from chat.repo.tools.context_tools import TOOL_SPECS
from contextcore.conversation.topics import side_request
from contextcore.manager import ContextConfig, ContextManager
from contextcore.prompt.cacherules import rules_for
from contextcore.prompt.cachesim import CacheSimulator
from contextcore.prompt.siderequest import NO_TOOLS_NOTE, refresh_request
from contextcore.tokens import TokenCounter

BODY = "".join(f"def function_{i}(value):\n    return value * {i}\n\n" for i in range(150))
MODELS = ("anthropic/claude-sonnet-4-5", "openai/gpt-4.1")


def _body(model: str, messages: list[dict], tools: list[dict] | None) -> dict[str, Any]:
    """What litellm sends the provider for these messages and tools."""
    sdk.litellm()
    from litellm.llms.anthropic.chat.transformation import AnthropicConfig
    from litellm.llms.openai.chat.gpt_transformation import OpenAIGPTConfig

    config = AnthropicConfig() if model.startswith("anthropic/") else OpenAIGPTConfig()
    name = model.split("/", 1)[1]
    asked = {"max_tokens": 400, **({"tools": tools} if tools else {})}
    optional = config.map_openai_params(asked, {}, name, False)
    copies = json.loads(json.dumps(messages))
    return json.loads(json.dumps(config.transform_request(name, copies, optional, {}, {})))


def _blocks(body: dict[str, Any]) -> list[str]:
    """The body as the cache sees it: tools, tool choice, system, then each message
    block with its role, each as exact JSON."""
    head = [
        json.dumps(["tools", body.get("tools")]),
        json.dumps(["choice", body.get("tool_choice")]),
    ]
    head.append(json.dumps(["system", body.get("system")]))
    for message in body["messages"]:
        content = message["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        head += [json.dumps([message["role"], block], sort_keys=True) for block in blocks]
    return head


def _session(model: str, tmp_path) -> tuple[ContextManager, list[dict]]:
    """A manager for `model` with a file selected and three turns behind it; returns it
    and the last turn's messages."""
    (tmp_path / "app.py").write_text(BODY)
    facts = model_facts(model, sdk.model_info)[0]
    manager = ContextManager(
        facts, TokenCounter("cl100k_base"), repo_root=tmp_path, config=ContextConfig()
    )
    assert manager.file_context.add_file("app.py").ok
    for n in range(3):
        sent = manager.prepare_request(f"What does function_{n} do?", now=60.0 * n).messages
        manager.record_exchange(f"What does function_{n} do?", "It multiplies. " * 60)
    return manager, sent


def _side_requests(manager: ContextManager, model: str) -> list:
    prefix = manager.side_prefix(with_edit_tools(TOOL_SPECS))  # as a chat request holds them
    summary = side_request(
        prefix,
        "Summarize the conversation.",
        index="[0] USER: What does function_0 do?",
        transcript="x " * 20_000,  # a long transcript: reusing the prefix costs less
        counter=manager.counter,
        model=model,
    )
    return [summary, refresh_request(prefix, model)]


@pytest.mark.parametrize("model", MODELS)
def test_a_side_request_repeats_the_chats_next_request_up_to_its_instruction(model, tmp_path):
    manager, _ = _session(model, tmp_path)
    sides = _side_requests(manager, model)
    chat = manager.prepare_request("And function_4?", now=240.0).messages
    expected = _blocks(_body(model, chat, with_edit_tools(TOOL_SPECS)))
    for side in sides:
        assert NO_TOOLS_NOTE in side.messages[-1]["content"]
        got = _blocks(_body(model, side.messages, side.tools))
        instruction = next(i for i, b in enumerate(got) if NO_TOOLS_NOTE in b)
        assert instruction > 5  # tools, choice, system, then the prefix's message blocks
        assert got[:instruction] == expected[:instruction]


@pytest.mark.parametrize("model", MODELS)
def test_a_side_request_after_a_turn_reads_what_the_turn_wrote(model, tmp_path):
    manager, sent = _session(model, tmp_path)
    simulator = CacheSimulator(manager.counter, rules_for(manager.facts))
    simulator.request(sent, 120.0, tools=with_edit_tools(TOOL_SPECS))
    for side in _side_requests(manager, model):
        cost = simulator.request(side.messages, 130.0, tools=side.tools)
        assert cost.cache_read_tokens >= 0.8 * cost.prompt_tokens
