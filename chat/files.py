"""The repository's files as the Files panel lists them.

Tracked files plus untracked ones git does not ignore (`git ls-files -co --exclude-standard`),
never `.git/` or acdc's own `.acdc/`. Capped, so a huge repository still renders; the full
picker with folders, badges and background token counts is a later piece of work.
"""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

MAX_LISTED = 5000


def list_repository_files(repo: Path) -> list[str]:
    try:
        out = subprocess.run(
            ["git", "-C", str(repo), "ls-files", "-co", "--exclude-standard", "-z"],
            capture_output=True,
            check=True,
            timeout=30,
        ).stdout
        paths = [p for p in out.decode("utf-8", "replace").split("\0") if p]
    except (OSError, subprocess.SubprocessError):
        paths = [str(p.relative_to(repo)) for p in repo.rglob("*") if p.is_file()]
    paths = [p for p in paths if not p.startswith((".acdc/", ".git/"))]
    return sorted(paths)[:MAX_LISTED]


def checkbox_id(path: str) -> str:
    return "file-" + hashlib.sha1(path.encode()).hexdigest()[:12]


def file_rows(repo: Path, selected: set[str]) -> list[dict[str, object]]:
    return [
        {"path": p, "id": checkbox_id(p), "checked": p in selected}
        for p in list_repository_files(repo)
    ]
