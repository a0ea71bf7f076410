"""`acdc bench turn --part storage`: how the SQLite file grows with a session.

Each row runs in a child process of its own (`python -m tests.bench.turn_storage`), on a
fresh database, so the file holds one session and /proc/self/io counts only its writes. The
session has one ~20 KB file selected and a checkpoint every 10 turns; answers are ~250 words.
After 100 and 200 turns the WAL is folded into the database (`PRAGMA
wal_checkpoint(TRUNCATE)`) and the file is measured against the messages' text. Bytes written
per turn are `wchar` deltas of /proc/self/io (every byte the process handed to write(); the
turns write nothing but the database and its WAL) over turns 11–20 and 91–100, with the
kernel's `write_bytes` (what reached the block layer) alongside. One row keeps compaction
out of the way, one compacts often (a low ACDC_COMPACTION_TRIGGER_TOKENS).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.bench.django_env import setup_django
from tests.bench.report import markdown_table
from tests.bench.sessions import prose
from tests.bench.turn_server import ROOT, make_repo

NO_COMPACTION = 10_000_000
LOW_TRIGGER = 8_000  # tokens: the 4,000-token verbatim window, a summary and ~10 turns
GOAL_TEXT_FACTOR, GOAL_SLACK = 6, 200_000
GOAL_WRITE_RATIO = 1.5


@dataclass(frozen=True)
class StorageSpec:
    turns: int = 200
    sizes_at: tuple[int, ...] = (100, 200)
    early: tuple[int, int] = (11, 20)  # turns, inclusive
    late: tuple[int, int] = (91, 100)
    user_words: int = 40
    answer_words: int = 250
    file_functions: int = 45  # ~18 KB


QUICK = StorageSpec(turns=12, sizes_at=(6, 12), early=(3, 4), late=(9, 10))
ROWS = (("no compaction", NO_COMPACTION), ("compacting", LOW_TRIGGER))


def storage_rows(folder: Path, spec: StorageSpec) -> list[dict[str, Any]]:
    results = []
    for label, trigger in ROWS:
        child = folder / label.replace(" ", "-")
        child.mkdir(parents=True)
        out = child / "result.json"
        command = [
            *(sys.executable, "-m", "tests.bench.turn_storage"),
            *("--folder", str(child), "--trigger", str(trigger), "--out", str(out)),
            *("--spec", json.dumps(spec.__dict__)),
        ]
        subprocess.run(command, cwd=ROOT, check=True)
        results.append({"label": label, "trigger": trigger, **json.loads(out.read_text())})
    return results


def _io() -> dict[str, int]:
    lines = Path("/proc/self/io").read_text().splitlines()
    return {k: int(v) for k, v in (line.split(": ") for line in lines)}


def child_main(folder: Path, trigger: int, spec: StorageSpec) -> dict[str, Any]:
    repo = make_repo(folder / "repo", files=1, functions=spec.file_functions)
    setup_django(repo, folder / "data")
    # Lazy: the pipeline imports chat's models, which need Django set up on this folder.
    from django.test import override_settings

    from tests.bench import turn_pipeline

    with override_settings(
        ACDC_REPO=repo, ACDC_CHECKPOINT_EVERY=10, ACDC_COMPACTION_TRIGGER_TOKENS=trigger
    ):
        return asyncio.run(_grow(turn_pipeline, repo, folder / "data", spec))


async def _grow(pipeline, repo: Path, data: Path, spec: StorageSpec) -> dict[str, Any]:
    script = pipeline.install_script()
    rng = random.Random(2)
    paths = [p.relative_to(repo).as_posix() for p in sorted((repo / "src").glob("*.py"))]
    session_id = await pipeline.new_session(repo, paths)
    io_after = {0: _io()}
    sizes = []
    for turn in range(1, spec.turns + 1):
        user, answer = prose(rng, spec.user_words), prose(rng, spec.answer_words)
        await pipeline.full_turn(session_id, user, answer, script)
        io_after[turn] = _io()
        if turn in spec.sizes_at:
            sizes.append({"turns": turn, **await _measure_file(pipeline, data, session_id)})
            io_after[turn] = _io()  # the checkpoint's own writes are no turn's
    return {
        "file_bytes": (repo / paths[0]).stat().st_size,
        "sizes": sizes,
        "early": _per_turn(io_after, spec.early),
        "late": _per_turn(io_after, spec.late),
        "compactions": script.summaries,
    }


def _per_turn(io_after: dict[int, dict[str, int]], window: tuple[int, int]) -> dict[str, float]:
    first, last = window
    turns = last - first + 1
    return {
        key: (io_after[last][key] - io_after[first - 1][key]) / turns
        for key in ("wchar", "write_bytes")
    }


async def _measure_file(pipeline, data: Path, session_id: str) -> dict[str, Any]:
    tables = await pipeline.checkpoint_and_tables()
    database = data / "acdc.sqlite3"
    wal = Path(str(database) + "-wal")
    return {
        "db_bytes": database.stat().st_size,
        "wal_bytes": wal.stat().st_size if wal.exists() else 0,
        "messages": await pipeline.message_count(session_id),
        "text_bytes": await pipeline.message_text_bytes(),
        "largest_tables": tables,
    }


def storage_markdown(rows: list[dict[str, Any]], spec: StorageSpec) -> str:
    size_rows, write_rows = [], []
    for row in rows:
        for size in row["sizes"]:
            goal = GOAL_TEXT_FACTOR * size["text_bytes"] + GOAL_SLACK
            size_rows.append(
                [
                    row["label"],
                    f"{size['turns']}",
                    f"{size['messages']}",
                    f"{size['db_bytes'] / 1024:,.0f} KB",
                    f"{size['db_bytes'] / max(1, size['messages']):,.0f} B",
                    f"{size['text_bytes'] / 1024:,.0f} KB",
                    f"{(size['db_bytes'] - GOAL_SLACK) / max(1, size['text_bytes']):.1f}x",
                    "met" if size["db_bytes"] <= goal else "NOT met",
                ]
            )
        early, late = row["early"], row["late"]
        ratio = late["wchar"] / early["wchar"] if early["wchar"] else 0.0
        disk = late["write_bytes"] / early["write_bytes"] if early["write_bytes"] else 0.0
        write_rows.append(
            [
                row["label"],
                f"{early['wchar'] / 1024:,.0f} KB",
                f"{late['wchar'] / 1024:,.0f} KB",
                f"{ratio:.2f}x",
                "met" if ratio <= GOAL_WRITE_RATIO else "NOT met",
                f"{early['write_bytes'] / 1024:,.0f} / {late['write_bytes'] / 1024:,.0f} KB "
                f"({disk:.2f}x)",
            ]
        )
    size_header = [
        "session",
        "turns",
        "messages",
        "database (WAL folded in)",
        "per message",
        "message text",
        "(DB − 200 KB) / text",
        "goal ≤ 6x text + 200 KB",
    ]
    a, b = (f"{spec.early[0]}–{spec.early[1]}", f"{spec.late[0]}–{spec.late[1]}")
    write_header = [
        "session",
        f"written per turn, turns {a}",
        f"turns {b}",
        "ratio",
        f"goal ≤ {GOAL_WRITE_RATIO}x",
        "block-layer writes per turn (same turns)",
    ]
    compactions = ", ".join(f"{r['label']}: {r['compactions']}" for r in rows)
    largest = "; ".join(
        f"{r['label']}: " + ", ".join(f"{n} {b / 1024:,.0f} KB" for n, b in last)
        for r in rows
        if (last := r["sizes"][-1]["largest_tables"])
    )
    note = (
        f"One session, one {rows[0]['file_bytes'] / 1024:.0f} KB file selected, a checkpoint "
        f"every 10 turns, {spec.user_words}-word messages and {spec.answer_words}-word answers "
        f"(fake model). Written = `wchar` of /proc/self/io: bytes the process passed to "
        f"write() (SQLite's database and WAL writes). Compactions (summaries asked for): "
        f"{compactions}. Largest tables and indexes at the end (SQLite's dbstat): {largest}."
    )
    return "\n\n".join(
        [
            markdown_table(size_header, size_rows, "lrrrrrrl"),
            markdown_table(write_header, write_rows, "lrrrlr"),
            note,
        ]
    )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.bench.turn_storage")
    parser.add_argument("--folder", type=Path, required=True)
    parser.add_argument("--trigger", type=int, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--spec", required=True, help="StorageSpec fields as JSON")
    args = parser.parse_args(argv)
    raw = json.loads(args.spec)
    spec = StorageSpec(**{k: tuple(v) if isinstance(v, list) else v for k, v in raw.items()})
    result = child_main(args.folder, args.trigger, spec)
    args.out.write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
