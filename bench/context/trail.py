"""`acdc bench context --part trail`: what the model still knows of acdc's own work after
1, 3 and 7 compactions, from the artifact trail and from the history alone.

A scripted session runs through the real turn pipeline (`run_turn`, the offline
`acdc/fake` model, SQLite): every turn stores what the edit and command paths store (an
edit applied, every third one undone later, a command run, every other one failing with
a pytest report) and its scripted answer says so in words. After every few turns the
session is compacted as Compact now does (`compact_session`; the summarizer played by the
fake with an extractive summary: the lead sentence of each answer it replaces, within
the cache bench's 220 words, its own earlier summary first). After 1, 3 and 7
compactions one more turn is sent and its request, as the provider received it, is read:
an artifact is recalled by the trail when its line is in the trail's message, by the
summary when the summarizer's last text says what the answer said of it (the path with
its state, the command with its outcome), and by the request without the trail when
its rest (the summary and the verbatim recent turns) does. Figures, never assertions.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.django_env import close_database, setup_django
from bench.report import QUICK_NOTE, machine, machine_line, markdown_table

CHECKPOINTS = (1, 3, 7)
TURNS_PER_COMPACTION = 4
SUMMARY_WORDS = 220  # as the cache bench's scripted summarizer
MODEL = "acdc/fake"
DETECTOR = '{"boundary_index": null, "boundary_reason": "", "confidence": 0.2}'
TRAIL_HEADER = "# Artifact trail"
PYTEST_FAIL = (
    "=========================== short test summary info ============================\n"
    "FAILED tests/test_mod{n}.py::test_case_{n} - AssertionError: assert 1 == 2\n"
    "========================= 1 failed, 9 passed in 0.31s ==========================\n"
)


@dataclass(frozen=True)
class Expected:
    """One artifact and the words that name it: in the trail (`line`), in prose (`words`)."""

    line: str
    words: str


def _repo(folder: Path) -> Path:
    import subprocess

    root = folder / "repo"
    for n in range(8):
        path = root / "src" / f"mod{n}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"def f{n}(x):\n    return x + {n}\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def _store_turn_artifacts(session_id: str, n: int, turn: int) -> tuple[list[Expected], str]:
    """Turn `turn`'s artifacts as the edit and command paths store them, and the answer
    that tells of them."""
    from history.models import CommandRun, PendingEdit

    path = f"src/mod{n % 8}.py"
    status = "undone" if n % 3 == 2 else "applied"
    PendingEdit.objects.create(
        session_id=session_id,
        path=path,
        kind=PendingEdit.Kind.REPLACE,
        old_text=f"    return x + {n % 8}\n",
        new_text=f"    if x is None:\n        return {n}\n    return x + {n % 8}\n",
        status=status,
    )
    failed = n % 2 == 1
    CommandRun.objects.create(
        session_id=session_id,
        name="tests",
        argv=["pytest", "-q", f"tests/test_mod{n}.py"],
        exit_code=1 if failed else 0,
        ending="exited",
        output=PYTEST_FAIL.format(n=n) if failed else "10 passed in 0.30s\n",
    )
    edit = f"edited {path} (+2 -0), turn {turn}: {status}"
    run = f"ran `pytest -q tests/test_mod{n}.py` (tests), turn {turn}: "
    run += f"exit 1; failed: tests/test_mod{n}.py::test_case_{n}" if failed else "exit 0"
    outcome = f"it failed on test_case_{n}" if failed else "it passed"
    undo = f" You undid the edit to {path} afterwards." if status == "undone" else ""
    answer = (
        f"I changed {path} so that None is handled, and ran pytest on "
        f"tests/test_mod{n}.py: {outcome}.{undo} The rest of this answer walks through the "
        "reasoning about the parser, the lexer and their error recovery in some detail, "
        "with the trade-offs of each approach and what to look at next."
    )
    said = f"undid the edit to {path}" if status == "undone" else f"I changed {path} so"
    expected = [
        Expected(edit, said),
        Expected(run, f"pytest on tests/test_mod{n}.py: {outcome}"),
    ]
    return expected, answer


def _summary(history: list[dict[str, Any]]) -> str:
    """The scripted summarizer: its earlier summary, then each answer's lead sentence."""
    leads: list[str] = []
    for message in history:
        text = str(message.get("content", ""))
        if message.get("role") != "assistant" or not text.strip():
            continue
        if "Summary:" in text:
            leads.append(text.split("Summary:", 1)[1].strip())
        else:
            leads.append(text.strip().split(". ")[0].rstrip(".") + ".")
    words = " ".join(leads).split()
    return "Summary: " + " ".join(words[:SUMMARY_WORDS])


def _recall(
    request: list[dict[str, Any]], expected: list[Expected], summary: str
) -> tuple[float, float, float]:
    trail, rest = "", []
    for message in request:
        content = message["content"]
        text = content if isinstance(content, str) else json.dumps(content)
        if text.startswith(TRAIL_HEADER):
            trail = text
        else:
            rest.append(text)
    prose = "\n".join(rest)
    by_trail = sum(f"- {e.line}" in trail for e in expected)
    by_rest = sum(e.words in prose for e in expected)
    by_summary = sum(e.words in summary for e in expected)
    return tuple(n / len(expected) for n in (by_trail, by_summary, by_rest))


async def _play(served: Any, script: Any, compactions: int, repo: Path) -> list[dict[str, Any]]:
    from channels.db import database_sync_to_async

    from chat.llm.fake import FakeStep
    from chat.session import SessionContext
    from chat.session.compaction import compact_session
    from chat.turn.turns import TurnInput, TurnServices, run_turn
    from history import services

    async def ignore(event: object) -> None:
        return None

    async def turn(session_id: str, text: str, answer: str) -> None:
        script.enqueue(FakeStep(text=answer))
        await run_turn(
            TurnInput(session_id=session_id, user_text=text, model=MODEL),
            TurnServices(emit=ignore, wiring=served),
        )

    session = await database_sync_to_async(services.session_create)(
        repository=str(repo), model=MODEL, title="bench: artifact trail"
    )
    expected: list[Expected] = []
    rows: list[dict[str, Any]] = []
    turns = 0
    for done in range(1, compactions + 1):
        for _ in range(TURNS_PER_COMPACTION):
            turns += 1
            script.enqueue(FakeStep(text=f"On it ({turns})."))
            await run_turn(
                TurnInput(
                    session_id=session.id,
                    user_text=f"Step {turns}: handle None in the next module and test it.",
                    model=MODEL,
                ),
                TurnServices(emit=ignore, wiring=served),
            )
            found, answer = await database_sync_to_async(_store_turn_artifacts)(
                session.id, turns - 1, turns
            )
            expected += found
            turns += 1
            await turn(session.id, f"Step {turns}: what did that change?", answer)
        opened = await database_sync_to_async(SessionContext.open)(session.id, served)
        summary = _summary(opened.manager.get_history())
        script.enqueue(
            FakeStep(text=DETECTOR, purpose="topic_detection"),
            FakeStep(text=summary, purpose="history_summary"),
        )
        outcome = await compact_session(session.id, served, force=True)
        if done in CHECKPOINTS:
            turns += 1
            await turn(session.id, f"Step {turns}: where are we?", "Here.")
            by_trail, by_summary, by_rest = _recall(script.requests[-1].messages, expected, summary)
            rows.append(
                {
                    "compactions": done,
                    "case": outcome.case,
                    "artifacts": len(expected),
                    "trail": by_trail,
                    "summary_text": by_summary,
                    "without_trail": by_rest,
                    "trail_tokens": _trail_tokens(script.requests[-1].messages),
                }
            )
    return rows


def _trail_tokens(request: list[dict[str, Any]]) -> int:
    from contextcore.tokens import TokenCounter

    counter = TokenCounter("cl100k_base")
    return sum(
        counter.count_text(m["content"])
        for m in request
        if isinstance(m["content"], str) and m["content"].startswith(TRAIL_HEADER)
    )


def _measure(folder: Path, compactions: int) -> list[dict[str, Any]]:
    repo = _repo(folder)
    setup_django(repo, folder / "data")
    from django.apps import apps
    from django.test import override_settings

    from chat.live.served import Served
    from chat.llm.fake import FakeScript
    from chat.llm.runtime import Runtime
    from chat.llm.sdk import acdc_provider

    script = FakeScript()
    previous = acdc_provider().install(script)
    settings = {
        "ACDC_REPO": repo,
        "ACDC_COMPACTION_TRIGGER_TOKENS": 600,
        "ACDC_VERBATIM_WINDOW_TOKENS": 250,
        "ACDC_SMALLER_MODEL": MODEL,
        "ACDC_CHECKPOINT_EVERY": 0,
    }
    config = apps.get_app_config("chat")
    try:
        with override_settings(**settings):
            served = Served.build(runtime=Runtime.from_settings())
            held, config.served = config.served, served
            try:
                return asyncio.run(_play(served, script, compactions, repo))
            finally:
                config.served = held
    finally:
        acdc_provider().install(previous)
        close_database()


def run(args: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    """The trail part's markdown and data."""
    info = machine()
    started = time.perf_counter()
    compactions = CHECKPOINTS[0] if args.quick else CHECKPOINTS[-1]
    with tempfile.TemporaryDirectory(prefix="acdc-trail-") as tmp:
        rows = _measure(Path(tmp), compactions)
    table = markdown_table(
        (
            "compactions",
            "artifacts so far",
            "artifact trail",
            "summary's text",
            "request without the trail",
            "trail tokens",
        ),
        [
            (
                str(r["compactions"]),
                str(r["artifacts"]),
                f"{100 * r['trail']:.0f}%",
                f"{100 * r['summary_text']:.0f}%",
                f"{100 * r['without_trail']:.0f}%",
                str(r["trail_tokens"]),
            )
            for r in rows
        ],
        "rrrrrr",
    )
    lines = [
        "## acdc bench context --part trail",
        "",
        "Recall of acdc's own artifacts (edits with their state, commands with their exit "
        "status and failing tests) in the request after N compactions: from the artifact "
        "trail, from the scripted summarizer's last text, and from the request without the "
        "trail (the summary and the verbatim recent turns). "
        f"{TURNS_PER_COMPACTION} edits and {TURNS_PER_COMPACTION} commands between compactions.",
        machine_line(info) + f"; took {time.perf_counter() - started:.1f} s.",
        "",
        table,
        *(["", QUICK_NOTE] if args.quick else []),
    ]
    return "\n".join(lines), {"machine": info, "rows": rows}
