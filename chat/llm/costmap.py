"""litellm's bundled model map, read as the JSON file it is, without importing litellm.

acdc runs litellm on its bundled copy of the map (`chat.llm.environment` sets
LITELLM_LOCAL_MODEL_COST_MAP), so the windows and prices the page shows can be read from
that file: ~20 ms and a few MB, where importing litellm costs ~3 s and ~160 MB. A name
the file holds as it is written, or as `provider/name` of an entry of that provider, is
answered here; any other name (an alias litellm resolves) goes to litellm's own
`get_model_info`, so litellm stays the one judge of names and is imported only then.
Non-goals: what the facts mean (chat.llm.facts), requests (chat.llm.client).
"""

from __future__ import annotations

import functools
import importlib.util
import json
import logging
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from chat.llm import sdk

log = logging.getLogger(__name__)
FILE_NAME = "model_prices_and_context_window_backup.json"
MAX_SUGGESTIONS = 200  # models the page's Model box offers


@functools.cache
def entries() -> Mapping[str, Any]:
    """The bundled map (name -> facts); litellm's own `model_cost` when the file cannot
    be found or read (a litellm that moved it)."""
    spec = importlib.util.find_spec("litellm")  # finds the folder; imports nothing
    folders = spec.submodule_search_locations if spec else None
    path = Path(next(iter(folders))) / FILE_NAME if folders else None
    try:
        if path is None:
            raise FileNotFoundError(FILE_NAME)
        found = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(found, dict):
            raise ValueError("not a JSON object")
    except (OSError, ValueError) as exc:
        log.warning("reading litellm's bundled model map failed (%s); importing litellm", exc)
        return sdk.cost_map()
    found.pop("sample_spec", None)  # the file's documentation of its own fields
    return found


def bundled(model: str) -> Mapping[str, Any] | None:
    """The file's entry for `model` as written, or for `provider/name` as `name` of that
    provider; None when the file does not name it so."""
    table = entries()
    entry = table.get(model)
    if entry is None and "/" in model:
        provider, name = model.split("/", 1)
        entry = table.get(name)
        if not isinstance(entry, Mapping) or entry.get("litellm_provider") != provider:
            entry = None
    return entry if isinstance(entry, Mapping) else None


def model_info(model: str) -> Mapping[str, Any]:
    """The facts of `model`: from the file when it names the model, else litellm's
    `get_model_info` (which raises for a model it does not know either)."""
    return bundled(model) or sdk.model_info(model)


def cost_map_models(cost_map: Mapping[str, Any], providers: tuple[str, ...]) -> tuple[str, ...]:
    """The chat models of `providers` in litellm's cost map, as `provider/name`, sorted, an
    even share of the suggestions each (fine-tuned entries are templates, not models)."""
    share = max(1, (MAX_SUGGESTIONS - 10) // max(1, len(providers)))
    found: dict[str, set[str]] = {provider: set() for provider in providers}
    for key, entry in cost_map.items():
        if not isinstance(entry, Mapping) or entry.get("mode") != "chat":
            continue
        provider = entry.get("litellm_provider")
        if provider not in found or key.startswith("ft:"):
            continue
        found[provider].add(key if key.startswith(f"{provider}/") else f"{provider}/{key}")
    return tuple(name for provider in providers for name in sorted(found[provider])[:share])


class ModelListings:
    """The cost map's chat models by providers, each listed once per process in a thread
    so that rendering the page never waits for it (the served object holds the one)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._listed: dict[tuple[str, ...], tuple[str, ...]] = {}
        self._started: set[tuple[str, ...]] = set()

    def models(self, providers: tuple[str, ...]) -> tuple[str, ...]:
        """The models of `providers` when listed; else starts listing them, once."""
        with self._lock:
            listed = self._listed.get(providers)
            if listed is None and providers not in self._started:
                self._started.add(providers)
                threading.Thread(
                    target=self.list, args=(providers,), name="acdc-model-list", daemon=True
                ).start()
        return listed or ()

    def list(self, providers: tuple[str, ...]) -> None:
        """Read litellm's cost map (its bundled file) for `providers`."""
        try:
            listed = cost_map_models(entries(), providers)
        except Exception:
            log.exception("could not list the models of %s", ", ".join(providers))
            listed = ()
        with self._lock:
            self._listed[providers] = listed
