"""aider's repository map beside acdc's request: one child process of aider's own venv.

aider is never a dependency of acdc: `aider_map_child.py` runs under aider's interpreter
(`--aider PYTHON`, else /work/aider-venv/bin/python when it exists, as the edits bench
finds it) with a fixed hash seed (its ranking walks sets of names: without one, two runs
of the same case can differ) and stays up for the whole run, answering one JSON line per
case, so aider's tags cache (on disk, in the checkout) is read once and kept as the
checkout moves.
Non-goals: installing aider; anything of aider beyond its map.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
from pathlib import Path
from typing import Any

from chat.llm.environment import litellm_tokenizer_dir

DEFAULT_PYTHON = Path("/work/aider-venv/bin/python")
CHILD = Path(__file__).with_name("aider_map_child.py")


class AiderUnavailable(Exception):
    """aider's interpreter is missing or its map could not be built; the message says why."""


def interpreter(given: str | None) -> Path | None:
    if given:
        return Path(given)
    return DEFAULT_PYTHON if DEFAULT_PYTHON.exists() else None


class AiderMaps:
    """The child process, asked for one map at a time."""

    def __init__(self, python: Path) -> None:
        try:
            self._child = subprocess.Popen(
                [str(python), str(CHILD)],
                env={**os.environ, "PYTHONHASHSEED": "0"},
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
            )
        except OSError as exc:
            raise AiderUnavailable(f"{python}: {exc.strerror}") from exc
        self.version = ""
        folder = litellm_tokenizer_dir()
        self._encodings = str(folder) if folder else ""

    def map(self, root: Path, files: list[str], query: str, budget: int) -> str:
        request = {
            "root": str(root),
            "files": files,
            "query": query,
            "budget": budget,
            "encoding_dir": self._encodings,
        }
        assert self._child.stdin and self._child.stdout
        try:
            self._child.stdin.write(json.dumps(request) + "\n")
            self._child.stdin.flush()
            line = self._child.stdout.readline()
        except OSError as exc:  # the child is gone
            raise AiderUnavailable(f"aider's child: {exc}") from exc
        if not line:
            raise AiderUnavailable(f"aider's child exited with {self._child.wait()}")
        answer: dict[str, Any] = json.loads(line)
        if "error" in answer:
            raise AiderUnavailable(answer["error"])
        self.version = answer.get("version", self.version)
        return answer["map"]

    def close(self) -> None:
        if self._child.stdin and not self._child.stdin.closed:
            with contextlib.suppress(OSError):
                self._child.stdin.close()
        self._child.wait(timeout=30)
