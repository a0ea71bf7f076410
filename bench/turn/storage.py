"""`acdc bench turn --part storage`: how the SQLite file grows with a session.

Issue 24's shape: one session, one ~20 KB file selected, a checkpoint every 10 turns,
~280-character questions and 500-character replies. Each row runs in a child process of its
own (`python -m bench.turn.storage`), on a fresh database, so the file holds one
session and /proc/self/io counts only its writes. After 100 and 200 turns the WAL is folded
into the database (`PRAGMA wal_checkpoint(TRUNCATE)`) and the file is measured against the
messages' text (goal: ≤ 4x the text + 200 KB). Bytes written per turn are `wchar` deltas of
/proc/self/io (every byte the process handed to write(); the turns write nothing but the
database and its WAL) over turns 11–20, 91–100 and 191–200 (goal: a late turn ≤ 64 KB,
and no more a session later), with the kernel's `write_bytes` (what reached the block
layer) alongside.
Each window starts on an empty log and ends with a checkpoint, so it pays for folding its
own pages into the database (SQLite's automatic checkpoints every 1,000 pages otherwise
land in one window and not the other); the log's part is shown apart.

The rows differ in the database's page size, which the child sets before Django creates
the file: acdc's 512 bytes (acdc.settings), 1 KB (the simple alternative that reads fewer
pages in a scan) and SQLite's default 4 KB (acdc's before issue 24). One more row compacts
often (a low ACDC_COMPACTION_TRIGGER_TOKENS).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sqlite3
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import CHECKOUT
from bench.django_env import setup_django
from bench.live_server import make_repo
from bench.report import markdown_table
from bench.sessions import prose

NO_COMPACTION = 10_000_000
LOW_TRIGGER = 8_000  # tokens: the 4,000-token verbatim window, a summary and ~10 turns
GOAL_TEXT_FACTOR, GOAL_SLACK = 4, 200_000
GOAL_LATE_TURN = 64 * 1024  # bytes written by a turn late in the session


@dataclass(frozen=True)
class StorageSpec:
    turns: int = 200
    sizes_at: tuple[int, ...] = (100, 200)
    early: tuple[int, int] = (11, 20)  # turns, inclusive
    late: tuple[int, int] = (91, 100)
    last: tuple[int, int] = (191, 200)  # whether a turn still writes more a session later
    user_words: int = 40
    answer_chars: int = 500
    file_functions: int = 50  # ~20 KB


QUICK = StorageSpec(turns=12, sizes_at=(6, 12), early=(3, 4), late=(9, 10), last=(11, 12))
ACDC_PAGE = 512  # as acdc.settings creates the database
ROWS = (  # label, compaction trigger, page size
    ("acdc (512-byte pages)", NO_COMPACTION, ACDC_PAGE),
    ("1 KB pages", NO_COMPACTION, 1024),
    ("4 KB pages", NO_COMPACTION, 4096),
    ("acdc, compacting", LOW_TRIGGER, ACDC_PAGE),
)


def storage_rows(folder: Path, spec: StorageSpec) -> list[dict[str, Any]]:
    results = []
    for label, trigger, page in ROWS:
        child = folder / label.translate(str.maketrans(" ,()", "----"))
        child.mkdir(parents=True)
        out = child / "result.json"
        command = [
            *(sys.executable, "-m", "bench.turn.storage"),
            *("--folder", str(child), "--trigger", str(trigger), "--out", str(out)),
            *("--page", str(page), "--spec", json.dumps(spec.__dict__)),
        ]
        subprocess.run(command, cwd=CHECKOUT, check=True)
        result = json.loads(out.read_text())
        results.append({"label": label, "trigger": trigger, "page": page, **result})
    return results


def _io() -> dict[str, int]:
    lines = Path("/proc/self/io").read_text().splitlines()
    return {k: int(v) for k, v in (line.split(": ") for line in lines)}


def _create_database(data: Path, page: int) -> None:
    """An empty database file with `page`-byte pages (Django's own page_size is then a no-op)."""
    data.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(data / "acdc.sqlite3")
    db.execute(f"PRAGMA page_size={int(page)}")
    db.execute("PRAGMA journal_mode=WAL")
    db.close()


def child_main(folder: Path, trigger: int, page: int, spec: StorageSpec) -> dict[str, Any]:
    repo = make_repo(folder / "repo", files=1, functions=spec.file_functions)
    _create_database(folder / "data", page)
    setup_django(repo, folder / "data")
    # Lazy: the pipeline imports chat's models, which need Django set up on this folder.
    from django.test import override_settings

    from bench.turn import pipeline as turn_pipeline

    with override_settings(
        ACDC_REPO=repo, ACDC_CHECKPOINT_EVERY=10, ACDC_COMPACTION_TRIGGER_TOKENS=trigger
    ):
        return asyncio.run(_grow(turn_pipeline, repo, folder / "data", spec))


async def _grow(pipeline, repo: Path, data: Path, spec: StorageSpec) -> dict[str, Any]:
    script = pipeline.install_script()
    rng = random.Random(2)
    paths = [p.relative_to(repo).as_posix() for p in sorted((repo / "src").glob("*.py"))]
    session_id = await pipeline.new_session(repo, paths)
    windows = {"early": spec.early, "late": spec.late, "last": spec.last}
    marks: dict[str, dict[str, dict[str, int]]] = {name: {} for name in windows}
    sizes = []
    for turn in range(1, spec.turns + 1):
        for name, (first, _) in windows.items():
            if turn == first:  # an empty log, so the window pays for its own checkpoint
                await pipeline.checkpoint_and_tables()
                marks[name]["start"] = _io()
        user = prose(rng, spec.user_words)
        answer = prose(rng, spec.answer_chars // 4)[: spec.answer_chars - 1] + "."
        await pipeline.full_turn(session_id, user, answer, script)
        for name, (_, last) in windows.items():
            if turn == last:
                marks[name]["log"] = _io()
                await pipeline.checkpoint_and_tables()
                marks[name]["end"] = _io()
        if turn in spec.sizes_at:
            sizes.append({"turns": turn, **await _measure_file(pipeline, data, session_id)})
    return {
        "file_bytes": (repo / paths[0]).stat().st_size,
        "page_size": _page_size(data / "acdc.sqlite3"),
        "sizes": sizes,
        **{name: _per_turn(marks[name], windows[name]) for name in windows},
        "compactions": script.summaries,
    }


def _page_size(database: Path) -> int:
    """The page size the database file's header names (bytes 16-17; 1 stands for 65,536)."""
    with database.open("rb") as file:
        size = int.from_bytes(file.read(18)[16:18], "big")
    return 65_536 if size == 1 else size


def _per_turn(marks: dict[str, dict[str, int]], window: tuple[int, int]) -> dict[str, float]:
    """Bytes per turn of the window: `wchar` into the log and then folded into the
    database by one checkpoint, `log` the log alone, `write_bytes` the block layer's."""
    turns = window[1] - window[0] + 1
    start, log, end = marks["start"], marks["log"], marks["end"]
    return {
        "wchar": (end["wchar"] - start["wchar"]) / turns,
        "log": (log["wchar"] - start["wchar"]) / turns,
        "write_bytes": (end["write_bytes"] - start["write_bytes"]) / turns,
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


def _size_row(row: dict[str, Any], size: dict[str, Any]) -> list[str]:
    goal = GOAL_TEXT_FACTOR * size["text_bytes"] + GOAL_SLACK
    return [
        row["label"],
        f"{size['turns']}",
        f"{size['db_bytes'] / 1024:,.0f} KB",
        f"{size['db_bytes'] / max(1, size['messages']):,.0f} B",
        f"{size['text_bytes'] / 1024:,.0f} KB",
        f"{(size['db_bytes'] - GOAL_SLACK) / max(1, size['text_bytes']):.1f}x",
        f"{goal / 1024:,.0f} KB: " + ("met" if size["db_bytes"] <= goal else "NOT met"),
    ]


def _write_row(row: dict[str, Any]) -> list[str]:
    early, late, last = row["early"], row["late"], row["last"]
    ratio = late["wchar"] / early["wchar"] if early["wchar"] else 0.0
    later = last["wchar"] / late["wchar"] if late["wchar"] else 0.0
    disk = late["write_bytes"] / early["write_bytes"] if early["write_bytes"] else 0.0
    return [
        row["label"],
        f"{early['wchar'] / 1024:,.1f} KB",
        f"{late['wchar'] / 1024:,.1f} KB",
        f"{late['log'] / 1024:,.1f} KB",
        "met" if late["wchar"] <= GOAL_LATE_TURN else "NOT met",
        f"{ratio:.2f}x",
        f"{last['wchar'] / 1024:,.1f} KB ({later:.2f}x)",
        f"{early['write_bytes'] / 1024:,.0f} / {late['write_bytes'] / 1024:,.0f} KB ({disk:.2f}x)",
    ]


def _verdict(rows: list[dict[str, Any]]) -> str:
    """Which rows meet both goals at the largest size measured, and the best of the others."""

    def meets(row: dict[str, Any]) -> bool:
        size = row["sizes"][0]  # the goal is stated at 100 turns
        fits = size["db_bytes"] <= GOAL_TEXT_FACTOR * size["text_bytes"] + GOAL_SLACK
        return fits and row["late"]["wchar"] <= GOAL_LATE_TURN

    plain = [r for r in rows if r["trigger"] == NO_COMPACTION]
    acdc = next(r for r in plain if r["page"] == ACDC_PAGE)
    others = [r for r in plain if r is not acdc]
    best = min(others, key=lambda r: (not meets(r), r["sizes"][0]["db_bytes"]), default=None)
    said = f"acdc's layout {'meets' if meets(acdc) else 'does NOT meet'} both storage goals"
    if best is not None:
        said += (
            f"; the best simple alternative measured, {best['label']}, "
            f"{'meets' if meets(best) else 'does not meet'} them"
        )
    return said + "."


def storage_markdown(rows: list[dict[str, Any]], spec: StorageSpec) -> str:
    size_rows = [_size_row(row, size) for row in rows for size in row["sizes"]]
    write_rows = [_write_row(row) for row in rows]
    size_header = [
        "session",
        "turns",
        "database (WAL folded in)",
        "per message",
        "message text",
        "(DB − 200 KB) / text",
        f"goal ≤ {GOAL_TEXT_FACTOR}x text + 200 KB",
    ]
    a, b, c = (f"{first}–{last}" for first, last in (spec.early, spec.late, spec.last))
    write_header = [
        "session",
        f"written per turn, turns {a}",
        f"turns {b}",
        f"of which into the log, turns {b}",
        f"goal ≤ {GOAL_LATE_TURN // 1024} KB",
        "late / early",
        f"turns {c} (against {b})",
        f"block-layer writes per turn, turns {a} / {b}",
    ]
    compactions = ", ".join(f"{r['label']}: {r['compactions']}" for r in rows)
    largest = "; ".join(
        f"{r['label']}: " + ", ".join(f"{n} {b / 1024:,.0f} KB" for n, b in last)
        for r in rows
        if (last := r["sizes"][-1]["largest_tables"])
    )
    note = (
        f"{_verdict(rows)} One session, one {rows[0]['file_bytes'] / 1024:.0f} KB file "
        f"selected, a checkpoint every 10 turns, {spec.user_words}-word questions and "
        f"{spec.answer_chars}-character replies (fake model). Written = `wchar` of "
        f"/proc/self/io: bytes the process passed to write() (SQLite's WAL, then one "
        f"checkpoint at the window's end folding it into the database). Compactions "
        f"(summaries asked for): {compactions}. Largest tables and indexes at the end "
        f"(SQLite's dbstat): {largest}."
    )
    return "\n\n".join(
        [
            markdown_table(size_header, size_rows, "lrrrrrl"),
            markdown_table(write_header, write_rows, "lrrrlrrr"),
            note,
        ]
    )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.turn.storage")
    parser.add_argument("--folder", type=Path, required=True)
    parser.add_argument("--trigger", type=int, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--page", type=int, default=ACDC_PAGE, help="SQLite page size")
    parser.add_argument("--spec", required=True, help="StorageSpec fields as JSON")
    args = parser.parse_args(argv)
    raw = json.loads(args.spec)
    spec = StorageSpec(**{k: tuple(v) if isinstance(v, list) else v for k, v in raw.items()})
    result = child_main(args.folder, args.trigger, args.page, spec)
    args.out.write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
