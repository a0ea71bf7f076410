"""A real `acdc serve` whose provider is a loopback fake of the OpenAI API (the real
litellm path), and the terminal a person runs `acdc` from beside it: the repository and
data folder, and none of the provider's variables, which only the server holds."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from bench.live_server import Worker, server_environ, start_worker
from bench.wirefakes import Reply, ToolCall, WireFake

SERVER_ONLY = ("ACDC_MODEL", "ACDC_API_BASE", "OPENAI_API_KEY")


@contextlib.contextmanager
def server_with_fake(repo: Path, data: Path, log: Path) -> Iterator[tuple[Worker, WireFake]]:
    """`acdc serve` for `repo` with edits on, answering through a WireFake."""
    with WireFake() as fake:
        extra = {
            "ACDC_MODEL": "openai/x",
            "ACDC_API_BASE": fake.base_url + "/v1",
            "OPENAI_API_KEY": "sk-test",
            "ACDC_EDITS": "1",
        }
        worker = start_worker(server_environ(repo, data, extra), log)
        try:
            yield worker, fake
        finally:
            worker.stop()


def terminal(repo: Path, data: Path) -> dict[str, str]:
    """A terminal's environment: the repository and data folder, no provider variable."""
    environ = {
        k: v for k, v in os.environ.items() if not k.startswith("ACDC_") and "API_KEY" not in k
    }
    environ.pop("DJANGO_SETTINGS_MODULE", None)
    environ.update(ACDC_REPO=str(repo), ACDC_DATA_DIR=str(data), NO_PROXY="127.0.0.1")
    assert not set(SERVER_ONLY) & set(environ)
    return environ


def edit(path: str, old: str, new: str) -> Reply:
    """A reply that only calls edit_file."""
    return Reply("", (ToolCall("edit_file", {"path": path, "old_text": old, "new_text": new}),))
