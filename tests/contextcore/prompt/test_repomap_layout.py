"""Where the repository map sits in acdc's append-only layout, and how it changes.

The main map is in the system message (seed 000's "Repository Structure") and stays
byte-identical from turn to turn; when it changes, the system message still does not: a
diff of the map is appended after the cached prefix, like a changed file. The focus part
goes after the history, so its changing every turn costs no cache.
"""

from __future__ import annotations

from dataclasses import replace

from contextcore.prompt.assembly import FOCUS_HEADER
from tests.contextcore.prompt.exchanges import text, texts

MAP = "\n".join(
    ["Signatures of the repository's most relevant definitions, by file (bodies elided):"]
    + [
        f"pkg/module_{i}.py:\n  class Thing{i}\n    def run_{i}(self, x: int) -> int"
        for i in range(40)
    ]
)


def _turn(manager, question, *, repo_map=MAP, focus=""):
    manager.set_context_texts(repo_map=repo_map)
    manager.map_focus = focus
    prompt = manager.prepare_request(question)
    manager.record_exchange(question, f"answer to {question}")
    return prompt.messages


def test_the_map_is_in_the_system_message_under_repository_structure(make_manager):
    messages = _turn(make_manager(), "q")

    assert messages[0]["role"] == "system"
    assert "\n\n# Repository Structure\n" + MAP in text(messages[0])


def test_the_map_is_byte_identical_across_turns_with_no_change(make_manager):
    manager = make_manager()
    first = _turn(manager, "one", focus="pkg/a.py:\n  def alpha()")
    second = _turn(manager, "two", focus="pkg/b.py:\n  def beta()")

    assert second[0] == first[0]
    tail = 3  # the focus pair and the question
    # (compared as text: the cache breakpoint moves on to the end of the new prefix)
    assert texts(second[: len(first) - tail]) == texts(first[: len(first) - tail])
    # The manifest did not change, so it stays before the history, in the cached prefix.
    assert [text(m) for m in second[3:5]] == ["one", "answer to one"]
    assert not any("The repository map changed" in text(m) for m in second)


def test_an_edited_file_changes_the_map_only_in_a_delta_after_the_prefix(make_manager):
    manager = make_manager()
    first = _turn(manager, "one")
    edited = MAP.replace("def run_7(self, x: int) -> int", "def run_7(self, x: int, y: int) -> int")
    second = _turn(manager, "two", repo_map=edited)

    assert text(second[0]) == text(first[0])  # the old map stays in the prefix
    assert texts(second[: len(first) - 1]) == texts(first[:-1])  # all but the question
    updates = [m for m in second if "The repository map changed" in text(m)]
    assert len(updates) == 1
    delta = text(updates[0])
    assert "+    def run_7(self, x: int, y: int) -> int" in delta
    assert "-    def run_7(self, x: int) -> int" in delta
    assert len(delta.splitlines()) < 15  # one changed line and its context, not the map
    assert second.index(updates[0]) == 5  # right after the history it was first seen at


def test_the_focus_follows_the_history_and_changes_nothing_before_it(make_manager):
    manager = make_manager()
    _turn(manager, "one")
    messages = _turn(manager, "two", focus="pkg/b.py:\n  def beta()")

    focus = [i for i, m in enumerate(messages) if FOCUS_HEADER in text(m)]
    assert focus == [len(messages) - 3]
    assert "def beta()" not in text(messages[0])
    assert text(messages[focus[0] - 1]) == "answer to one"


def test_a_map_too_large_for_the_window_is_left_out_with_a_notice(make_manager, facts):
    manager = make_manager(facts_=replace(facts, max_input_tokens=3000, max_output_tokens=500))
    manager.set_context_texts(repo_map=MAP * 3)
    prompt = manager.prepare_request("q")

    assert "# Repository Structure" not in text(prompt.messages[0])
    assert any("repo map" in n.text for n in prompt.notices)


def test_the_breakdown_counts_the_map_and_its_focus_as_the_repository_map(make_manager, counter):
    manager = make_manager()
    manager.set_context_texts(repo_map=MAP)
    manager.map_focus = "pkg/b.py:\n  def beta()"

    sections = manager.prepare_request("q").breakdown["sections"]

    focus = counter.count_text(FOCUS_HEADER + manager.map_focus)
    assert sections["repo_map"] >= counter.count_text(MAP) + focus
    assert sections["system"] < counter.count_text(MAP)


def test_a_step_tells_the_manager_the_text_it_changed_and_the_others_stay(make_manager):
    manager = make_manager()
    manager.set_context_texts(repo_map=MAP, reference="related", metadata=("a.py 10 chars",))
    before = manager.prepare_request("q").messages
    manager.update_context_texts(metadata=("a.py 10 chars",))  # the sets, unchanged
    assert manager.prepare_request("q").messages == before  # the same bytes
    manager.update_context_texts(reference="")  # grounding off: only the reference goes
    assert (manager.repo_map, manager.reference, manager.metadata) == (MAP, "", ("a.py 10 chars",))
    manager.update_context_texts(repo_map="pkg/a.py:\n  def alpha()")
    assert manager.metadata == ("a.py 10 chars",) and "def alpha()" in text(
        manager.prepare_request("q").messages[0]
    )
