from __future__ import annotations

import pytest

from contextcore.models import ModelFacts
from contextcore.prompt.cachepolicy import FIVE_MINUTES, OFF, ONE_HOUR, choose_write
from contextcore.prompt.cacherules import ANTHROPIC, OPENAI
from contextcore.prompt.cachesim import CacheSimulator

STEADY = [60.0] * 12
MEETINGS = [60.0, 1200.0] * 6  # every other answer read for twenty minutes
AWAY = [7200.0] * 12  # a question every two hours


def _simulated_cost(counter, gaps: list[float], write: str) -> float:
    """A 6,000-token prefix that grows by 200 tokens a request, sent on `gaps`, every
    breakpoint asking for `write` (none when OFF)."""
    sim, now, cost = CacheSimulator(counter, ANTHROPIC), 0.0, 0.0
    for n, gap in enumerate([0.0, *gaps]):
        now += gap
        blocks = [{"type": "text", "text": " ".join(["word"] * 6000)}]
        blocks += [
            {"type": "text", "text": f"turn {i} " + " ".join(["talk"] * 200)} for i in range(n)
        ]
        if write != OFF:
            marker = {"type": "ephemeral", **({"ttl": "1h"} if write == ONE_HOUR else {})}
            blocks[-1] = {**blocks[-1], "cache_control": marker}
        cost += sim.request([{"role": "user", "content": blocks}], now).cost
    return cost


@pytest.mark.parametrize(
    ("gaps", "expected"), [(STEADY, FIVE_MINUTES), (MEETINGS, ONE_HOUR), (AWAY, OFF)]
)
def test_the_policy_writes_the_lifetime_the_simulator_finds_cheapest(counter, gaps, expected):
    costs = {
        write: _simulated_cost(counter, gaps, write) for write in (OFF, FIVE_MINUTES, ONE_HOUR)
    }
    assert min(costs, key=costs.__getitem__) == expected
    assert choose_write(ANTHROPIC, gaps).write == expected


def test_a_new_session_writes_for_five_minutes_and_one_long_pause_changes_nothing():
    assert choose_write(ANTHROPIC, []).write == FIVE_MINUTES
    assert choose_write(ANTHROPIC, [*STEADY, 4000.0]).write == FIVE_MINUTES


def test_automatic_rules_have_nothing_to_choose():
    choice = choose_write(OPENAI, AWAY)
    assert (choice.write, choice.seconds) == (FIVE_MINUTES, OPENAI.ttl)


def _marks(messages) -> list[dict]:
    return [
        block["cache_control"]
        for m in messages
        if isinstance(m["content"], list)
        for block in m["content"]
        if "cache_control" in block
    ]


def _session(manager, gaps: list[float]) -> list:
    now, sent = 1000.0, []
    for n, gap in enumerate([0.0, *gaps]):
        now += gap
        prepared = manager.prepare_request(f"question {n}", now=now)
        sent.append(prepared)
        manager.record_exchange(f"question {n}", "an answer " * 300)
    return sent


def test_the_turn_marks_its_prefix_for_an_hour_when_the_rhythm_says_so(make_manager, tmp_path):
    (tmp_path / "big.py").write_text("value = compute(1)\n" * 1500)
    manager = make_manager(repo_root=tmp_path)
    assert manager.file_context.add_file("big.py").ok
    sent = _session(manager, MEETINGS)
    # Early on the history's end is written for 5 minutes (the stable prefix for an hour).
    assert _marks(sent[1].messages)[-1].get("ttl") is None
    assert _marks(sent[-1].messages) and all(m["ttl"] == "1h" for m in _marks(sent[-1].messages))
    # The layout counts on an hour: a twenty-minute pause does not rebuild it.
    assert manager.stability.layout.written_ttl == 3600.0


def test_a_session_that_is_never_back_within_the_hour_writes_nothing(make_manager, tmp_path):
    (tmp_path / "big.py").write_text("value = compute(1)\n" * 1500)
    manager = make_manager(repo_root=tmp_path)
    assert manager.file_context.add_file("big.py").ok
    sent = _session(manager, AWAY)
    assert _marks(sent[0].messages) and not _marks(sent[-1].messages)


def test_a_model_that_caches_nothing_gets_the_plain_layout(make_manager, tmp_path, facts):
    (tmp_path / "big.py").write_text("value = compute(1)\n" * 1500)
    plain = ModelFacts(name="mistral/mistral-large-latest", max_input_tokens=100_000)
    managers = [make_manager(repo_root=tmp_path, facts_=f) for f in (facts, plain)]
    for manager in managers:
        assert manager.file_context.add_file("big.py").ok
    cached, uncached = (_session(m, [60.0] * 3)[-1] for m in managers)
    assert _marks(cached.messages) and not _marks(uncached.messages)
    assert uncached.estimated_tokens <= cached.estimated_tokens


def _talk(manager, sim, now: float, turns: int) -> float:
    for n in range(turns):
        now += 60.0
        prepared = manager.prepare_request(f"question {n}", now=now)
        sim.request(prepared.messages, now=now)
        manager.record_exchange(f"question {n}", "an answer " * 300)
    return now


def _compact(manager, sim, now: float):
    manager.set_history(
        [{"role": "user", "content": "summary"}, {"role": "assistant", "content": "ok"}]
    )
    prepared = manager.prepare_request("next question", now=now)
    manager.record_exchange("next question", "an answer " * 300)
    return prepared, sim.request(prepared.messages, now=now)


def test_after_a_compaction_the_snapshot_is_written_for_an_hour_and_the_next_reads_it(
    make_manager, tmp_path, counter
):
    (tmp_path / "big.py").write_text("value = compute(1)\n" * 1500)
    manager = make_manager(repo_root=tmp_path)
    assert manager.file_context.add_file("big.py").ok
    manager.set_history([])  # how a turn opens a session: loading it is no rewrite
    sim = CacheSimulator(counter, ANTHROPIC)
    now = _talk(manager, sim, 1000.0, 12)  # twelve minutes of steady talk
    assert all(mark.get("ttl") is None for mark in _marks(manager.preview_request("").messages))
    # Every request read the longest prefix, so the snapshot's own 5-minute entry is gone.
    first, cost = _compact(manager, sim, now + 60.0)
    assert cost.cache_read_tokens == 0
    marks = _marks(first.messages)
    assert len(marks) >= 2 and marks[-1].get("ttl") is None
    assert all(mark["ttl"] == "1h" for mark in marks[:-1])
    # Twelve more minutes, another compaction: the system prompt and the files are read.
    now = _talk(manager, sim, now + 60.0, 12)
    _, cost = _compact(manager, sim, now + 60.0)
    assert cost.cache_read_tokens > 1500 * 5
