"""Finding and reading the repository's project instructions, through its boundary.

The candidates are `NAMES`, at the repository root, in that order; ACDC_INSTRUCTIONS says
whether the first that can be sent goes (`first`, the default), all of them (`all`), or
none (`off`). Each passes the repository boundary like any file: nothing outside the
repository (a symlink out), no internal or secret-shaped path, nothing git ignores, only
regular UTF-8 text files under the size cap; a refused one is named with its reason. Text
is capped to ACDC_INSTRUCTIONS_TOKENS with a note (`contextcore.prompt.instructions`); the
redaction of credentials happens where every request leaves (chat.session.outgoing).
`mark` says what the candidates are on disk, for the panels to notice a change.
Non-goals: where they go in the prompt, the per-session switch (the session row's).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

from django.conf import settings

from chat.repo import boundary, git
from contextcore.files import DEFAULT_SIZE_CAP, check_text
from contextcore.prompt.instructions import InstructionFile, Instructions, capped_file

NAMES = (
    "AGENTS.md",
    "CLAUDE.md",
    ".cursorrules",
    ".github/copilot-instructions.md",
    "CONVENTIONS.md",
)
MODES = ("first", "all", "off")


def load(
    root: Path,
    *,
    count: Callable[[str], int],
    enabled: bool = True,
    mode: str | None = None,
    max_tokens: int | None = None,
) -> Instructions:
    """The instructions a session sends: none when the mode is `off`, and none but the
    names of the files found when `enabled` (the session's switch) is False."""
    root = Path(root).resolve()
    mode = mode or settings.ACDC_INSTRUCTIONS
    max_tokens = max_tokens or settings.ACDC_INSTRUCTIONS_TOKENS
    if mode == "off":
        return Instructions()
    # Marked before reading: a write landing while they are read leaves the mark stale, so
    # the panel figures them again, rather than a fresh mark beside what was read before it.
    seen = mark(root)
    files: list[InstructionFile] = []
    refused: list[tuple[str, str]] = []
    found: list[str] = []
    rules = git.IgnoreRules(root)
    for name in NAMES:
        text, reason = _read(root, name, rules)
        if text is None and not reason:
            continue  # no such file
        if text is None:
            refused.append((name, reason))
            continue
        found.append(name)
        if enabled:
            files.append(capped_file(name, text, count, max_tokens))
        if mode == "first":
            break
    off = () if files else tuple(found)
    return Instructions(tuple(files), off, tuple(refused), seen)


def present(root: Path) -> bool:
    """Whether any candidate exists at all (a stat each; nothing is read)."""
    root = Path(root)
    return settings.ACDC_INSTRUCTIONS != "off" and any(os.path.lexists(root / n) for n in NAMES)


def mark(root: Path) -> str:
    """What the candidates are on disk, in a few stats (nothing is read): it changes when
    one comes, goes or is written, so a figure drawn from them knows it is out of date."""
    if settings.ACDC_INSTRUCTIONS == "off":
        return ""
    root = Path(root)
    seen = []
    for name in NAMES:
        try:
            info = os.lstat(root / name)
        except OSError:
            continue
        seen.append(f"{name}:{info.st_mtime_ns}:{info.st_size}")
    return "|".join(seen)


def _read(root: Path, name: str, rules: git.IgnoreRules) -> tuple[str | None, str]:
    """The file's text, or None with the reason it may not be sent ("" when absent)."""
    full = root / name
    try:
        info = os.stat(full)
    except (FileNotFoundError, NotADirectoryError):
        return None, ""
    except OSError as exc:
        return None, f"cannot be read ({exc.strerror})"
    if not full.resolve().is_relative_to(root):
        return None, "resolves outside the repository"
    found = boundary.verdict(name, root=root)
    if found.kind != "ok":
        return None, found.reason
    if rules.ignored(name):
        return None, "ignored by git (.gitignore)"
    if not stat.S_ISREG(info.st_mode):
        return None, "not a regular file"
    if info.st_size > DEFAULT_SIZE_CAP:
        return None, f"too large ({info.st_size:,} bytes; the limit is {DEFAULT_SIZE_CAP:,})"
    try:
        raw = full.read_bytes()
    except OSError as exc:
        return None, f"cannot be read ({exc.strerror})"
    text, reason = check_text(raw, DEFAULT_SIZE_CAP)
    return text, reason
