from __future__ import annotations

import pytest

from contextcore.tokens import (
    MESSAGE_OVERHEAD,
    TokenCounter,
    count_image,
    encoding_for_model,
    estimate_tokens,
    provider_for_model,
)


@pytest.mark.parametrize(
    ("model", "encoding"),
    [
        ("openai/gpt-4o-mini", "o200k_base"),
        ("gpt-4.1", "o200k_base"),
        ("openai/o3", "o200k_base"),
        ("openai/GPT-5-mini", "o200k_base"),
        ("chatgpt-4o-latest", "o200k_base"),
        ("openrouter/openai/gpt-oss-120b", "o200k_base"),
        ("gpt-4-turbo", "cl100k_base"),
        ("gpt-3.5-turbo", "cl100k_base"),
        ("text-davinci-003", "cl100k_base"),
        ("anthropic/claude-sonnet-4-5", "cl100k_base"),
        ("ollama/llama3", "cl100k_base"),
        ("", "cl100k_base"),
    ],
)
def test_it_picks_the_encoding_of_the_model_family(model, encoding):
    assert encoding_for_model(model) == encoding


def test_it_counts_with_the_real_tokenizer(counter):
    assert not counter.uses_fallback
    assert counter.count_text("hello world") == 2


def test_it_counts_o200k_differently_from_cl100k():
    text = "Grüße aus Köln — naïve façade " * 20
    assert TokenCounter("o200k_base").count_text(text) != TokenCounter("cl100k_base").count_text(
        text
    )


def test_it_falls_back_to_four_characters_per_token_when_the_encoding_is_missing():
    broken = TokenCounter("no_such_encoding")
    assert broken.count_text("x" * 40) == 10 == estimate_tokens("x" * 40)
    assert broken.uses_fallback


def test_it_caches_counts_by_content_hash(counter, monkeypatch):
    text = "def cached():\n    return 42\n" * 3
    first = counter.count_text(text)
    monkeypatch.setattr(counter, "_get_encoding", lambda: pytest.fail("tokenized twice"))
    assert counter.count_text(text) == first


def test_batch_counts_match_single_counts(counter):
    texts = [f"line {i} " * i for i in range(30)] + [""]
    fresh = TokenCounter("cl100k_base")
    assert fresh.count_many(texts) == [counter.count_text(t) for t in texts]


def test_it_counts_messages_and_lists_with_framing(counter):
    message = {"role": "user", "content": "hello world"}
    assert counter.count(message) == MESSAGE_OVERHEAD + 2
    assert counter.count([message, message]) == 2 * (MESSAGE_OVERHEAD + 2)
    assert counter.count(None) == 0


def test_anthropic_images_cost_width_times_height_over_750():
    assert count_image(750, 750, "anthropic") == 750
    # A large image is first scaled to fit 1568 px on the long side and ~1.15 MP.
    assert 1400 <= count_image(4000, 3000, "anthropic") <= 1600


def test_openai_high_detail_images_cost_170_per_tile_plus_85():
    assert count_image(512, 512, "openai") == 170 + 85
    # 2048x4096 -> 1024x2048 -> 768x1536: 2 x 3 tiles.
    assert count_image(2048, 4096, "openai") == 170 * 6 + 85


def test_it_knows_claude_is_anthropic_whatever_the_route():
    assert provider_for_model("bedrock/anthropic.claude-3-haiku") == "anthropic"
    assert provider_for_model("openai/gpt-4o") == "openai"
