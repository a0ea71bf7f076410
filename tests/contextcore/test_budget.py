from __future__ import annotations

from contextcore.conversation.exchanges import group_exchanges, window_history
from contextcore.models import ModelFacts

SMALL = ModelFacts(name="small", max_input_tokens=8_000, max_output_tokens=1_000)


def test_shed_files_removes_the_largest_unpinned_files_when_over_budget(make_manager):
    manager = make_manager(facts_=SMALL)
    manager.file_context.add_file("small.py", "x = 1\n")
    manager.file_context.add_file("big.py", "word " * 9_000)
    manager.file_context.add_file("pinned.py", "word " * 3_000)
    manager.pin_file("pinned.py")
    assert manager.shed_files_if_needed() == ["big.py"]
    assert manager.file_context.get_files() == ["pinned.py", "small.py"]


def test_shed_files_is_a_no_op_under_budget(make_manager):
    manager = make_manager(facts_=SMALL)
    manager.file_context.add_file("a.py", "x = 1\n")
    assert manager.shed_files_if_needed() == []
    assert manager.file_context.has_file("a.py")


def test_prepare_request_sheds_and_tells_the_user_which_files(make_manager):
    manager = make_manager(facts_=SMALL)
    manager.file_context.add_file("huge.py", "word " * 20_000)
    prepared = manager.prepare_request("hi")
    notice = next(n for n in prepared.notices if n.kind == "files_shed")
    assert notice.paths == ("huge.py",) and "huge.py" in notice.text
    assert prepared.estimated_tokens <= SMALL.input_budget


def test_files_to_shed_names_what_sending_would_shed_and_changes_nothing(make_manager):
    manager = make_manager(facts_=SMALL)
    manager.file_context.add_file("small.py", "x = 1\n")
    manager.file_context.add_file("big.py", "word " * 9_000)
    manager.file_context.add_file("pinned.py", "word " * 3_000)
    manager.pin_file("pinned.py")
    assert manager.files_to_shed() == ["big.py"]
    assert manager.file_context.get_files() == ["big.py", "pinned.py", "small.py"]
    assert manager.file_context.pinned == {"pinned.py"}
    shed = next(n for n in manager.prepare_request("").notices if n.kind == "files_shed")
    assert shed.paths == ("big.py",)


def test_files_to_shed_is_empty_when_everything_fits(make_manager):
    manager = make_manager(facts_=SMALL)
    manager.file_context.add_file("a.py", "x = 1\n")
    assert manager.files_to_shed() == []


def test_emergency_truncate_drops_old_exchanges_and_keeps_pairs(make_manager):
    manager = make_manager(compaction_trigger_tokens=300)
    for i in range(20):
        manager.add_exchange(f"question {i} " + "w " * 20, f"answer {i} " + "w " * 20)
    dropped = manager.emergency_truncate()
    history = manager.get_history()
    assert dropped > 0 and len(history) == 40 - dropped
    assert [m["role"] for m in history] == ["user", "assistant"] * (len(history) // 2)
    assert history[-1]["content"].startswith("answer 19")
    assert manager.history_token_count() <= 300


def test_emergency_truncate_does_nothing_below_twice_the_trigger(make_manager):
    manager = make_manager(compaction_trigger_tokens=10_000)
    manager.add_exchange("q", "a")
    assert manager.emergency_truncate() == 0


def test_the_window_keeps_the_first_message_marks_the_gap_and_keeps_recent_pairs(counter):
    history = []
    for i in range(30):
        history += [
            {"role": "user", "content": f"q{i} " + "w " * 30},
            {"role": "assistant", "content": f"a{i} " + "w " * 30},
        ]
    window = window_history(history, 600, counter)
    assert window[0] is history[0] and window[1] is history[1]
    omitted = len(history) - (len(window) - 2)
    assert window[2]["content"] == f"[{omitted} earlier messages omitted for brevity]"
    assert window[-1] is history[-1] and counter.count(window) <= 600
    kept = [m for m in window[4:]]
    assert all(g[0]["role"] == "user" and len(g) == 2 for g in group_exchanges(kept))


def test_history_is_trimmed_in_the_request_when_it_does_not_fit(make_manager):
    manager = make_manager(facts_=SMALL, compaction_trigger_tokens=100_000)
    for i in range(60):
        manager.add_exchange(f"q{i} " + "w " * 60, f"a{i} " + "w " * 60)
    prepared = manager.prepare_request("latest")
    assert prepared.estimated_tokens <= SMALL.input_budget
    assert any(n.kind == "history_trimmed" for n in prepared.notices)
    texts = [m["content"] for m in prepared.messages if isinstance(m["content"], str)]
    assert texts[-1] == "latest" and any(t.startswith("q0 ") for t in texts)
    assert len(manager.get_history()) == 120  # the working history itself is untouched


def test_an_oversized_message_is_truncated_with_a_marker(make_manager):
    manager = make_manager(facts_=SMALL)
    prepared = manager.prepare_request("word " * 20_000)
    assert prepared.estimated_tokens <= SMALL.input_budget
    assert "[truncated:" in prepared.messages[-1]["content"]
    assert any(n.kind == "message_truncated" for n in prepared.notices)
