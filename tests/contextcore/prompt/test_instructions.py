"""Project instructions in the prompt: in the system message, cached, capped, restored.

They follow the system prompt and come before the repository map, in the first cached
block, so two turns in a row send the same bytes up to the history; a change of the file
changes the prompt once (the layout rebuilds), not every turn.
"""

from __future__ import annotations

from dataclasses import replace

from contextcore.manager import ContextManager
from contextcore.prompt.assembly import has_marker
from contextcore.prompt.instructions import InstructionFile, Instructions, capped_file
from tests.contextcore.prompt.exchanges import BODY, text, turn

RULES = "Run `make test` before answering.\nPrefer small functions.\n" * 40


def _with(manager: ContextManager, *files: tuple[str, str]) -> ContextManager:
    manager.instructions = Instructions(tuple(InstructionFile(n, t) for n, t in files))
    return manager


def test_the_system_message_holds_them_after_the_prompt_and_before_the_map(make_manager):
    manager = _with(make_manager(), ("AGENTS.md", "Use tabs."), ("CLAUDE.md", "Be brief."))
    manager.set_context_texts(repo_map="pkg/a.py:\n  def alpha()")

    system = text(manager.prepare_request("q").messages[0])

    prompt = manager.config.system_prompt
    assert system.startswith(prompt + "\n\n# Project instructions\n")
    assert system.index("## AGENTS.md\n\nUse tabs.") < system.index("## CLAUDE.md\n\nBe brief.")
    assert system.index("Be brief.") < system.index("# Repository Structure")


def test_two_turns_in_a_row_send_a_byte_identical_prefix(make_manager):
    manager = _with(make_manager(), ("AGENTS.md", RULES))
    manager.set_context_texts(reference=BODY)

    first = turn(manager, "one", now=0.0)
    second = turn(manager, "two", now=10.0)

    assert RULES.strip() in text(first[0])
    marks = [i for i, m in enumerate(first) if has_marker(m)]
    assert marks, "the first request caches its prefix"
    # Up to the first request's last breakpoint the second request is the same bytes.
    assert second[: marks[-1]] == first[: marks[-1]]
    assert text(second[marks[-1]]) == text(first[marks[-1]])


def test_a_changed_file_changes_the_prompt_once(make_manager):
    manager = _with(make_manager(), ("AGENTS.md", RULES))
    turn(manager, "one", now=0.0)
    _with(manager, ("AGENTS.md", RULES + "Never use print.\n"))

    changed = manager.prepare_request("two", now=5.0)
    manager.record_exchange("two", "answer")
    again = manager.prepare_request("three", now=10.0)

    assert changed.breakdown["rebuild_reason"] == "system prompt changed"
    assert "Never use print." in text(changed.messages[0])
    assert again.breakdown["rebuild_reason"] == ""
    assert again.messages[0] == changed.messages[0]


def test_their_tokens_are_a_section_of_their_own(make_manager):
    manager = _with(make_manager(), ("AGENTS.md", RULES))

    sections = manager.estimate_breakdown("")["sections"]

    assert sections["instructions"] >= manager.counter.count_text(RULES) - 5
    assert sections["system"] < sections["instructions"]


def test_switched_off_they_are_not_sent(make_manager):
    manager = make_manager()
    manager.instructions = Instructions(switched_off=("AGENTS.md",))

    messages = manager.prepare_request("q").messages

    assert "Project instructions" not in text(messages[0])
    assert "instructions" not in manager.estimate_breakdown("")["sections"]


def test_a_long_file_is_cut_at_a_line_with_a_note(counter):
    long = "".join(f"Rule {i}: keep the code tidy and the tests honest.\n" for i in range(2000))

    capped = capped_file("AGENTS.md", long, counter.count_text, 500)

    assert capped.capped and capped.tokens > 10_000
    assert counter.count_text(capped.text) <= 560
    body, note = capped.text.split("\n\n[acdc: ")
    assert body.endswith("honest.")  # whole lines only
    assert note.startswith("AGENTS.md was cut here") and "at most 500 are sent" in note


def test_a_short_file_is_sent_as_it_is(counter):
    small = capped_file("CLAUDE.md", "Be brief.\n", counter.count_text, 500)

    assert small == InstructionFile("CLAUDE.md", "Be brief.\n", small.tokens)
    assert not small.capped


def test_they_survive_the_session_state(make_manager, facts, counter):
    manager = make_manager()
    manager.instructions = Instructions(
        (InstructionFile("AGENTS.md", "Use tabs.", 3),),
        switched_off=(),
        refused=((".cursorrules", "binary file"),),
    )

    restored = ContextManager.from_state(manager.to_state(), facts, counter)

    assert restored.instructions == manager.instructions
    assert restored.preview_request("q").messages[0] == manager.preview_request("q").messages[0]


def test_over_the_window_they_go_before_a_pinned_file_with_a_notice(make_manager, facts):
    small = replace(facts, max_input_tokens=2_000, max_output_tokens=200)
    manager = _with(make_manager(facts_=small), ("AGENTS.md", RULES * 6))
    manager.file_context.add_file("notes.py", "def f():\n    return 1\n")
    manager.pin_file("notes.py")

    prompt = manager.prepare_request("q")

    assert "Project instructions" not in text(prompt.messages[0])
    assert "def f():" in "".join(text(m) for m in prompt.messages)
    said = [n.text for n in prompt.notices]
    assert (
        "The project instructions were left out of this request to fit the model's window." in said
    )
