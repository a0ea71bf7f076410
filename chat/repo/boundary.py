"""The repository boundary: which paths acdc may show, count, read and send.

Everything acdc reads from the repository may go to the model provider, a third party, so
one function decides for every surface (picker, select frame, pin, the model's tools,
discovery from tool output, the watcher, resume, exports): `verdict(path)`.

- `internal`: never, for anyone. Git's own folder (`.git` at any depth, so submodules too)
  and acdc's data folder (its database, secret key and uploads), wherever ACDC_DATA_DIR
  points, under any spelling or symlink that resolves into them.
- `secret`: a file shaped like a credential (`.env`, private keys, `.npmrc` …; the
  built-in patterns and ACDC_SECRET_PATTERNS, plus the repository's `.acdcignore`, gitignore
  syntax, matched case-insensitively, a line break in a name included). A file in the work
  tree can only add secrets: the `!` lines of `.acdcignore` undo its own lines, never the
  built-in ones (a cloned repository, or a model's edit, must not unlock `.env`), and a
  session also keeps the `.acdcignore` texts its turns started with (`floor`), so a file
  the model wrote cannot take a secret away within it. The person may add one after
  confirming; the model's tools never read, list or discover one.
- `ok`: an ordinary path inside the repository.

Paths outside the repository (`..`, absolute paths elsewhere, symlinks out) are the
indexing layer's refusal (`indexing.locate`); this module judges what is inside.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Literal

import pathspec
from django.conf import settings

Kind = Literal["ok", "internal", "secret"]

DEFAULT_SECRET_PATTERNS = (
    ".env",
    ".env.*",
    "*.env",
    ".envrc",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.keystore",
    "*.jks",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    "!id_*.pub",  # the public half is not a secret
    ".npmrc",
    ".pypirc",
    ".netrc",
    "_netrc",
    ".pgpass",
    ".htpasswd",
    ".git-credentials",
    ".dockercfg",
    ".docker/config.json",
    "credentials",
    "credentials.*",
    "*credentials*.json",
    "secrets.*",
    "secret.*",
    "*.secret",
    "*.secrets",
    "service-account*.json",
    "*.tfstate",
    "*.tfvars",
    "*.kdbx",
)
IGNORE_FILE = ".acdcignore"
SECRET_REASON = "this file looks like a secret (a credential or private key)"


@dataclass(frozen=True)
class Verdict:
    kind: Kind
    reason: str = ""

    @property
    def ok(self) -> bool:
        return self.kind == "ok"


OK = Verdict("ok")


def verdict(path: str, *, root: Path, floor: tuple[str, ...] = ()) -> Verdict:
    """What acdc may do with `path` (repo-relative, or absolute inside the repository);
    `floor` holds earlier `.acdcignore` texts that still count (a session's)."""
    root = Path(root).resolve()
    key = path.replace("\\", "/").rstrip("/")
    full = Path(key) if os.path.isabs(key) else root / key.lstrip("/")
    for candidate in _spellings(full, root, inside_only=False):
        found = _internal(candidate, root)
        if found:
            return Verdict("internal", found)
    inside = [c for c in _spellings(full, root) if c != root and c.is_relative_to(root)]
    relatives = [c.relative_to(root).as_posix() for c in inside]
    spec = secret_spec(root, floor)
    for relative in relatives:
        if _relative_is_inside(relative) and _matches(spec.match_file, relative):
            return Verdict("secret", SECRET_REASON)
    return OK


def secret_refusal(path: str) -> str:
    """What the person is told when they pick a secret-shaped file without confirming."""
    return f"{path} looks like a secret; confirm to send it to the model provider"


@dataclass(frozen=True)
class Screened:
    """A listing judged: `kept` has no internal path, `locked` maps secrets to the reason."""

    kept: list[str]
    locked: dict[str, str]


def screen(paths: Iterable[str], *, root: Path, floor: tuple[str, ...] = ()) -> Screened:
    """Judge a listing (repo-relative paths) at one `lstat` per path: a listing from git
    never descends into a symlinked folder, so only a symlink itself needs resolving. A
    plainly written path (git's own spelling) is judged on its text; any other, the slow
    way, as `verdict` would."""
    root = Path(root).resolve()
    data_dir = _data_dir()
    if root.is_relative_to(data_dir):  # a repository inside the data folder: all of it
        data_prefix: str | None = "."
    elif data_dir.is_relative_to(root):
        data_prefix = data_dir.relative_to(root).as_posix()
    else:
        data_prefix = None
    spec = secret_spec(root, floor)
    is_secret = spec.test
    base = str(root)
    kept: list[str] = []
    locked: dict[str, str] = {}
    for path in paths:
        if _is_link(os.path.join(base, path)):
            found = verdict(path, root=root)
        elif _plain(path):
            found = _judged_on_text(path, data_prefix, is_secret)
        else:
            found = _written(path, root, data_dir, spec)
        if found.kind == "secret":
            locked[path] = found.reason
        if found.kind != "internal":
            kept.append(path)
    return Screened(kept, locked)


def _plain(path: str) -> bool:
    """Relative, '/'-separated, with no empty, '.' or '..' part: how git lists a path."""
    if not path or path[0] == "/" or "\\" in path:
        return False
    return all(part not in ("", ".", "..") for part in path.split("/"))


def _judged_on_text(path: str, data_prefix: str | None, is_secret) -> Verdict:
    """`_written`'s verdict for a plain path, without building a Path per part."""
    inside = data_prefix == "." or path == data_prefix or path.startswith(f"{data_prefix}/")
    if data_prefix is not None and inside:
        return Verdict("internal", "acdc's own data folder is never read")
    if any(part.casefold() == ".git" for part in path.split("/")):
        return Verdict("internal", "git's internal folder is never read")
    if _matches(is_secret, path):
        return Verdict("secret", SECRET_REASON)
    return OK


def _matches(match: Callable[[str], bool], path: str) -> bool:
    """The secret patterns' judgement of `path`, casefolded, whatever characters it holds:
    pathspec compiles its regular expressions without DOTALL, so a folder whose name holds
    a line feed hid the `.env` inside it; with line feeds made NULs it does not (no pattern
    can name either character)."""
    folded = path.casefold()
    return bool(match(folded)) or ("\n" in folded and bool(match(folded.replace("\n", "\0"))))


def _fast_test(spec: pathspec.PathSpec) -> Callable[[str], bool]:
    """The spec's judgement of a casefolded path, asked only of the few paths that some
    pattern matches at all: one regular expression of every pattern rules out the rest."""
    patterns = [p for p in spec.patterns if p.include is not None and p.regex is not None]
    if not patterns:
        return lambda path: False
    alternatives = (p.regex.pattern.replace("(?P<ps_d>", "(?:") for p in patterns)
    any_pattern = re.compile("|".join(f"(?:{a})" for a in alternatives)).match
    return lambda path: any_pattern(path) is not None and spec.match_file(path)


@dataclass(frozen=True)
class SecretSpec:
    """What counts as secret: the built-in patterns, and each ignore text on its own (its
    `!` lines undo only its own lines). A path is secret when any of them says so."""

    specs: tuple[pathspec.PathSpec, ...]
    tests: tuple[Callable[[str], bool], ...]

    def match_file(self, path: str) -> bool:
        return any(spec.match_file(path) for spec in self.specs)

    def test(self, path: str) -> bool:
        return any(test(path) for test in self.tests)


def _is_link(full: str) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(full).st_mode)
    except FileNotFoundError:
        return False  # listed but gone (deleted in the work tree): judged on its text
    except (OSError, ValueError):
        return True  # judged the slow way


def _written(path: str, root: Path, data_dir: Path, spec: SecretSpec) -> Verdict:
    full = Path(os.path.normpath(root / path.replace("\\", "/").strip("/")))
    found = _internal(full, root, data_dir)
    if found:
        return Verdict("internal", found)
    relative = full.relative_to(root).as_posix() if full.is_relative_to(root) else ""
    if _relative_is_inside(relative) and _matches(spec.match_file, relative):
        return Verdict("secret", SECRET_REASON)
    return OK


def _spellings(full: Path, root: Path, *, inside_only: bool = True) -> list[Path]:
    """The path as written (dots and doubled slashes folded) and as it resolves; a data
    folder outside the repository is met only by the resolved spelling of a symlink."""
    written = Path(os.path.normpath(full))
    try:
        resolved = full.resolve()
    except (OSError, RuntimeError):
        resolved = written
    if not inside_only:
        return [written, resolved]
    found = [p for p in (written, resolved) if p == root or p.is_relative_to(root)]
    return found or [written]


def _internal(candidate: Path, root: Path, data_dir: Path | None = None) -> str:
    data_dir = data_dir or _data_dir()
    if candidate == data_dir or candidate.is_relative_to(data_dir):
        return "acdc's own data folder is never read"
    if candidate.is_relative_to(root):
        parts = candidate.relative_to(root).parts
        if any(part.casefold() == ".git" for part in parts):
            return "git's internal folder is never read"
    return ""


def _data_dir() -> Path:
    return Path(settings.ACDC_DATA_DIR).resolve()


def _relative_is_inside(relative: str) -> bool:
    return bool(relative) and not relative.startswith("../")


def secret_patterns() -> tuple[str, ...]:
    extra = getattr(settings, "ACDC_SECRET_PATTERNS", ()) or ()
    return DEFAULT_SECRET_PATTERNS + tuple(extra)


def ignore_text(root: Path) -> str:
    """The repository's `.acdcignore` as it is now ("" when there is none)."""
    try:
        return (Path(root) / IGNORE_FILE).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def secret_spec(root: Path, floor: tuple[str, ...] = ()) -> SecretSpec:
    ignore = root / IGNORE_FILE
    try:
        stamp = ignore.stat().st_mtime_ns
    except OSError:
        stamp = 0
    return _compiled(str(root), stamp, secret_patterns(), tuple(floor))


@lru_cache(maxsize=16)
def _compiled(
    root: str, stamp: int, patterns: tuple[str, ...], floor: tuple[str, ...]
) -> SecretSpec:
    texts = [ignore_text(Path(root)) if stamp else "", *floor]
    specs = [_spec(p.casefold() for p in patterns)]
    specs += [_spec(line.casefold() for line in text.splitlines()) for text in dict.fromkeys(texts)]
    specs = [spec for spec in specs if spec.patterns]
    return SecretSpec(tuple(specs), tuple(_fast_test(spec) for spec in specs))


def _spec(lines: Iterable[str]) -> pathspec.PathSpec:
    return pathspec.GitIgnoreSpec.from_lines(list(lines))
