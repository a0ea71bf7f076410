"""Process-wide services of the chat app, built once from settings.

One LLM client and one token counter per encoding serve every session in the process;
model facts are looked up once per model name. Nothing here holds per-session state.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

from django.conf import settings

from contextcore.models import ModelFacts
from contextcore.tokens import TokenCounter


@cache
def llm_client():  # -> chat.llm.LiteLLMClient
    from chat.llm import LiteLLMClient

    record = settings.ACDC_RECORD_REQUESTS
    return LiteLLMClient(
        api_base=settings.ACDC_API_BASE or None,
        record_path=Path(record) if record else None,
    )


def chat_model(requested: str = "") -> str:
    from chat.llm import default_model

    return requested or settings.ACDC_MODEL or default_model(os.environ)


@cache
def facts_for(model: str) -> tuple[ModelFacts, str | None]:
    from chat.llm import model_facts

    return model_facts(model)


@cache
def token_counter(encoding_name: str) -> TokenCounter:
    return TokenCounter(encoding_name)


def system_prompt() -> str:
    template = (Path(__file__).parent / "prompts" / "system.md").read_text()
    return template.replace("{repository}", Path(settings.ACDC_REPO).name)
