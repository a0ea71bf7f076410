"""Files that guard acdc or run code later: an edit to one is never automatic.

A model that may write into the work tree could loosen what guards it or leave code that
runs later outside the sandbox: `.acdcignore` says what acdc treats as secret, the
project-instructions files are sent with every request, `.gitattributes` names filters and
diff drivers git runs, `.gitmodules` where submodules come from, hook folders (the one
`core.hooksPath` names, `.husky/`) and `.pre-commit-config.yaml` run code on commit, and
other agents' and editors' configuration (`.claude/`, `.mcp.json`, `.vscode/`, `.envrc`,
`.github/workflows/`, …) runs commands when a tool opens the folder. The person adds more
with ACDC_PROTECTED_PATHS (paths from the root); nothing in the tree can take one away.
Each is a path and everything under it. `protection(root, path)` says why a path is one of
these ("" when it is not); the edit pipeline never auto-applies an edit to one and its card
says why, and a commit that would run a hook the session changed asks first
(`hooks_changed`); a command's sandbox binds those on disk read-only (`existing`), and
those a run creates are taken out of the work tree after it (`absent`: a read-only bind
needs something on disk to cover). Names are compared case-insensitively (a
case-insensitive file system opens `.ACDCIGNORE` as the same file).
Non-goals: secrets (`chat.repo.boundary`), reading or writing files.
"""

from __future__ import annotations

import os
import posixpath
import subprocess
from collections.abc import Iterable
from pathlib import Path
from types import MappingProxyType

from django.conf import settings

from chat.repo.boundary import IGNORE_FILE
from chat.repo.instructions import NAMES as INSTRUCTION_NAMES

GIT_SECONDS = 10
_OPENS = "when the folder is opened"
# As written, for the disk; each protects itself and everything under it.
_BUILT_IN = MappingProxyType(
    {
        IGNORE_FILE: "it decides which files acdc treats as secret and never sends",
        ".gitattributes": "it tells git which filters and diff drivers run on your files",
        ".gitmodules": "it tells git where to fetch submodules from and how to update them",
        ".pre-commit-config.yaml": "pre-commit runs the commands it names on every commit",
        **{
            name: "acdc sends it to the model as project instructions with every request"
            for name in INSTRUCTION_NAMES
        },
        ".claude": "Claude Code runs the hooks, commands and MCP servers its settings name",
        ".codex": "Codex reads its configuration and the commands it may run from it",
        ".cursor": "Cursor reads its rules and the MCP servers it starts from it",
        ".mcp.json": "coding agents start the MCP servers it names",
        ".vscode": f"VS Code runs the tasks and reads the settings in it {_OPENS}",
        ".idea": f"JetBrains IDEs run the configurations in it {_OPENS}",
        ".devcontainer": "a dev container builds and runs what it names",
        ".envrc": "direnv runs it in your shell when you enter the folder",
        ".github/workflows": "GitHub Actions runs its workflows, with the repository's secrets",
    }
)
HUSKY = ".husky"
HOOKS_REASON = "git runs the hooks in {folder}/ on commit, merge or push"
PERSON_REASON = "you listed it in ACDC_PROTECTED_PATHS"


def protection(root: Path, path: str) -> str:
    """Why an edit of `path` (repo-relative) needs the person's own Accept; "" if it does
    not."""
    key = _normal(path)
    for name, reason in _entries(root):
        if _under(key, name.casefold()):
            return reason
    return ""


def existing(root: Path) -> list[Path]:
    """The protected files and folders `root` holds now, as paths (a command's sandbox
    binds them read-only)."""
    return [path for path in _guarded(root) if os.path.lexists(path)]


def absent(root: Path) -> list[Path]:
    """The protected files and folders `root` does not hold now: a command that creates
    one has written a guard it must not write."""
    return [path for path in _guarded(root) if not os.path.lexists(path)]


def _guarded(root: Path) -> list[Path]:
    """Every protected path under `root`, leaving out those inside another (binding or
    moving the outer one covers them)."""
    names = [name for name, _ in _entries(root)]
    keys = [name.casefold() for name in names]
    kept = [
        name
        for name, key in zip(names, keys, strict=True)
        if not any(other != key and _under(key, other) for other in keys)
    ]
    return [root / name for name in dict.fromkeys(kept)]


def _entries(root: Path) -> list[tuple[str, str]]:
    """(path as written, why) of every protected path: acdc's own, the hook folders, then
    the person's."""
    hooks = [(folder, HOOKS_REASON.format(folder=folder)) for folder in _hook_names(root)]
    person = [(name, PERSON_REASON) for name in configured()]
    return [*_BUILT_IN.items(), *hooks, *person]


def configured() -> tuple[str, ...]:
    """The person's ACDC_PROTECTED_PATHS, normalized (acdc.env has refused the rest)."""
    return tuple(
        key for key in (_clean(p) for p in getattr(settings, "ACDC_PROTECTED_PATHS", ())) if key
    )


def _clean(path: str) -> str:
    key = posixpath.normpath(path.replace("\\", "/").strip().strip("/"))
    return "" if key in (".", "") or key == ".." or key.startswith("../") else key


def hook_folders(root: Path) -> list[str]:
    """The repository's hook folders inside the work tree, casefolded: `.husky` and the
    folder `core.hooksPath` names (when it lies inside the repository)."""
    return list(dict.fromkeys(folder.casefold() for folder in _hook_names(root)))


def _hook_names(root: Path) -> list[str]:
    configured_path = _hooks_path(root)
    return [HUSKY, *([configured_path] if configured_path else [])]


def hooks_changed(root: Path, paths: Iterable[str]) -> list[str]:
    """Those of `paths` that git or pre-commit would run (or read to decide what to run)
    on a commit: files in a hook folder, and `.pre-commit-config.yaml`."""
    folders = hook_folders(root)
    found = []
    for path in paths:
        key = _normal(path)
        if key == ".pre-commit-config.yaml" or any(_under(key, f) for f in folders):
            found.append(path)
    return found


def _normal(path: str) -> str:
    key = posixpath.normpath(path.replace("\\", "/").strip("/"))
    return key.casefold()


def _under(key: str, name: str) -> bool:
    """`key` is `name` or inside it (both casefolded)."""
    return key == name or key.startswith(name + "/")


def _hooks_path(root: Path) -> str:
    """`core.hooksPath` as a folder of the work tree, as written on the disk; "" when
    unset, outside the repository, or git cannot say."""
    command = ["git", "-C", str(root), "config", "--get", "core.hooksPath"]
    try:
        done = subprocess.run(command, capture_output=True, timeout=GIT_SECONDS, check=False)
    except (OSError, subprocess.SubprocessError):
        return ""
    value = done.stdout.decode("utf-8", "replace").strip()
    if done.returncode != 0 or not value:
        return ""
    root = root.resolve()
    folder = Path(value).expanduser()
    folder = (folder if folder.is_absolute() else root / folder).resolve()
    if folder == root or not folder.is_relative_to(root):
        return ""
    return folder.relative_to(root).as_posix()
