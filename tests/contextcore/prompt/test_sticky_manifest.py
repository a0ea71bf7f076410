"""The "Current context" manifest stays where it was sent while it says the same thing.

At the end of every request it would break the next request's prefix right after the
history: the provider would re-read the previous question, its answer and the manifest at
full price every turn. Kept in place, each request repeats the whole previous one, so only
the answer and the new question are new, as in the plainest layout.
"""

from __future__ import annotations

from dataclasses import replace

from contextcore.prompt.cacherules import DEEPSEEK
from contextcore.prompt.cachesim import CacheSimulator
from contextcore.prompt.revisions import MANIFEST_HEADER
from tests.contextcore.prompt.exchanges import BODY, selecting, text, texts, turn
from tests.current_files import read_current_files


def _manager(make_manager, tmp_path):
    return selecting(make_manager, tmp_path, {"app.py": BODY})


def test_with_nothing_changed_each_request_repeats_the_whole_previous_one(make_manager, tmp_path):
    manager = _manager(make_manager, tmp_path)
    first = turn(manager, "What does function_3 do?", 0.0)
    second = turn(manager, "And function_4?", 30.0)
    third = turn(manager, "And function_5?", 60.0)

    assert texts(second[: len(first)]) == texts(first)
    assert texts(third[: len(second)]) == texts(second)
    assert [text(m) for m in third].count(text(first[-3])) == 1  # one manifest, kept
    assert text(first[-3]).startswith(MANIFEST_HEADER)


def test_automatic_caching_leaves_only_the_answer_and_the_question_uncached(
    make_manager, tmp_path, counter
):
    manager = _manager(make_manager, tmp_path)
    simulator = CacheSimulator(counter, DEEPSEEK)
    simulator.request(turn(manager, "What does function_3 do?", 0.0), 0.0)
    second = turn(manager, "And function_4?", 30.0)
    cost = simulator.request(second, 30.0)

    new = counter.count(second[-2:])  # the first answer and the second question
    assert cost.prompt_tokens - cost.cache_read_tokens <= new + DEEPSEEK.granularity


def test_a_changed_file_gets_a_new_manifest_at_the_end_and_the_old_one_stays(
    make_manager, tmp_path
):
    manager = _manager(make_manager, tmp_path)
    first = turn(manager, "What does function_3 do?", 0.0)
    (tmp_path / "app.py").write_text(BODY.replace("value * 3", "value * 33"))
    second = turn(manager, "And now?", 30.0)

    assert texts(second[: len(first) - 1]) == texts(first[:-1])  # all but the question
    manifests = [i for i, m in enumerate(second) if text(m).startswith(MANIFEST_HEADER)]
    assert len(manifests) == 2 and manifests[-1] == len(second) - 3
    assert "app.py: version 2" in text(second[manifests[-1]])
    assert read_current_files(second)["app.py"] == BODY.replace("value * 3", "value * 33")


def test_the_manifest_survives_the_layout_being_stored_and_read_back(make_manager, tmp_path):
    manager = _manager(make_manager, tmp_path)
    first = turn(manager, "What does function_3 do?", 0.0)
    stored = manager.stability.layout.to_dict()
    manager.stability.layout = type(manager.stability.layout).from_dict(stored)
    second = turn(manager, "And function_4?", 30.0)

    assert texts(second[: len(first)]) == texts(first)


def test_stale_copies_are_kept_until_reading_them_has_cost_what_a_rebuild_would(
    make_manager, tmp_path
):
    """Rent, then buy: a dropped file's copy stays in the cached prefix (read at the read
    price every request) until those reads add up to what sending the prefix again would
    cost over reading it; then the layout is rebuilt without it."""
    (tmp_path / "kept.py").write_text(BODY)
    manager = _manager(make_manager, tmp_path)
    assert manager.file_context.add_file("kept.py").ok
    turn(manager, "Compare them.", 0.0)
    manager.file_context.remove_file("app.py")
    policy = manager.config.layout_policy(manager.facts.input_budget)
    stale = manager.counter.count_text(BODY)
    assert stale < policy.stale_budget_tokens  # the budget alone would never rebuild

    def short_turn(n: int) -> list:
        messages = manager.prepare_request(f"Question {n}", now=30.0 * (n + 1)).messages
        manager.record_exchange(f"Question {n}", "Yes.")
        return messages

    turns = 0
    while "app.py" in text(short_turn(turns)[1]):
        turns += 1
        assert manager.stability.layout.stale_paid > 0
        assert turns < 100, "the stale copy was never dropped"
    premium = manager.counter.count_text(BODY) + manager.counter.count(manager.get_history())
    # Dropped once the reads had paid about the premium (1.25x write - 0.1x read)...
    assert turns * stale * 0.1 >= 0.5 * premium * 1.15
    # ...and not long after.
    assert (turns - 1) * stale * 0.1 <= 1.5 * premium * 1.15
    assert manager.stability.layout.stale_paid == 0.0


def test_a_model_switch_rebuilds_the_layout_without_old_copies(make_manager, tmp_path):
    """A cache belongs to one model: after a switch nothing is cached, so the prefix is
    sent afresh, and then it may as well leave out the copies kept only for the cache."""
    (tmp_path / "kept.py").write_text(BODY * 4)  # small beside it, app.py's copy is
    manager = _manager(make_manager, tmp_path)  # not worth a rebuild for its own sake
    assert manager.file_context.add_file("kept.py").ok
    turn(manager, "Compare them.", 0.0)
    manager.file_context.remove_file("app.py")
    same_model = turn(manager, "Only kept.py now.", 30.0)
    assert "app.py" in text(same_model[1])  # kept: the prefix is still cached

    manager.facts = replace(manager.facts, name="openai/gpt-4.1")
    switched = turn(manager, "And with another model?", 60.0)

    assert "app.py" not in text(switched[1])
    assert "kept.py" in text(switched[1])
