"""Process-wide services of the chat app, built once from settings.

One LLM client and one token counter per encoding serve every session in the process;
model facts are looked up once per model name. Nothing here holds per-session state.
"""

from __future__ import annotations

import os
from dataclasses import replace
from functools import cache
from pathlib import Path

from django.conf import settings

from chat.llm import costmap
from chat.llm.client import LiteLLMClient
from chat.llm.facts import OFFLINE_MODELS, default_model, model_facts
from contextcore.calibration import WINDOW, correction_factor
from contextcore.models import ModelFacts
from contextcore.tokens import TokenCounter
from history import selectors


@cache
def llm_client() -> LiteLLMClient:
    record = settings.ACDC_RECORD_REQUESTS
    return LiteLLMClient(
        api_base=settings.ACDC_API_BASE or None,
        record_path=Path(record) if record else None,
        give_up_after=settings.ACDC_PROVIDER_GIVE_UP_SECONDS,
    )


def chat_model(requested: str = "") -> str:
    return requested or settings.ACDC_MODEL or default_model(os.environ)


@cache
def facts_for(model: str) -> tuple[ModelFacts, str | None]:
    return model_facts(model, costmap.model_info)


def calibrated(facts: ModelFacts) -> ModelFacts:
    """`facts` with the token correction its stored requests call for (one query). The
    offline models report what acdc's own counter says: nothing to correct."""
    if facts.name in OFFLINE_MODELS:
        return facts
    samples = selectors.token_samples(model=facts.name, limit=WINDOW)
    return replace(facts, token_factor=correction_factor(samples))


def supports_tools(model: str) -> bool:
    """Offer tools only to models that can call them (litellm's model map knows)."""
    return facts_for(model)[0].supports_tools


@cache
def token_counter(encoding_name: str) -> TokenCounter:
    return TokenCounter(encoding_name)
