"""The dry-run report's figures come from one count: the prompt it reports (the cache
simulator's, as the usage chunk says), each breakpoint's prefix and the cached part of
its cost table agree, tools included, so no prefix is larger than the prompt it is in."""

from __future__ import annotations

import re

from chat.llm.report import render_report
from chat.repo.edittools import EDIT_TOOL_SPECS
from contextcore.models import ModelFacts
from contextcore.prompt.cachesim import CacheSimulator
from contextcore.prompt.siderequest import tool_tokens
from contextcore.tokens import TokenCounter

MARK = {"type": "ephemeral"}


def figures(text: str) -> tuple[int, list[int], int]:
    total = int(re.search(r"Total prompt tokens: ([\d,]+)", text)[1].replace(",", ""))
    prefixes = [int(n.replace(",", "")) for n in re.findall(r"^\| \d+ \| \d+ \| ([\d,]+) \|$",
                                                             text, re.M)]
    cached = int(re.search(r"cache written \(([\d,]+) tokens", text)[1].replace(",", ""))
    return total, prefixes, cached


def test_the_breakpoints_and_the_cost_table_count_as_the_prompt_does():
    counter = TokenCounter()
    tools = [*EDIT_TOOL_SPECS, {"type": "function", "function": {"name": "grep",
             "description": "Search the repository " * 20, "parameters": {"type": "object"}}}]
    system = [{"type": "text", "text": "You are acdc. " * 300, "cache_control": MARK}]
    messages = [
        {"role": "system", "content": system},
        {"role": "user", "content": "earlier question " * 40},
        {"role": "assistant", "content": [{"type": "text", "text": "ok", "cache_control": MARK}]},
        {"role": "user", "content": "the last one"},
    ]
    billed = CacheSimulator(counter).request(messages, 0.0, tools=tools)
    text = render_report(model="acdc/dry-run", messages=messages, tools=tools,
                         facts=ModelFacts(name="x"), breakdown=None, counter=counter,
                         prompt_tokens=billed.prompt_tokens)
    total, prefixes, cached = figures(text)
    assert total == counter.count(messages) + tool_tokens(tools, counter)
    assert len(prefixes) == 2 and prefixes[0] < prefixes[1] < total
    assert cached == prefixes[-1]
    # Everything but the last user message is the cached prefix: the rest is that message.
    assert total - cached == counter.count(messages[-1])
