"""Suggested for this message in the engine: in the uncached tail, and first to go."""

from __future__ import annotations

import json

from contextcore.manager import ContextManager
from contextcore.models import ModelFacts
from contextcore.prompt.assembly import has_marker
from contextcore.prompt.suggested import HEADER, Region, Suggested

BODY = "def compute_late_fee(invoice):\n    return invoice.days_late * 3\n"


def region(path: str = "app/billing.py", text: str = BODY) -> Region:
    end = text.count("\n")
    return Region(path, "compute_late_fee", 1, end, text, ("compute_late_fee",), "python")


def cached_prefix(messages) -> list:
    marks = [i for i, m in enumerate(messages) if has_marker(m)]
    return messages[: marks[-1] + 1] if marks else []


def test_the_part_renders_each_region_with_its_lines_and_why():
    text = Suggested.of([region()]).text
    assert text.startswith(HEADER)
    assert "app/billing.py lines 1-2 (compute_late_fee); matched: compute_late_fee" in text
    assert "```python\n" + BODY + "```" in text
    assert Suggested.of([]).text == ""


def test_suggestions_go_after_the_cached_prefix_which_they_never_change(make_manager):
    manager = make_manager()
    manager.file_context.add_file("app/main.py", "value = 1\n" * 800)
    for turn in range(2):
        manager.prepare_request(f"question {turn}", now=turn * 60.0)
        manager.record_exchange(f"question {turn}", f"answer {turn}")
    plain = manager.preview_request("why?", now=120.0).messages
    manager.suggested = Suggested.of([region()])
    with_part = manager.preview_request("why?", now=120.0).messages

    assert cached_prefix(with_part) == cached_prefix(plain) != []
    assert with_part[-3]["content"].startswith(HEADER)  # the tail, before the message
    assert with_part[-1] == plain[-1] and len(with_part) == len(plain) + 2
    breakdown = manager.preview_request("why?", now=120.0).breakdown
    assert breakdown["sections"]["suggested"] > 0


def test_a_request_over_budget_drops_the_suggestions_before_any_file(make_manager):
    facts = ModelFacts(name="small", max_input_tokens=9_000, max_output_tokens=1_000)
    manager = make_manager(facts_=facts)
    manager.file_context.add_file("app/main.py", "value = 1\n" * 1_400)
    manager.suggested = Suggested.of([region(text=BODY * 250)])
    assert manager.estimate_prompt_tokens("why?") > facts.input_budget

    prepared = manager.prepare_request("why?")

    assert manager.file_context.has_file("app/main.py")
    assert not [n for n in prepared.notices if n.kind == "files_shed"]
    assert not any(HEADER in json.dumps(m) for m in prepared.messages)
    assert "value = 1" in json.dumps(prepared.messages)


def test_the_suggestions_survive_the_state_round_trip(make_manager, facts, counter):
    manager = make_manager()
    manager.suggested = Suggested.of([region()])
    state = json.loads(json.dumps(manager.to_state()))
    restored = ContextManager.from_state(state, facts, counter, config=manager.config)
    assert restored.suggested == manager.suggested
