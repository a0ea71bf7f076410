"""The edits benchmark's real-history corpus: hunks of public repositories' commits, with the
drift models make.

Run once with clones of the repositories (`python -m bench.edits.history --repo
pallets/flask=PATH --repo encode/starlette=PATH`) to write `history_sources.jsonl` (the
file before each chosen commit) and `history_cases.jsonl` into `bench/edits/corpus/`.
Every case is one hunk of a real commit as a model would send it: the changed lines with a
few lines of context, then drift (trailing whitespace, an indentation offset, tabs, curly
quotes, no final newline, the function's first line and `...` for the lines between), or
a stale file (another hunk of the same commit already on disk, a person's edit of the same
lines, the same change made already), or a token split (a number the person lengthened, a
name that is the start of a longer one). The expected file is the hunk applied, built here
by splicing lines, never by a matcher; a quote that does not tell one place expects a
refusal and records the file the model meant. Non-goals: running on every bench (the
corpus is fixed), keeping the repositories (only the derived corpus is committed).
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from difflib import SequenceMatcher
from pathlib import Path
from typing import Any

from bench.edits.builder import CORPUS
from bench.edits.drift import SHAPES, Hunk, build_case

SEED = 29
MIN_BYTES, MAX_BYTES = 1_500, 14_000
VERSIONS_PER_REPO = 28
MAX_HUNK_LINES = 10


@dataclass(frozen=True)
class Version:
    key: str  # repo/path@commit: the file as it was before the commit
    origin: dict[str, str]
    before: list[str]  # lines without their line breaks
    after: list[str]
    hunks: list[Hunk]


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", str(repo), *args], capture_output=True, check=True
    ).stdout.decode("utf-8")


def versions(name: str, repo: Path, rng: random.Random) -> Iterator[Version]:
    """Files changed by commits spread over the history, each before and after."""
    commits = git(repo, "log", "--no-merges", "--format=%H", "HEAD", "--", "*.py").split()
    rng.shuffle(commits)
    for commit in commits:
        changed = git(
            repo, "diff-tree", "-r", "--no-commit-id", "--name-only", "--diff-filter=M", commit
        ).split()
        for path in (p for p in changed if p.endswith(".py")):
            try:
                before = git(repo, "show", f"{commit}^:{path}")
                after = git(repo, "show", f"{commit}:{path}")
            except (subprocess.CalledProcessError, UnicodeDecodeError):
                continue
            if not MIN_BYTES <= len(before.encode()) <= MAX_BYTES or "\r" in before + after:
                continue
            if not (before.endswith("\n") and after.endswith("\n")) or "\t" in before:
                continue
            old, new = before.split("\n")[:-1], after.split("\n")[:-1]
            hunks = hunks_of(old, new)
            if len(hunks) >= 2:
                key = f"{name}/{path}@{commit[:10]}"
                origin = {"repository": name, "commit": commit, "path": path}
                yield Version(key, origin, old, new, hunks)


def hunks_of(old: list[str], new: list[str]) -> list[Hunk]:
    """The changed regions, each small and holding a line of code."""
    found = []
    opcodes = SequenceMatcher(None, old, new, autojunk=False).get_opcodes()
    for tag, i1, i2, j1, j2 in opcodes:
        if tag == "equal" or max(i2 - i1, j2 - j1) > MAX_HUNK_LINES:
            continue
        if not any(line.strip() for line in old[i1:i2] + new[j1:j2]):
            continue
        found.append(Hunk(i1, i2, tuple(new[j1:j2])))
    return found


def choose(repos: dict[str, Path], per_repo: int = VERSIONS_PER_REPO) -> list[Version]:
    rng = random.Random(SEED)
    chosen = []
    for name, repo in sorted(repos.items()):
        seen_paths: set[str] = set()
        for version in versions(name, repo, rng):
            path = version.origin["path"]
            if path in seen_paths:  # spread over files, not one file's many versions
                continue
            seen_paths.add(path)
            chosen.append(version)
            if len(seen_paths) >= per_repo:
                break
    return chosen


def build(chosen: list[Version]) -> list[dict[str, Any]]:
    rng = random.Random(SEED)
    cases: list[dict[str, Any]] = []
    for shape, (count, make) in SHAPES.items():
        tries = 0
        made = 0
        while made < count and tries < count * 200:
            tries += 1
            version = rng.choice(chosen)
            case = make(version.before, version.hunks, rng)
            if case is None:
                continue
            made += 1
            cases.append(build_case(shape, made, version.key, version.origin, version.before, case))
    return cases


def write(chosen: list[Version], cases: list[dict[str, Any]], folder: Path = CORPUS) -> None:
    used = {case["file"] for case in cases}
    with (folder / "history_sources.jsonl").open("w", encoding="utf-8") as out:
        for version in chosen:
            if version.key in used:
                text = "".join(line + "\n" for line in version.before)
                row = {"file": version.key, "variant": "plain", "text": text}
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
    with (folder / "history_cases.jsonl").open("w", encoding="utf-8") as out:
        for case in cases:
            out.write(json.dumps(case, ensure_ascii=False) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--repo", action="append", required=True, help="owner/name=PATH of a git directory"
    )
    args = parser.parse_args()
    repos = {}
    for spec in args.repo:
        name, _, path = spec.partition("=")
        repos[name] = Path(path)
    chosen = choose(repos)
    cases = build(chosen)
    write(chosen, cases)
    shapes = {c["shape"] for c in cases}
    print(f"{len(cases)} cases of {len(shapes)} shapes from {len(chosen)} file versions")


if __name__ == "__main__":
    main()
