"""Make litellm and tiktoken work with no network, before either is imported.

litellm's cost map is read from the copy bundled in the package, and tiktoken's encodings
from the files litellm ships, so nothing is fetched at run time. Finding litellm's folder
uses `importlib.util.find_spec`, which does not import it (that costs ~3 s and ~175 MB).
It lives with the one room that reaches litellm; the settings, the CLI and test set-up call
it too, so it imports nothing but the standard library.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

_LOOPBACK = ("127.0.0.1", "localhost", "::1")


def litellm_tokenizer_dir() -> Path | None:
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "litellm_core_utils" / "tokenizers"
    return folder if folder.is_dir() else None


def configure_offline_environment() -> None:
    """Idempotent; safe to call from settings, the CLI and test set-up alike."""
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    folder = litellm_tokenizer_dir()
    if folder is not None:
        # litellm overwrites TIKTOKEN_CACHE_DIR with CUSTOM_TIKTOKEN_CACHE_DIR on import.
        os.environ["TIKTOKEN_CACHE_DIR"] = str(folder)
        os.environ["CUSTOM_TIKTOKEN_CACHE_DIR"] = str(folder)
    no_proxy = [h for h in os.environ.get("NO_PROXY", "").split(",") if h]
    for host in _LOOPBACK:
        if host not in no_proxy:
            no_proxy.append(host)
    os.environ["NO_PROXY"] = os.environ["no_proxy"] = ",".join(no_proxy)
