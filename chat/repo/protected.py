"""Files that guard acdc or run code on git actions: an edit to one is never automatic.

A model that may write into the work tree could loosen what guards it: `.acdcignore` says
what acdc treats as secret, the project-instructions files are sent with every request,
`.gitattributes` names filters and diff drivers git runs, and hook folders (the one
`core.hooksPath` names, `.husky/`) and `.pre-commit-config.yaml` run code on commit.
`protection(root, path)` says why a path is one of these ("" when it is not); the edit
pipeline never auto-applies an edit to one and its card says why, and a commit that would
run a hook the session changed asks first (`hooks_changed`); a command's sandbox binds
those on disk read-only (`existing`), and those a run creates are taken out of the work
tree after it (`absent`: a read-only bind needs something on disk to cover). Names are
compared case-insensitively (a case-insensitive file system opens `.ACDCIGNORE` as the
same file).
Non-goals: secrets (`chat.repo.boundary`), reading or writing files.
"""

from __future__ import annotations

import os
import posixpath
import subprocess
from collections.abc import Iterable
from pathlib import Path
from types import MappingProxyType

from chat.repo.boundary import IGNORE_FILE
from chat.repo.instructions import NAMES as INSTRUCTION_NAMES

GIT_SECONDS = 10
_FILES = MappingProxyType(
    {
        IGNORE_FILE.casefold(): "it decides which files acdc treats as secret and never sends",
        ".gitattributes": "it tells git which filters and diff drivers run on your files",
        ".pre-commit-config.yaml": "pre-commit runs the commands it names on every commit",
        **{
            name.casefold(): "acdc sends it to the model as project instructions with every request"
            for name in INSTRUCTION_NAMES
        },
    }
)
# As written, for the disk: `_FILES` holds them casefolded.
_NAMES = (IGNORE_FILE, ".gitattributes", ".pre-commit-config.yaml", *INSTRUCTION_NAMES)
HUSKY = ".husky"
HOOKS_REASON = "git runs the hooks in {folder}/ on commit, merge or push"


def protection(root: Path, path: str) -> str:
    """Why an edit of `path` (repo-relative) needs the person's own Accept; "" if it does
    not."""
    key = _normal(path)
    reason = _FILES.get(key)
    if reason:
        return reason
    folder = _hook_folder_of(key, hook_folders(root))
    return HOOKS_REASON.format(folder=folder) if folder else ""


def existing(root: Path) -> list[Path]:
    """The protected files and hook folders `root` holds now, as paths (a command's sandbox
    binds them read-only)."""
    return [path for path in _guarded(root) if os.path.lexists(path)]


def absent(root: Path) -> list[Path]:
    """The protected files and hook folders `root` does not hold now: a command that
    creates one has written a guard it must not write."""
    return [path for path in _guarded(root) if not os.path.lexists(path)]


def _guarded(root: Path) -> list[Path]:
    configured = _hooks_path(root)
    names = [*_NAMES, HUSKY, *([configured] if configured else [])]
    return [root / name for name in dict.fromkeys(names)]


def hook_folders(root: Path) -> list[str]:
    """The repository's hook folders inside the work tree, casefolded: `.husky` and the
    folder `core.hooksPath` names (when it lies inside the repository)."""
    folders = [HUSKY]
    configured = _hooks_path(root).casefold()
    if configured:
        folders.append(configured)
    return list(dict.fromkeys(folders))


def hooks_changed(root: Path, paths: Iterable[str]) -> list[str]:
    """Those of `paths` that git or pre-commit would run (or read to decide what to run)
    on a commit: files in a hook folder, and `.pre-commit-config.yaml`."""
    folders = hook_folders(root)
    found = []
    for path in paths:
        key = _normal(path)
        if key == ".pre-commit-config.yaml" or _hook_folder_of(key, folders):
            found.append(path)
    return found


def _normal(path: str) -> str:
    key = posixpath.normpath(path.replace("\\", "/").strip("/"))
    return key.casefold()


def _hook_folder_of(key: str, folders: list[str]) -> str:
    for folder in folders:
        if key == folder or key.startswith(folder + "/"):
            return folder
    return ""


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
