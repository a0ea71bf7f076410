from __future__ import annotations

from contextcore.conversation.compaction import (
    SUMMARY_ACK,
    CompactionConfig,
    CompactionPlan,
    HistoryCompactor,
    apply_compaction,
    create_compactor,
    fit_to_budget,
    summary_messages,
    verbatim_start,
)
from contextcore.conversation.topics import TopicDetector
from contextcore.llm import LLMError
from contextcore.manager import ContextConfig, ContextManager
from tests.contextcore.conversation.test_topics import HANG, ScriptedClient, answer

# Each exchange is 128 tokens: ten of them (1280) pass the 1000-token trigger, and the
# 300-token verbatim window holds the last two (messages 16 to 19).
CONFIG = CompactionConfig(
    compaction_trigger_tokens=1000,
    verbatim_window_tokens=300,
    summary_budget_tokens=50,
    min_verbatim_exchanges=2,
)
SUMMARY = "The user fixed the tokenizer tests and asked for shorter answers."


def conversation(exchanges: int = 10) -> list[dict]:
    messages = []
    for n in range(exchanges):
        messages += [
            {"role": "user", "content": f"question {n}: " + "alpha " * 55},
            {"role": "assistant", "content": f"answer {n}: " + "beta " * 55},
        ]
    return messages


def make_compactor(counter, *replies, config=CONFIG):
    client = ScriptedClient(*replies)
    detector = TopicDetector(client, "small", counter, timeout=0.05)
    compactor = HistoryCompactor(config, detector, client, "small", counter, timeout=0.05)
    return compactor, client


def contents(messages) -> list[str]:
    return [m["content"].split(":")[0] for m in messages]


def test_should_compact_is_false_below_the_trigger_and_true_above_it(counter):
    compactor, _ = make_compactor(counter)
    assert not compactor.should_compact(1000)
    assert compactor.should_compact(1001)
    assert compactor.should_compact(600, trigger_tokens=500)


async def test_a_disabled_compactor_never_triggers(counter):
    disabled = CompactionConfig(enabled=False, compaction_trigger_tokens=10)
    compactor, client = make_compactor(counter, config=disabled)
    assert not compactor.should_compact(10**6)
    result = await compactor.compact(conversation(), trigger_tokens=10)
    assert result.case == "none" and client.requests == []


async def test_empty_messages_give_case_none(counter):
    compactor, client = make_compactor(counter)
    result = await compactor.compact([], trigger_tokens=1)
    assert result.case == "none" and result.messages == () and client.requests == []


async def test_below_the_trigger_compact_returns_case_none_without_asking_the_model(counter):
    compactor, client = make_compactor(counter)
    messages = conversation(3)
    result = await compactor.compact(messages)
    assert result.case == "none" and list(result.messages) == messages
    assert client.requests == []


def test_apply_compaction_with_case_none_returns_the_messages_unchanged():
    messages = conversation()
    assert apply_compaction(messages, CompactionPlan("none", cut=10)) == messages


def test_apply_compaction_reduces_the_message_count():
    messages = conversation()
    truncated = apply_compaction(messages, CompactionPlan("truncate", cut=16))
    summarized = apply_compaction(messages, CompactionPlan("summarize", 16, SUMMARY))
    assert len(truncated) == 6 < len(summarized) == 8 < len(messages)


def test_the_verbatim_window_starts_at_the_recent_exchanges_that_fit(counter):
    assert verbatim_start(conversation(), 300, counter) == 16
    assert verbatim_start(conversation(), 10, counter) == 18


async def test_a_confident_boundary_in_the_verbatim_window_truncates_before_it(counter):
    compactor, client = make_compactor(counter, answer(16, 0.9))
    result = await compactor.compact(conversation())
    assert result.case == "truncate" and result.summary == ""
    assert contents(result.messages) == [
        "question 0",
        "answer 0",
        "question 8",
        "answer 8",
        "question 9",
        "answer 9",
    ]
    assert len(client.requests) == 1


async def test_a_low_confidence_boundary_summarizes(counter):
    compactor, _ = make_compactor(counter, answer(16, 0.3), SUMMARY)
    result = await compactor.compact(conversation())
    assert result.case == "summarize" and result.summary == SUMMARY


async def test_a_boundary_before_the_verbatim_window_summarizes(counter):
    compactor, _ = make_compactor(counter, answer(6, 0.95), SUMMARY)
    assert (await compactor.compact(conversation())).case == "summarize"


async def test_no_boundary_or_garbage_detector_output_summarizes(counter):
    for detector_reply in (answer(None, 0.0), "not json at all", '{"boundary_index": 1'):
        compactor, _ = make_compactor(counter, detector_reply, SUMMARY)
        assert (await compactor.compact(conversation())).case == "summarize"


async def test_the_summary_replaces_the_old_messages_with_one_history_summary_pair(counter):
    compactor, client = make_compactor(counter, answer(None), SUMMARY)
    result = await compactor.compact(conversation())
    assert result.messages[2:4] == (
        {"role": "user", "content": f"History Summary\n\n{SUMMARY}"},
        {"role": "assistant", "content": SUMMARY_ACK},
    )
    assert contents(result.messages[:2]) == ["question 0", "answer 0"]
    assert contents(result.messages[4:]) == ["question 8", "answer 8", "question 9", "answer 9"]
    summarized = client.requests[1].messages[1]["content"]
    assert "question 1:" in summarized and "question 7:" in summarized
    assert "question 0:" not in summarized and "question 8:" not in summarized


async def test_the_summary_message_is_byte_identical_whenever_the_summary_is(counter):
    first, _ = make_compactor(counter, answer(None), SUMMARY)
    second, _ = make_compactor(counter, answer(None), SUMMARY)
    one = (await first.compact(conversation())).messages[2:4]
    other = (await second.compact(conversation(12))).messages[2:4]
    assert one == other == tuple(summary_messages(SUMMARY))


async def test_min_verbatim_exchanges_are_preserved_after_compaction(counter):
    compactor, _ = make_compactor(counter, answer(18, 0.9))
    result = await compactor.compact(conversation())
    assert contents(result.messages)[2:] == ["question 8", "answer 8", "question 9", "answer 9"]
    four = CompactionConfig(**{**CONFIG.__dict__, "min_verbatim_exchanges": 4})
    compactor, _ = make_compactor(counter, answer(18, 0.9), config=four)
    result = await compactor.compact(conversation())
    assert sum(m["role"] == "user" for m in result.messages[2:]) == 4


async def test_pinned_messages_and_the_first_user_message_survive_summarizing_in_order(counter):
    messages = conversation()
    messages[5]["pinned"] = True
    messages[9]["pinned"] = True
    compactor, client = make_compactor(counter, answer(None), SUMMARY)
    result = await compactor.compact(messages)
    assert contents(result.messages[:6]) == [
        "question 0",
        "answer 0",
        "question 2",
        "answer 2",
        "question 4",
        "answer 4",
    ]
    assert result.messages[5]["pinned"] is True
    assert result.messages[6]["content"].startswith("History Summary")
    assert "answer 2:" not in client.requests[1].messages[1]["content"]


async def test_pinned_messages_survive_truncation(counter):
    messages = conversation()
    messages[6]["pinned"] = True
    compactor, _ = make_compactor(counter, answer(16, 0.9))
    result = await compactor.compact(messages)
    assert contents(result.messages)[:4] == ["question 0", "answer 0", "question 3", "answer 3"]


async def test_nothing_to_remove_gives_case_none(counter):
    messages = conversation(3)
    compactor, client = make_compactor(counter, answer(None), SUMMARY)
    result = await compactor.compact(messages, trigger_tokens=100)
    assert result.case == "none" and list(result.messages) == messages
    assert len(client.requests) == 1


async def test_the_summary_is_asked_for_within_its_budget_and_cut_to_it(counter):
    compactor, client = make_compactor(counter, answer(None), "word " * 500)
    result = await compactor.compact(conversation())
    assert client.requests[1].max_tokens == 50
    assert counter.count_text(result.summary) <= 50 and result.summary.endswith(" ...")


def test_fit_to_budget_keeps_short_text_and_cuts_long_text_at_a_word(counter):
    assert fit_to_budget("  short  ", 50, counter) == "short"
    cut = fit_to_budget("alpha beta gamma delta " * 50, 10, counter)
    assert counter.count_text(cut) <= 10 and cut.endswith(" ...")
    assert cut.removesuffix(" ...").split()[-1] in {"alpha", "beta", "gamma", "delta"}


async def test_focus_text_steers_the_summary(counter):
    compactor, client = make_compactor(counter, answer(None), SUMMARY)
    await compactor.compact(conversation(), focus="the database schema")
    assert "the database schema" in client.requests[1].messages[0]["content"]


async def test_a_failing_summarizer_below_twice_the_trigger_changes_nothing(counter):
    for failure in (LLMError("provider down"), HANG, ""):
        compactor, _ = make_compactor(counter, answer(None), failure)
        assert await compactor.compact(conversation()) is None


async def test_a_summarizer_timeout_past_twice_the_trigger_truncates_at_the_verbatim_window(
    counter,
):
    compactor, _ = make_compactor(counter, answer(None), HANG)
    result = await compactor.compact(conversation(), trigger_tokens=600)
    assert result.case == "truncate" and result.summary == ""
    assert contents(result.messages)[2:] == ["question 8", "answer 8", "question 9", "answer 9"]


async def test_the_result_reports_the_boundary_and_sizes_before_and_after(counter):
    compactor, _ = make_compactor(counter, answer(16, 0.9, reason="new task"))
    result = await compactor.compact(conversation())
    assert result.boundary.boundary_index == 16 and result.boundary.boundary_reason == "new task"
    assert result.messages_before == 20
    assert result.tokens_before == 1280 and result.tokens_after == 3 * 128


# -- with ContextManager ----------------------------------------------------------------


def make_manager(facts, counter):
    config = ContextConfig(tier_scheme="seed", compaction_trigger_tokens=1000)
    return ContextManager(facts, counter, config=config)


def test_create_compactor_builds_a_detector_and_summarizer_on_the_smaller_model(counter):
    client = ScriptedClient()
    compactor = create_compactor(client, "small", counter)
    assert compactor.config == CompactionConfig()
    assert compactor.detector.model == compactor.model == "small"
    assert compactor.detector.client is compactor.client is client


def test_the_manager_says_when_its_history_passes_the_trigger(facts, counter):
    manager = make_manager(facts, counter)
    manager.set_history(conversation(3))
    assert not manager.should_compact()
    manager.set_history(conversation())
    assert manager.should_compact()


async def test_a_compacted_history_handed_to_the_manager_purges_stability_items(facts, counter):
    compactor, _ = make_compactor(counter, answer(None), SUMMARY)
    manager = make_manager(facts, counter)
    manager.set_history(conversation(9))
    manager.prepare_request("question 9: " + "alpha " * 55)
    manager.record_exchange("question 9: " + "alpha " * 55, "answer 9: " + "beta " * 55)
    assert any(key.startswith("history:") for key in manager.stability.items())
    history = manager.get_history()
    result = await compactor.compact(history, trigger_tokens=manager.compaction_trigger)
    manager.set_history(result.messages)
    assert result.case == "summarize"
    assert manager.get_history() == list(result.messages)
    assert manager.history_token_count() < manager.compaction_trigger
    assert not any(key.startswith("history:") for key in manager.stability.items())
