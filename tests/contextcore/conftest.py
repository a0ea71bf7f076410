"""Fixtures for the context engine tests: no Django, no database, tiktoken offline."""

from __future__ import annotations

import pytest

from chat.llm.environment import configure_offline_environment
from contextcore.manager import ContextConfig, ContextManager
from contextcore.models import ModelFacts
from contextcore.tokens import TokenCounter

configure_offline_environment()


@pytest.fixture(scope="session")
def counter() -> TokenCounter:
    return TokenCounter("cl100k_base")


@pytest.fixture
def facts() -> ModelFacts:
    return ModelFacts(
        name="anthropic/claude-sonnet-4-5",
        max_input_tokens=200_000,
        max_output_tokens=64_000,
        min_cacheable_tokens=1024,
        supports_prompt_caching=True,
        supports_vision=True,
    )


@pytest.fixture
def make_manager(facts, counter, tmp_path):
    def make(scheme: str = "acdc", *, facts_=None, repo_root=None, **config) -> ContextManager:
        return ContextManager(
            facts_ or facts,
            counter,
            repo_root=repo_root,
            config=ContextConfig(tier_scheme=scheme, **config),
        )

    return make
