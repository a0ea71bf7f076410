"""The chat's runtime: the LLM client, the model facts and the token counters.

Built once, as a part of what the process serves (`chat.live.served`, built in `chat.apps`;
a test builds its own), and handed to the turn, which carries it on its session context;
nothing here is looked up from a module-level cache. One client and one counter per encoding
serve every session of the process; a model's facts are looked up once per runtime. It holds
no per-session state and reads no stored rows (the token calibration is the session
context's business). It remembers, for the life of the process, the models whose server
refused tools (`refuse_tools`): their facts say they call none from then on.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.conf import settings

from chat.llm import costmap, sdk
from chat.llm.client import LiteLLMClient
from chat.llm.facts import (
    DRY_RUN_MODEL,
    PROVIDER_KEYS,
    ModelSettings,
    default_model,
    model_facts,
)
from contextcore.llm import LLMClient
from contextcore.models import ModelFacts
from contextcore.tokens import TokenCounter


def chat_model(requested: str = "") -> str:
    """The model a request names, else the configured one, else the environment's default."""
    return requested or settings.ACDC_MODEL or default_model(os.environ)


def unreachable(model: str, *, chosen: bool) -> str:
    """Why `model` cannot write a reply's edits from this process ("" when it can): the
    dry run when nobody chose it (the fallback of an environment with no provider key),
    or a provider whose key this environment lacks. For `--apply`, which must not pretend."""
    if model == DRY_RUN_MODEL:
        if chosen:
            return ""
        names = ", ".join(name for name, _ in PROVIDER_KEYS[:2])
        return f"no model to write edits: no provider key ({names}, …) is set here"
    if model.startswith("acdc/"):
        return ""
    missing = sdk.missing_keys(model)
    return f"{model} needs {' or '.join(missing)}, which is not set here" if missing else ""


class Runtime:
    """What a turn needs from outside the store: a client, facts and counters."""

    def __init__(
        self,
        client: LLMClient,
        *,
        model_info: Callable[[str], dict[str, Any] | None] = costmap.model_info,
        model_settings: ModelSettings | None = None,
    ) -> None:
        self.client = client
        self._model_info = model_info
        self._said = model_settings or ModelSettings()
        self._facts: dict[str, tuple[ModelFacts, str | None]] = {}
        self._refused: set[str] = set()
        self._counters: dict[str, TokenCounter] = {}
        self._lock = threading.Lock()

    @classmethod
    def from_settings(cls) -> Runtime:
        """The runtime the settings describe: litellm behind `LiteLLMClient`."""
        record = settings.ACDC_RECORD_REQUESTS
        client = LiteLLMClient(
            api_base=settings.ACDC_API_BASE or None,
            record_path=Path(record) if record else None,
            give_up_after=settings.ACDC_PROVIDER_GIVE_UP_SECONDS,
        )
        said = ModelSettings.parse(
            settings.ACDC_MODEL_TOOLS,
            settings.ACDC_CONTEXT_WINDOW,
            settings.ACDC_INPUT_PRICE,
            settings.ACDC_OUTPUT_PRICE,
        )
        return cls(client, model_settings=said)

    def facts(self, model: str) -> tuple[ModelFacts, str | None]:
        """The model's facts and a warning when they are guessed (looked up once)."""
        found = self._facts.get(model)
        if found is None:
            refused = model in self._refused
            found = model_facts(model, self._model_info, self._said, tools_refused=refused)
            with self._lock:
                self._facts[model] = found
        return found

    def supports_tools(self, model: str) -> bool:
        """Offer tools to models that can call them (litellm's model map knows, or an
        OpenAI-compatible server is assumed to), unless the settings or a refusal say not."""
        return self.facts(model)[0].supports_tools

    def refuse_tools(self, model: str) -> None:
        """`model`'s server refused tools: its requests carry none from now on."""
        with self._lock:
            self._refused.add(model)
            self._facts.pop(model, None)

    def counter(self, encoding_name: str) -> TokenCounter:
        """One counter per encoding: its cache of counts serves every session."""
        with self._lock:
            counter = self._counters.get(encoding_name)
            if counter is None:
                counter = self._counters[encoding_name] = TokenCounter(encoding_name)
        return counter
