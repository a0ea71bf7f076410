"""aider's matcher beside acdc's in the edits benchmark: one subprocess of aider's own venv.

aider is never a dependency of acdc: the bench hands every case to `aider_child.py`
run by aider's interpreter (`--aider PYTHON`; by default /work/aider-venv/bin/python when
it exists) as JSON and reads the files aider would write back. aider reads a file with
universal newlines and writes the platform's, so a CRLF file comes back LF; its line
endings are put back here, so only where aider placed the edit is judged. Non-goals:
installing aider, aider's prompts or its fuzzy matching (off in its own code).
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DEFAULT_PYTHON = Path("/work/aider-venv/bin/python")
# Run by its path, so this folder comes first on its sys.path: no module here may bear the
# name of one aider imports (this one was `aider.py` once, and hid the `aider` package).
CHILD = Path(__file__).with_name("aider_child.py")


class AiderUnavailable(Exception):
    """aider's interpreter is missing or its matcher could not run; the message says why."""


@dataclass(frozen=True)
class AiderRun:
    version: str
    afters: dict[str, str | None]  # case id -> the file aider wrote (None: it refused)


def interpreter(given: str | None) -> Path | None:
    """The Python of aider's venv: the one given, else the default when it exists."""
    if given:
        return Path(given)
    return DEFAULT_PYTHON if DEFAULT_PYTHON.exists() else None


def run(python: Path, jobs: list[tuple[dict[str, Any], str]]) -> AiderRun:
    """aider's verdict on every (case, file on disk), in one subprocess."""
    payload = {"cases": [_job(case, disk) for case, disk in jobs]}
    with tempfile.TemporaryDirectory(prefix="acdc-bench-aider-") as folder:
        try:
            done = subprocess.run(
                [str(python), str(CHILD)],
                input=json.dumps(payload),
                capture_output=True,
                text=True,
                cwd=folder,  # aider checks whether a named file exists: none does here
                check=False,
            )
        except OSError as exc:
            raise AiderUnavailable(f"{python}: {exc.strerror}") from exc
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise AiderUnavailable(f"{python} exited with {done.returncode}: {last}")
    answer = json.loads(done.stdout)
    disks = {case["id"]: disk for case, disk in jobs}
    afters = {
        r["id"]: None if r["after"] is None else _own_endings(disks[r["id"]], r["after"])
        for r in answer["results"]
    }
    return AiderRun(answer["version"], afters)


def _job(case: dict[str, Any], disk: str) -> dict[str, Any]:
    spec = case["op"]
    as_read = disk.replace("\r\n", "\n").replace("\r", "\n")
    return {
        "id": case["id"],
        "path": spec["path"],
        "files": {case["file"]: as_read},
        "old": spec["old_text"],
        "new": spec["new_text"],
    }


def _own_endings(disk: str, after: str) -> str:
    crlf = disk.count("\r\n")
    return after.replace("\n", "\r\n") if crlf and crlf * 2 >= disk.count("\n") else after
