"""`acdc bench turn --part cpu`: what one plain turn costs the server as a session grows.

For 0, 10 and 50 selected files (code-shaped, ~3 KB each, in a git repository) one session
is grown by real turns (`bench.turn.pipeline.full_turn`: `run_turn` with the fake
model, then the after-turn tasks) to 10, 100 and 400 stored messages; at each size a few
more turns are measured: CPU seconds of this process (`time.process_time`, all threads),
wall time, and SQL statements (all threads). Compaction is kept out of the way (trigger
raised far above the history) so every measured turn is a plain one; (b) measures a session
that compacts. The first turn of the process (litellm's import) is a warm-up, not measured.
The turns themselves come from `bench.turn.pipeline`, imported once Django is set up.
"""

from __future__ import annotations

import asyncio
import random
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.report import markdown_table
from bench.sessions import prose

NO_COMPACTION = 10_000_000  # tokens: far above any history here
WRITES = ("INSERT", "UPDATE", "DELETE")


@dataclass(frozen=True)
class CostSpec:
    sizes: tuple[int, ...] = (10, 100, 400)  # messages already in the session
    files: tuple[int, ...] = (0, 10, 50)  # selected files
    measured: int = 5  # turns measured at each size
    file_functions: int = 8  # ~450 bytes each: ~3.3 KB files
    user_words: int = 25
    answer_words: int = 150


QUICK = CostSpec(sizes=(4, 10), files=(0, 3), measured=2)


def measure_costs(repo: Path, spec: CostSpec) -> list[dict[str, Any]]:
    """On Django already set up on `repo` (`bench.django_env.setup_django`)."""
    # Lazy: the pipeline imports chat's models, which need Django set up first.
    from django.test import override_settings

    from bench.turn import pipeline as turn_pipeline

    with override_settings(ACDC_REPO=repo, ACDC_COMPACTION_TRIGGER_TOKENS=NO_COMPACTION):
        return asyncio.run(_measure(turn_pipeline, repo, spec))


async def _measure(pipeline, repo: Path, spec: CostSpec) -> list[dict[str, Any]]:
    script = pipeline.install_script()
    counter = pipeline.StatementCounter()
    counter.install()
    rng = random.Random(1)

    def texts() -> tuple[str, str]:
        return prose(rng, spec.user_words), prose(rng, spec.answer_words)

    await pipeline.full_turn(await pipeline.new_session(repo, []), *texts(), script)  # warm-up
    paths = sorted(p.relative_to(repo).as_posix() for p in (repo / "src").glob("*.py"))
    rows = []
    for files in spec.files:
        session_id = await pipeline.new_session(repo, paths[:files])
        for size in spec.sizes:
            while await pipeline.message_count(session_id) < size:
                await pipeline.full_turn(session_id, *texts(), script)
            costs = [
                await pipeline.measured_turn(session_id, *texts(), script, counter)
                for _ in range(spec.measured)
            ]
            rows.append(_row(files, size, costs))
    return rows


def _row(files: int, size: int, costs: list) -> dict[str, Any]:
    writes = [sum(c.by_verb.get(verb, 0) for verb in WRITES) for c in costs]
    return {
        "files": files,
        "messages": size,
        "cpu_ms": [round(c.cpu_s * 1000, 1) for c in costs],
        "wall_ms": [round(c.wall_s * 1000, 1) for c in costs],
        "statements": [c.statements for c in costs],
        "writes": writes,
        "by_verb": [c.by_verb for c in costs],
    }


def cost_markdown(rows: list[dict[str, Any]], spec: CostSpec) -> str:
    table = [
        [
            f"{row['messages']:,}",
            str(row["files"]),
            f"{statistics.median(row['cpu_ms']):.0f} ms",
            f"{statistics.median(row['wall_ms']):.0f} ms",
            f"{statistics.median(row['statements']):.0f}",
            f"{max(row['statements'])}",
            f"{statistics.median(row['writes']):.0f}",
        ]
        for row in sorted(rows, key=lambda r: (r["messages"], r["files"]))
    ]
    header = [
        "messages in the session",
        "selected files",
        "CPU per turn",
        "wall per turn",
        "SQL statements",
        "SQL, most in a turn",
        "of which writes",
    ]
    note = (
        f"Medians of {spec.measured} turns at each size; a turn is `run_turn` with the fake "
        f"model (a {spec.answer_words}-word answer in 12-character chunks, events dropped) "
        "plus the after-turn tasks (a checkpoint every 10 turns). CPU is this process's, all "
        "threads; SQL counts every statement Django ran, in every thread (transaction "
        "control excluded). SQLite, compaction off."
    )
    return markdown_table(header, table, "rrrrrrr") + "\n\n" + note
