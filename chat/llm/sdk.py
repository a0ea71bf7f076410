"""litellm itself: imported here, lazily and once, with the offline environment in place.

This is the only module that imports litellm (besides `chat.llm.offline`, which subclasses
its `CustomLLM` and is loaded from here). The import costs ~3 s and ~160 MB, so it
happens when a request first needs litellm, never at start-up: the page's model facts come
from litellm's bundled map file (`chat.llm.costmap`). The offline models
(`acdc/fake`, `acdc/dry-run`) are registered as the custom provider "acdc" at the same
moment, so every caller sees a litellm that knows them. Thread-safe.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Mapping
from typing import Any


def missing_keys(model: str) -> list[str]:
    """The key variables litellm says `model`'s provider needs, none of which is set here
    ([] when one is, or when litellm cannot say: the call itself will)."""
    quiet = io.StringIO()  # litellm prints a banner for a provider it does not know
    try:
        with contextlib.redirect_stdout(quiet):
            found = litellm().validate_environment(model=model)
    except Exception:
        return []
    if found.get("keys_in_environment"):
        return []
    return [name for name in found.get("missing_keys") or [] if name.endswith("_KEY")]


def litellm() -> Any:
    """The litellm module with the acdc provider registered. The setup is
    `chat.llm.offline`'s import (lazy on purpose: litellm takes seconds and ~175 MB), which
    the import system runs once, whatever the number of threads asking at once."""
    from chat.llm import offline

    return offline.LITELLM


def acdc_provider() -> Any:
    """The registered `chat.llm.offline.AcdcProvider` (tests install a FakeScript into it)."""
    for entry in litellm().custom_provider_map:
        if entry.get("provider") == "acdc":
            return entry["custom_handler"]
    raise RuntimeError("the acdc provider is not registered")


def model_info(model: str) -> Mapping[str, Any]:
    """litellm's bundled facts for `model`; raises when its map has no entry."""
    return litellm().get_model_info(model)


def cost_map() -> Mapping[str, Any]:
    """litellm's bundled model map (name -> facts), the one `model_info` looks models up in."""
    return litellm().model_cost
