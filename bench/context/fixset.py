"""The localization set: fix commits of public repositories, frozen to `fixes.json`.

A case is one commit of a repository's own history whose subject says it fixes a bug:
not a merge, one to four non-test source files changed (every one already there in the
parent), a small diff. The query is the commit's whole message; the answer is the source
files it changed and, in each, the parent's line numbers the fix changed (a deleted or
replaced line; for a pure insertion, the line it was inserted after). Tests, docs and
changelogs a fix also touched are not part of the answer. `build` regenerates the file
from local mirrors of the repositories (`<mirrors>/<owner>+<name>/repo`, or
`<mirrors>/<owner>/<name>`); nothing here decides whether acdc finds the answer.
Non-goals: checking cases out (localization), scoring (recall).
"""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FROZEN = Path(__file__).with_name("fixes.json")
# owner/name and the suffixes of its source files: three languages, none of them acdc.
REPOSITORIES: dict[str, tuple[str, ...]] = {
    "pallets/click": (".py",),
    "psf/requests": (".py",),
    "expressjs/express": (".js",),
    "spf13/cobra": (".go",),
}
CASES_PER_REPO = 30
MAX_FILES = 4
MAX_CHANGED_LINES = 40  # pre-image lines the fix changed, over all its files
MAX_MESSAGE_CHARS = 2000
SUBJECT = re.compile(r"\b(fix(e[sd])?|bug(fix)?|regression)\b", re.IGNORECASE)
# Fixes of words, looks or tooling rather than behaviour: no code to localize.
SKIP_SUBJECT = re.compile(
    r"\b(revert|typos?|grammar|spelling|wording|docs?|documentation|docstring|jsdoc|comments?"
    r"|links?|lint(ing|er)?|ruff|pyright|flake8|mypy|typing|ignored|formatting|whitespace|indentation|changelog"
    r"|tests?|testing|ci)\b",
    re.IGNORECASE,
)
# Folders whose files are no fix's answer: tests, examples, documentation.
TEST_PARTS = frozenset(
    {"test", "tests", "testing", "__tests__", "spec", "specs", "examples", "docs", "doc"}
)
TEST_NAME = re.compile(
    r"(^test_.*\.py$|_test\.(py|go)$|\.(test|spec)\.[jt]sx?$|^(conftest|setup)\.py$)"
)
HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@", re.MULTILINE)


@dataclass(frozen=True)
class Case:
    """One fix: the query, and the answer as files and the parent's changed lines."""

    id: str
    repo: str
    commit: str
    parent: str
    message: str
    answer: dict[str, list[int]]


def is_test(path: str) -> bool:
    parts = path.split("/")
    return bool(TEST_PARTS.intersection(parts[:-1])) or bool(TEST_NAME.search(parts[-1]))


def mirror(mirrors: Path, repo: str) -> Path:
    """The local git directory of `repo` under `mirrors`; raises when there is none."""
    owner, name = repo.split("/")
    for found in (mirrors / f"{owner}+{name}" / "repo", mirrors / owner / name):
        if (found / "HEAD").exists() or (found / ".git").exists():
            return found
    raise FileNotFoundError(
        f"no mirror of {repo} under {mirrors}: `git clone --mirror "
        f"https://github.com/{repo} {mirrors}/{owner}+{name}/repo`"
    )


def _git(git_dir: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(git_dir), *args],
        capture_output=True,
        text=True,
        check=True,
        errors="replace",
    )
    return done.stdout


def changed_lines(diff: str) -> list[int]:
    """The parent's line numbers a zero-context diff of one file changed."""
    lines: list[int] = []
    for match in HUNK.finditer(diff):
        start, count = int(match.group(1)), int(match.group(2) or "1")
        lines += range(start, start + count) if count else [max(start, 1)]
    return sorted(set(lines))


def _candidate(git_dir: Path, commit: str, suffixes: tuple[str, ...]) -> dict[str, Any] | None:
    numstat = _git(git_dir, "show", "--numstat", "--format=", "-M", commit).splitlines()
    paths = [row.split("\t")[2] for row in numstat if row.count("\t") == 2]
    sources = [p for p in paths if p.endswith(suffixes) and not is_test(p) and "=>" not in p]
    if not 1 <= len(sources) <= MAX_FILES:
        return None
    parent = _git(git_dir, "rev-parse", f"{commit}^").strip()
    answer: dict[str, list[int]] = {}
    for path in sources:
        exists = subprocess.run(
            ["git", "-C", str(git_dir), "cat-file", "-e", f"{parent}:{path}"],
            capture_output=True,
            check=False,
        )
        if exists.returncode != 0:
            return None  # a new file: nothing in the parent to find
        diff = _git(git_dir, "diff", "-U0", parent, commit, "--", path)
        answer[path] = changed_lines(diff)
    if not 0 < sum(map(len, answer.values())) <= MAX_CHANGED_LINES:
        return None
    return {"parent": parent, "answer": answer}


def build_repo(
    git_dir: Path, repo: str, suffixes: tuple[str, ...], limit: int = CASES_PER_REPO
) -> list[Case]:
    """The newest `limit` fix commits of `repo` that make a case."""
    log = _git(git_dir, "log", "--no-merges", "--format=%H%x00%s", "HEAD")
    cases: list[Case] = []
    for row in log.splitlines():
        commit, _, subject = row.partition("\x00")
        if not SUBJECT.search(subject) or SKIP_SUBJECT.search(subject):
            continue
        message = _git(git_dir, "show", "-s", "--format=%B", commit).strip()
        if len(message) > MAX_MESSAGE_CHARS:
            continue
        found = _candidate(git_dir, commit, suffixes)
        if found is None:
            continue
        cases.append(
            Case(f"{repo}@{commit[:10]}", repo, commit, found["parent"], message, found["answer"])
        )
        if len(cases) == limit:
            break
    return cases


def build(mirrors: Path, repos: dict[str, tuple[str, ...]] | None = None) -> dict[str, Any]:
    """The whole set, rebuilt from the mirrors."""
    repos = REPOSITORIES if repos is None else repos
    frozen: dict[str, Any] = {"repositories": {}, "cases": []}
    for repo in repos:
        git_dir = mirror(mirrors, repo)
        head = _git(git_dir, "rev-parse", "HEAD").strip()
        frozen["repositories"][repo] = {"head": head, "suffixes": list(repos[repo])}
        frozen["cases"] += [case.__dict__ for case in build_repo(git_dir, repo, repos[repo])]
    return frozen


def write(frozen: dict[str, Any], path: Path = FROZEN) -> None:
    path.write_text(json.dumps(frozen, indent=1, sort_keys=True) + "\n")


def load(path: Path = FROZEN) -> list[Case]:
    return [Case(**case) for case in json.loads(path.read_text())["cases"]]
