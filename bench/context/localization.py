"""`acdc bench context --part localization`: does the first request hold what the fix changed?

For every case of the frozen set (`fixset`: real fix commits of public repositories, the
commit's message as the person's message, the source lines the fix changed as the
answer) the repository is checked out at the fix's parent (one clone per repository,
moved with `git checkout -f`), and three texts are judged by `recall` case by case: acdc's
first request for the message through the real turn (`acdc_request`, no file ticked),
BM25's best 40-line pieces (`bm25`) and aider's repository map for the message
(`aider_map`, in aider's own venv; left out when there is none), both at the token size
of acdc's request for that case. Settings come from the environment, so
`ACDC_SUGGEST_TOKENS=0 acdc bench context --part localization` measures acdc without
its suggestions. Figures, never assertions. `--regenerate` rebuilds the set from the
mirrors first.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.context import bm25, fixset
from bench.context.aider_map import AiderMaps, AiderUnavailable, interpreter
from bench.context.recall import Judge, recall
from bench.context.report import localization_markdown
from bench.django_env import close_database, setup_django
from bench.report import machine

QUICK_CASES = 2  # per repository
DEFAULT_MIRRORS = Path(os.environ.get("ACDC_BENCH_MIRRORS", "/work/.mirror"))
SHOWN_SETTINGS = ("ACDC_SUGGEST_TOKENS", "ACDC_MAP_TOKENS", "ACDC_GROUNDING")


def _git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=True
    )
    return done.stdout


def work_clone(mirror: Path, folder: Path) -> Path:
    """A checkout-able clone of `mirror` sharing its objects; aider's cache kept out of
    every listing."""
    subprocess.run(
        ["git", "clone", "-q", "--shared", "--no-checkout", str(mirror), str(folder)],
        check=True,
    )
    (folder / ".git" / "info").mkdir(parents=True, exist_ok=True)
    with (folder / ".git" / "info" / "exclude").open("a") as exclude:
        exclude.write("\n.aider*\n")
    return folder


def check_out(root: Path, commit: str) -> list[str]:
    """`root` at `commit`, nothing else in it; its tracked files."""
    _git(root, "checkout", "-q", "-f", commit)
    _git(root, "clean", "-q", "-f", "-d")
    return [p for p in _git(root, "ls-files", "-z").split("\0") if p]


def _read(root: Path, paths: Sequence[str]) -> dict[str, str]:
    texts = {}
    for path in paths:
        try:
            texts[path] = (root / path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
    return texts


async def _case(
    acdc: Any,
    aider: AiderMaps | None,
    case: fixset.Case,
    files: list[str],
    suffixes: tuple[str, ...],
) -> dict[str, Any]:
    root = acdc.root
    sources = _read(root, [f for f in files if f.endswith(suffixes)])
    answer_sources = {**sources, **_read(root, list(case.answer))}
    started = time.perf_counter()
    sent = await acdc.first_request(case.message)
    row: dict[str, Any] = {
        "id": case.id,
        "repo": case.repo,
        "tokens": sent.tokens,
        "acdc_s": time.perf_counter() - started,
        "answer_files": len(case.answer),
        "answer_lines": sum(len(v) for v in case.answer.values()),
        "acdc": recall(Judge.of(sent.text), case.answer, answer_sources).__dict__,
    }
    count = acdc.counter.count_text
    pieces = bm25.fill(case.message, sources, sent.tokens, count)
    row["bm25"] = recall(Judge.of(pieces), case.answer, answer_sources).__dict__
    row["bm25_tokens"] = count(pieces)
    if aider is not None:
        try:
            mapped = aider.map(root, files, case.message, sent.tokens)
        except AiderUnavailable as exc:  # counted as an empty map, and said
            mapped, row["aider_error"] = "", str(exc)
        row["aider"] = recall(Judge.of(mapped), case.answer, answer_sources).__dict__
        row["aider_tokens"] = count(mapped)
    return row


async def _repo_rows(
    acdc: Any, aider: AiderMaps | None, cases: list[fixset.Case], suffixes: tuple[str, ...]
) -> list[dict[str, Any]]:
    rows = []
    for case in cases:
        files = await asyncio.to_thread(check_out, acdc.root, case.parent)
        rows.append(await _case(acdc, aider, case, files, suffixes))
    return rows


def measure(
    cases: list[fixset.Case],
    mirrors: Path,
    folder: Path,
    aider: AiderMaps | None = None,
    suffixes: dict[str, tuple[str, ...]] | None = None,
) -> list[dict[str, Any]]:
    """Every case's row: acdc's, BM25's and (with `aider`) aider's recall."""
    repos = list(dict.fromkeys(case.repo for case in cases))
    (folder / "placeholder").mkdir(exist_ok=True)
    setup_django(folder / "placeholder", folder / "data")
    from bench.context.acdc_request import AcdcRequests

    rows: list[dict[str, Any]] = []
    try:
        for repo in repos:
            root = work_clone(fixset.mirror(mirrors, repo), folder / repo.replace("/", "+"))
            own = (suffixes or fixset.REPOSITORIES).get(repo, (".py", ".js", ".ts", ".go"))
            with AcdcRequests.open(root) as acdc:
                chosen = [c for c in cases if c.repo == repo]
                rows += asyncio.run(_repo_rows(acdc, aider, chosen, own))
    finally:
        close_database()
    return rows


def _cases(args: argparse.Namespace, mirrors: Path) -> list[fixset.Case]:
    frozen = getattr(args, "fix_set", None) or fixset.FROZEN
    if getattr(args, "regenerate", False):
        fixset.write(fixset.build(mirrors), frozen)
    cases = fixset.load(frozen)
    wanted = getattr(args, "repo", None)
    if wanted:
        cases = [c for c in cases if c.repo in wanted]
    limit = QUICK_CASES if args.quick else getattr(args, "cases", None)
    return first_of_each(cases, limit) if limit else cases


def first_of_each(cases: list[fixset.Case], limit: int) -> list[fixset.Case]:
    """The first `limit` cases of each repository, in the set's order."""
    taken: dict[str, int] = {}
    kept = []
    for case in cases:
        if taken.get(case.repo, 0) < limit:
            taken[case.repo] = taken.get(case.repo, 0) + 1
            kept.append(case)
    return kept


def run(args: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    """The localization part's markdown and data."""
    info = machine()
    started = time.perf_counter()
    mirrors = Path(getattr(args, "mirrors", None) or DEFAULT_MIRRORS)
    cases = _cases(args, mirrors)
    python = interpreter(getattr(args, "aider", None))
    aider = None
    if python is not None and python.exists():
        try:
            aider = AiderMaps(python)
        except AiderUnavailable:
            aider = None
    settings = {name: os.environ[name] for name in SHOWN_SETTINGS if name in os.environ}
    try:
        with tempfile.TemporaryDirectory(prefix="acdc-localization-") as tmp:
            rows = measure(cases, mirrors, Path(tmp), aider)
    finally:
        if aider is not None:
            aider.close()
    data = {
        "machine": info,
        "settings": settings,
        "aider": aider.version if aider else None,
        "seconds": time.perf_counter() - started,
        "rows": rows,
    }
    return localization_markdown(data, args.quick), data
