"""The repository as git describes it: which files exist, their status, what is ignored.

Written once for every surface: the picker, the model's `list_files` and `grep`, and the
watcher. Listing is `git ls-files -co --exclude-standard` (tracked plus untracked and not
ignored); without git (not a repository, git missing) it falls back to walking the folder.
Never listed: `.git/` and acdc's own data folder `.acdc/`, whatever the ignore files say.
Names that are not valid UTF-8 are left out and counted (a model cannot name them back).
Git's output is always read NUL-separated (`-z`), never as quoted lines, and a path is
always passed after `--` as a literal pathspec. `shown` writes a path as one unambiguous
line of text for the model: as it is, or as a JSON string when it holds a colon, a line
break or the like.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pathspec

from contextcore.paths import shown as shown  # one rule, re-exported for the repository's surfaces

HIDDEN_DIRS = frozenset({".git", ".acdc"})
GIT_SECONDS = 60
# A path given to git names that file or folder: `:(glob)*.py` or `*` is not a pattern.
_LITERAL = ("--literal-pathspecs",)


@dataclass(frozen=True)
class Listing:
    paths: list[str]  # sorted, relative, "/"-separated
    undecodable: int = 0


def hidden(path: str) -> bool:
    """True for paths inside `.git/` or acdc's data folder."""
    return path.split("/", 1)[0] in HIDDEN_DIRS


def short(path: str) -> str:
    """A path as a reason quotes it: written as the listings write it (`shown`: a name with
    a line break or a colon does not split or blur the reason), and a 5,000-character path
    is not repeated whole."""
    text = shown(path)
    return text if len(text) <= 120 else f"{text[:100]}… ({len(path):,} characters)"


def is_work_tree(root: Path) -> bool | None:
    """Whether `root` is inside a git work tree; None when git itself cannot run. Without
    one, `list_files` walks the whole folder (its .gitignore does not thin the list)."""
    command = ["git", "-C", str(root), "rev-parse", "--is-inside-work-tree"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=GIT_SECONDS)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.returncode == 0 and done.stdout.strip() == "true"


def list_files(root: Path, below: str = "") -> Listing:
    """Every file of the repository (below the folder `below`, when given)."""
    command = ["git", *_LITERAL, "-C", str(root), "ls-files", "-co", "--exclude-standard", "-z"]
    if below:
        command += ["--", below]
    try:
        raw = _git(command)
        names = [n for n in raw.split(b"\0") if n]
    except (OSError, subprocess.SubprocessError):
        start = root / below
        names = [p.relative_to(root).as_posix().encode() for p in start.rglob("*") if p.is_file()]
    paths, undecodable = set(), 0
    for name in names:
        try:
            path = name.decode("utf-8")
        except UnicodeDecodeError:
            undecodable += 1
            continue
        if not hidden(path):
            paths.add(path)
    return Listing(sorted(paths), undecodable)


def status(root: Path) -> dict[str, str]:
    """Badges from `git status --porcelain`: M modified, S staged, U untracked, D deleted."""
    command = ["git", "-C", str(root), "status", "--porcelain=v1", "-z", "--untracked-files=all"]
    try:
        out = _git(command).decode("utf-8", "replace")
    except (OSError, subprocess.SubprocessError):
        return {}
    badges: dict[str, str] = {}
    entries = iter(out.split("\0"))
    for entry in entries:
        if len(entry) < 4:
            continue
        x, y, path = entry[0], entry[1], entry[3:]
        if x in "RC":
            next(entries, None)  # the rename's source path follows
        if hidden(path):
            continue
        badge = _badge(x, y)
        if badge:
            badges[path] = badge
    return badges


def _badge(x: str, y: str) -> str:
    if x == "?":
        return "U"
    if "D" in (x, y):
        return "D"
    if y == "M":
        return "M"
    return "S" if x in "MARC" else ""


def _git(command: list[str]) -> bytes:
    return subprocess.run(command, capture_output=True, check=True, timeout=GIT_SECONDS).stdout


class GrepFailed(Exception):
    """A search git could not carry out; the message says why, in words for the model."""


# git grep -z: path NUL line-number NUL text LF. A path may hold a line break, never a NUL;
# the text ends at the line feed (-I leaves binary files out; a late NUL stays in the text).
_GREP_RECORD = re.compile(rb"([^\0]*)\0(\d+)\0([^\n]*)\n?")


def grep(
    root: Path, pattern: str, below: str = "", *, seconds: float, every_file: bool = False
) -> tuple[list[tuple[str, str, str]], int]:
    """(path, line number, text) of every line below `below` that matches the regular
    expression `pattern`, in text files git lists (or, outside a repository, does not
    ignore; `every_file`: every file of the folder `root`); each path exactly as git names
    the file (NUL-separated, never quoted), and how many paths were not valid UTF-8.
    GrepFailed says why a search could not run."""
    done = _grep(root, ["-e", pattern], below, seconds, every_file=every_file)
    found, undecodable, position = [], set(), 0
    while position < len(done.stdout):
        record = _GREP_RECORD.match(done.stdout, position)
        if record is None:  # not git grep -z's shape: stop rather than guess at a path
            break
        position = record.end()
        try:
            path = record[1].decode("utf-8")
        except UnicodeDecodeError:
            undecodable.add(record[1])
            continue
        text = record[3].decode("utf-8", "replace").replace("\0", "\ufffd")
        found.append((path, record[2].decode("ascii"), text))
    return found, len(undecodable)


def grep_paths(root: Path, pattern: str, below: str = "", *, seconds: float) -> list[str]:
    """The files `grep` would search that hold a line matching `pattern`, case-blind
    (names that are not valid UTF-8 left out)."""
    done = _grep(root, ["-l", "-i", "-e", pattern], below, seconds)
    paths = []
    for name in done.stdout.split(b"\0"):
        try:
            paths.append(name.decode("utf-8"))
        except UnicodeDecodeError:
            continue
    return [path for path in paths if path]


def _grep(
    root: Path, rest: list[str], below: str, seconds: float, *, every_file: bool = False
) -> subprocess.CompletedProcess:
    tracked = not every_file and (root / ".git").exists()
    command = ["git", *_LITERAL, "-c", "core.quotePath=false", "-C", str(root), "grep"]
    options = ["-z", "-n", "-I", "--no-color"]
    if tracked:
        options.append("--untracked")
    else:
        options += ["--no-index", *([] if every_file else ["--exclude-standard"])]
    rest = [*rest, "--", below or "."]
    # Perl-compatible syntax, as the caller checks it with Python's (POSIX extended reads
    # \d, \w and lazy quantifiers otherwise); a git built without PCRE falls back to it.
    done = _run_grep([*command, "-P", *options, *rest], seconds)
    if done.returncode == 128 and b"USE_LIBPCRE" in done.stderr:
        done = _run_grep([*command, "-E", *options, *rest], seconds)
    if done.returncode not in (0, 1):
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GrepFailed(f"the search failed: {message[-1] if message else 'unknown error'}")
    return done


def _run_grep(command: list[str], seconds: float) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(command, capture_output=True, timeout=seconds)
    except subprocess.TimeoutExpired:
        raise GrepFailed(
            f"the search took longer than {seconds:.0f} s; use a simpler pattern"
        ) from None
    except OSError as exc:
        raise GrepFailed(f"the search could not run ({exc.strerror})") from None


class IgnoreRules:
    """The repository's .gitignore files (root and nested) and .git/info/exclude, read
    again whenever one of them changes; for paths git has not been asked about yet."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._specs: dict[str, tuple[float, pathspec.PathSpec]] = {}

    def _spec(self, source: Path) -> pathspec.PathSpec | None:
        try:
            mtime = source.stat().st_mtime
        except OSError:
            return None
        key = str(source)
        cached = self._specs.get(key)
        if cached is None or cached[0] != mtime:
            lines = source.read_text(encoding="utf-8", errors="replace").splitlines()
            cached = (mtime, pathspec.GitIgnoreSpec.from_lines(lines))
            self._specs[key] = cached
        return cached[1]

    def ignored(self, path: str) -> bool:
        if hidden(path):
            return True
        # pathspec's patterns are regular expressions without DOTALL, whose `.` (and `$`)
        # would stumble on a line feed in a name; a NUL matches as git's wildcards do.
        path = path.replace("\n", "\0")
        exclude = self._spec(self.root / ".git" / "info" / "exclude")
        if exclude is not None and exclude.match_file(path):
            return True
        parts = path.split("/")
        for depth in range(len(parts)):
            folder = "/".join(parts[:depth])
            spec = self._spec(self.root / folder / ".gitignore")
            rest = "/".join(parts[depth:])
            if spec is not None and spec.match_file(rest):
                return True
        return False
