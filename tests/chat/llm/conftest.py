"""Fixtures of the LLM client's tests: a scripted OpenAI-compatible server on loopback.

`openai_server` is started per test and closed after it (releasing any reply still
hanging); `openai_key` sets the API key litellm insists on for `openai/...` models.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.chat.llm.openai_server import OpenAIServer


@pytest.fixture
def openai_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback-test")


@pytest.fixture
def openai_server(openai_key: None) -> Iterator[OpenAIServer]:
    server = OpenAIServer()
    yield server
    server.close()
