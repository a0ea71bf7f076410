from __future__ import annotations

import asyncio
import json

from contextcore.conversation.endless import (
    MANAGED_ACK,
    MANAGED_HEADER,
    MANAGER_INSTRUCTION,
    PLACEHOLDERS,
    EndlessConfig,
    ManagedView,
    apply_managed_view,
    build_managed_view,
    skip_reason,
)
from contextcore.conversation.templates import resolve_template
from contextcore.conversation.topics import SidePrefix
from contextcore.llm import LLMError, RateLimitError, StreamEnd, TextDelta, Usage, UsageReport
from tests.contextcore.conversation.test_templates import write_template

SUMMARY = "- Instructions: answer in short bullets.\n- Open: fix the parser test."


class FakeManagerModel:
    """The LLM edge: answers every request with `reply` in small chunks, or raises `error`,
    after waiting `delay` seconds; records the requests."""

    def __init__(self, reply: str = SUMMARY, *, error: Exception | None = None, delay=0.0):
        self.reply, self.error, self.delay = reply, error, delay
        self.requests = []

    async def stream(self, request):
        self.requests.append(request)
        if self.delay:
            await asyncio.sleep(self.delay)
        if self.error is not None:
            raise self.error
        for start in range(0, len(self.reply), 9):
            yield TextDelta(self.reply[start : start + 9])
        yield UsageReport(Usage(prompt_tokens=321, completion_tokens=21))
        yield StreamEnd("stop")


def runs(count: int, words: int = 30) -> list[dict]:
    messages = []
    for n in range(count):
        messages += [
            {"role": "user", "content": f"question {n}: " + "alpha " * words},
            {"role": "assistant", "content": f"answer {n}: " + "beta " * words},
        ]
    return messages


async def manage(counter, history, *, client=None, config=None, **options):
    options.setdefault("template", "default")
    return await build_managed_view(
        history=history,
        latest_input=options.pop("latest_input", "Now make the parser test pass."),
        config=config or EndlessConfig(recent_runs=3, passthrough_runs=1),
        client=client or FakeManagerModel(),
        model=options.pop("model", "small"),
        counter=counter,
        **options,
    )


# -- config and the gate --------------------------------------------------------------


def test_blank_and_negative_settings_count_as_zero():
    config = EndlessConfig(recent_runs=None, passthrough_runs=-2, token_threshold=None)
    assert (config.recent_runs, config.passthrough_runs, config.token_threshold) == (0, 0, 0)
    assert EndlessConfig() == EndlessConfig(recent_runs=6, passthrough_runs=2, token_threshold=0)


def test_recent_runs_zero_disables_management(counter):
    config = EndlessConfig(recent_runs=0)
    assert "off" in skip_reason(runs(10), config, counter)


def test_an_empty_history_and_one_fully_passed_through_are_not_managed(counter):
    config = EndlessConfig(recent_runs=3, passthrough_runs=2)
    assert "no history" in skip_reason([], config, counter)
    assert "verbatim" in skip_reason(runs(2), config, counter)
    assert skip_reason(runs(3), config, counter) == ""


def test_the_token_threshold_is_measured_on_the_whole_history(counter):
    history = runs(4)
    tokens = counter.count(history)
    below = EndlessConfig(recent_runs=1, passthrough_runs=0, token_threshold=tokens + 1)
    at = EndlessConfig(recent_runs=1, passthrough_runs=0, token_threshold=tokens)
    assert f"History is {tokens} tokens" in skip_reason(history, below, counter)
    assert skip_reason(history, at, counter) == ""


def test_a_threshold_of_zero_manages_even_a_tiny_history(counter):
    config = EndlessConfig(recent_runs=2, passthrough_runs=0, token_threshold=0)
    assert skip_reason(runs(1, words=1), config, counter) == ""


async def test_a_skipped_turn_asks_no_model_and_leaves_the_history_alone(counter):
    client = FakeManagerModel()
    config = EndlessConfig(recent_runs=3, passthrough_runs=1, token_threshold=10**6)
    history = runs(5)
    view = await manage(counter, history, client=client, config=config)
    assert view.skipped and "threshold" in view.skip_reason and not view.failed
    assert client.requests == []
    assert apply_managed_view(history, view, config) == history


# -- a managed view -------------------------------------------------------------------


async def test_a_managed_view_asks_the_model_with_the_template_and_the_recent_runs(counter):
    client = FakeManagerModel()
    history = runs(5)
    view = await manage(counter, history, client=client, repository="acdc")
    (request,) = client.requests
    assert request.model == "small" and request.temperature == 0.0
    assert request.messages[0] == {"role": "system", "content": MANAGER_INSTRUCTION}
    prompt = request.messages[1]["content"]
    assert "## Keep" in prompt and "a git repository (acdc)" in prompt
    assert "question 2:" in prompt and "answer 4:" in prompt
    assert "question 1:" not in prompt and "answer 1:" not in prompt
    assert "Now make the parser test pass." in prompt
    assert "{recent_turns}" not in prompt and "{latest_input}" not in prompt
    assert view.input_payload["prompt"] == prompt


async def test_a_managed_view_records_template_model_output_and_stats(counter):
    history = runs(5)
    view = await manage(counter, history)
    template = resolve_template("default", None)
    assert not view.failed and not view.skipped and view.applies
    assert (view.template_name, view.template_source) == ("default", "builtin")
    assert view.template_hash == template.sha256 and view.model == "small"
    assert view.raw_output == SUMMARY and view.managed_prompt == SUMMARY
    assert view.parsed is None
    stats = view.stats
    assert (stats["runs_total"], stats["runs_in"], stats["runs_passed_through"]) == (5, 3, 1)
    assert stats["history_tokens_before"] == counter.count(history)
    assert stats["history_tokens_after"] < stats["history_tokens_before"]
    assert stats["summary_tokens"] == counter.count_text(SUMMARY)
    assert stats["usage"]["prompt_tokens"] == 321
    json.dumps(view.input_payload)
    json.dumps(view.stats)
    assert [m["content"][:10] for m in view.input_payload["recent_runs"]][0] == "question 2"


async def test_the_working_history_is_the_summary_pair_then_the_passthrough_runs(counter):
    history = runs(5)
    config = EndlessConfig(recent_runs=3, passthrough_runs=2)
    view = await manage(counter, history, config=config)
    working = apply_managed_view(history, view, config)
    assert working[0] == {"role": "user", "content": f"{MANAGED_HEADER}\n{SUMMARY}"}
    assert working[1] == {"role": "assistant", "content": MANAGED_ACK}
    assert working[2:] == history[-4:]
    assert [m["role"] for m in working] == ["user", "assistant"] * 3
    assert view.stats["history_tokens_after"] == counter.count(working)


async def test_passthrough_zero_gives_the_summary_only(counter):
    history = runs(4)
    config = EndlessConfig(recent_runs=2, passthrough_runs=0)
    view = await manage(counter, history, config=config)
    assert apply_managed_view(history, view, config) == [
        {"role": "user", "content": f"{MANAGED_HEADER}\n{SUMMARY}"},
        {"role": "assistant", "content": MANAGED_ACK},
    ]


async def test_runs_holding_a_pinned_message_stay_verbatim_before_the_summary(counter):
    history = runs(5)
    history[2] = {**history[2], "pinned": True}
    config = EndlessConfig(recent_runs=3, passthrough_runs=1)
    view = await manage(counter, history, config=config)
    working = apply_managed_view(history, view, config)
    assert working[:2] == history[2:4]
    assert working[2]["content"].startswith(MANAGED_HEADER)
    assert working[4:] == history[-2:]


async def test_a_repo_template_is_used_by_name_and_missing_sections_appended(counter, tmp_path):
    write_template(tmp_path, "terse", "Summarize for {repository} in 3 lines. {unknown}")
    client = FakeManagerModel()
    view = await manage(
        counter, runs(5), client=client, template="terse", repo_root=tmp_path, repository="r"
    )
    assert view.template_source == "repo" and view.template_name == "terse"
    prompt = client.requests[0].messages[1]["content"]
    assert prompt.startswith("Summarize for r in 3 lines.")
    assert "## Recent conversation\n[4] USER: question 2:" in prompt
    assert "## The user's new message\nNow make the parser test pass." in prompt
    assert "## Earlier summary\n(none)" in prompt


async def test_every_documented_placeholder_is_filled(counter, tmp_path):
    write_template(tmp_path, "all", "\n".join(f"{name}=<{{{name}}}>" for name in PLACEHOLDERS))
    client = FakeManagerModel()
    await manage(counter, runs(5), client=client, template="all", repo_root=tmp_path)
    prompt = client.requests[0].messages[1]["content"]
    assert "repository=<unnamed>" in prompt and "previous_summary=<(none)>" in prompt
    assert "run_count=<3>" in prompt and "passthrough_runs=<1>" in prompt
    assert "recent_turns=<[4] USER: question 2:" in prompt
    assert "latest_input=<Now make the parser test pass.>" in prompt
    assert "## " not in prompt  # nothing appended: the template used every section


async def test_the_previous_summary_reaches_the_manager(counter):
    client = FakeManagerModel()
    await manage(counter, runs(5), client=client, previous_summary="User prefers tabs.")
    assert "## Earlier summary\nUser prefers tabs." in client.requests[0].messages[1]["content"]


async def test_a_contract_template_keeps_the_parsed_json_and_garbage_is_not_a_failure(counter):
    answer = 'Here:\n```json\n{"open": ["fix the parser"], "files": []}\n```'
    view = await manage(counter, runs(5), template="coding", client=FakeManagerModel(answer))
    assert view.parsed == {"open": ["fix the parser"], "files": []}
    assert view.managed_prompt == answer.strip()
    garbage = await manage(counter, runs(5), template="coding", client=FakeManagerModel("{no"))
    assert not garbage.failed and garbage.parsed is None and garbage.managed_prompt == "{no"


async def test_a_summary_longer_than_max_tokens_is_cut_to_it(counter):
    long = "word " * 500
    view = await manage(counter, runs(5), client=FakeManagerModel(long), max_tokens=40)
    assert view.managed_prompt.endswith("...")
    assert counter.count_text(view.managed_prompt) <= 40
    assert view.raw_output == long


async def test_images_in_the_history_reach_the_payload_as_text_only(counter):
    history = runs(4)
    history[-2] = {
        "role": "user",
        "content": [
            {"type": "text", "text": "what is in this screenshot?"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
        ],
    }
    view = await manage(counter, history)
    assert view.input_payload["recent_runs"][-2]["content"] == "what is in this screenshot?"
    assert "base64" not in json.dumps(view.input_payload)


# -- failing open ---------------------------------------------------------------------


def assert_fails_open(view: ManagedView, message: str) -> None:
    history = runs(5)
    config = EndlessConfig(recent_runs=3, passthrough_runs=1)
    assert view.failed and message in view.error
    assert not view.applies and view.managed_prompt == ""
    working = apply_managed_view(history, view, config)
    assert working == history and working is not history


async def test_a_model_error_fails_open_with_its_message(counter):
    client = FakeManagerModel(error=RateLimitError("The provider is rate limiting requests."))
    view = await manage(counter, runs(5), client=client)
    assert_fails_open(view, "rate limiting")
    assert view.template_name == "default" and view.input_payload["prompt"]


async def test_a_base_llm_error_fails_open_too(counter):
    view = await manage(counter, runs(5), client=FakeManagerModel(error=LLMError("down")))
    assert_fails_open(view, "model failed: down")


async def test_a_model_that_does_not_answer_in_time_fails_open(counter):
    client = FakeManagerModel(delay=5)
    view = await manage(counter, runs(5), client=client, timeout=0.05)
    assert_fails_open(view, "did not answer within 0.05 s")


async def test_an_empty_answer_fails_open(counter):
    view = await manage(counter, runs(5), client=FakeManagerModel("  \n "))
    assert_fails_open(view, "returned no text")


async def test_a_client_that_breaks_its_contract_fails_open(counter):
    view = await manage(counter, runs(5), client=FakeManagerModel(error=ValueError("bug")))
    assert_fails_open(view, "ValueError: bug")


async def test_an_unknown_or_broken_template_fails_open_without_a_request(counter, tmp_path):
    client = FakeManagerModel()
    unknown = await manage(counter, runs(5), client=client, template="nothing")
    assert_fails_open(unknown, "Unknown template 'nothing'")
    write_template(tmp_path, "default", "")
    empty = await manage(counter, runs(5), client=client, repo_root=tmp_path)
    assert_fails_open(empty, "is empty")
    bad_name = await manage(counter, runs(5), client=client, template="../etc/passwd")
    assert_fails_open(bad_name, "Invalid template name")
    assert client.requests == []


async def test_no_model_fails_open_without_a_request(counter):
    client = FakeManagerModel()
    view = await manage(counter, runs(5), client=client, model="")
    assert_fails_open(view, "No model")
    assert client.requests == []


def test_apply_returns_the_history_unchanged_without_a_view_or_with_endless_off():
    history = runs(3)
    view = ManagedView(template_name="default", managed_prompt=SUMMARY)
    assert apply_managed_view(history, None, EndlessConfig()) == history
    assert apply_managed_view(history, view, EndlessConfig(recent_runs=0)) == history
    assert apply_managed_view(history, view, EndlessConfig())[0]["content"].startswith(
        MANAGED_HEADER
    )


# -- reusing the chat's cached prefix ----------------------------------------------------


def _previous_request(history, summary, config, files_text):
    """What the chat sent last turn: system, files, then the managed view of the history
    before its last run (the runs passed through and the summary before them)."""
    view = ManagedView(managed_prompt=summary)
    before = history[:-2]
    return [
        {"role": "system", "content": "You are acdc."},
        {"role": "user", "content": files_text},
        {"role": "assistant", "content": "Ok, I have these files."},
        *apply_managed_view(before, view, config),
    ]


async def manage_after(counter, history, prefix, read_price):
    """A managed view (4 runs shown, 2 passed through) given the chat's cached `prefix`;
    returns the messages the manager was sent and the view."""
    client = FakeManagerModel()
    view = await manage(
        counter,
        history,
        client=client,
        config=REUSE_CONFIG,
        previous_summary=SUMMARY,
        prefix=SidePrefix(tuple(prefix), read_price),
    )
    return client.requests[0].messages, view


REUSE_CONFIG = EndlessConfig(recent_runs=4, passthrough_runs=2)


async def test_the_manager_reuses_the_chat_prefix_when_reading_it_is_cheaper(counter):
    config = REUSE_CONFIG
    history = runs(8, words=400)
    prefix = _previous_request(history, SUMMARY, config, "# Working Files\n" + "x = 1\n" * 50)
    sent, view = await manage_after(counter, history, prefix, 0.1)

    assert sent[: len(prefix)] == prefix  # the cached prefix, byte for byte
    tail = sent[-1]["content"]
    assert MANAGER_INSTRUCTION in tail and "Now make the parser test pass." in tail
    # Runs the prefix holds are listed cut short; the rest (and the new answer) in full.
    assert "answer 7: " + "beta " * 400 in tail  # not in the prefix: in full
    assert "question 5: " + "alpha " * 400 not in tail  # passed through last turn
    assert "[10] USER: question 5:" in tail
    assert "(the Context summary (managed) above)" in tail and SUMMARY not in tail
    assert view.input_payload["reused_prefix_messages"] == len(prefix)
    fresh = await manage(counter, history, config=config, previous_summary=SUMMARY)
    assert counter.count(sent[-1:]) < counter.count_text(fresh.input_payload["prompt"])


async def test_the_manager_sends_its_own_request_when_the_prefix_costs_more(counter):
    history = runs(8, words=20)
    big_files = "# Working Files\n" + "value = compute(1)\n" * 6000  # read at 0.5x: dearer
    prefix = _previous_request(history, SUMMARY, REUSE_CONFIG, big_files)
    sent, view = await manage_after(counter, history, prefix, 0.5)

    assert [m["role"] for m in sent] == ["system", "user"]
    assert sent[0]["content"] == MANAGER_INSTRUCTION
    assert view.input_payload["reused_prefix_messages"] == 0
