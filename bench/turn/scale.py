"""`acdc bench turn --part scale`: one worker against two, in both shapes of turn, one run.

A turn is either provider-bound or CPU-bound, and a second Daphne worker helps only the
second. Both shapes run here, each on the same setups (SQLite with one worker, the best
simple alternative: no PostgreSQL, no Redis, no second process; PostgreSQL + Redis with
one worker and with two), through `bench.turn.load.run_load`:
- paced: the fake model streams a ~1,500-character reply in 40-character events 0.12 s
  apart (≈ 80 tokens/s, a provider's pace); a turn waits on the provider, not the CPU;
- CPU-bound: the fake answers a code-heavy ~8 KB reply at once (40-character events, no
  delay), so each turn is markdown, frames and saves as fast as the server can do them,
  and the context grows by 8 KB a turn.
Each setup row names the load average at its start and end. Figures, never assertions.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from bench.live_server import make_repo
from bench.report import markdown_table
from bench.stream.paced import CHUNK, DELAY
from bench.stream.stream_bench import code_heavy_answer
from bench.turn.load import LoadResult, Setup, run_load

PACED_CHARS = 1_500
CPU_KB = 8.0


@dataclass(frozen=True)
class Shape:
    key: str
    title: str
    text: str
    chunk_delay: float

    @property
    def provider_seconds(self) -> float:
        """How long the provider alone takes to send one reply."""
        return -(-len(self.text) // CHUNK) * self.chunk_delay


def shapes() -> tuple[Shape, ...]:
    paced = (code_heavy_answer(PACED_CHARS / 1024, seed=3))[:PACED_CHARS]
    return (
        Shape("paced", f"paced ({CHUNK}-character events {DELAY} s apart)", paced, DELAY),
        Shape("cpu", f"CPU-bound ({CPU_KB:g} KB at once)", code_heavy_answer(CPU_KB), 0.0),
    )


def run_scale(
    folder: Path,
    setups: list[Setup],
    sessions: int,
    turns: int,
    rounds: int = 1,
    only: tuple[str, ...] = (),
) -> list[dict[str, Any]]:
    """One row per round, shape and setup, in the order they ran: each round runs every
    shape (or those `only` names), its setups in rotated order, so a busy minute of the
    shared machine does not land on one setup only."""
    rows, chosen = [], [shape for shape in shapes() if not only or shape.key in only]
    for shape in chosen:
        _write_script(folder / f"{shape.key}-script.json", shape, 2 * sessions * turns + 20)
    for number in range(1, rounds + 1):
        turn = (number - 1) % len(setups)
        for shape in chosen:
            for setup in setups[turn:] + setups[:turn]:
                place = folder / f"round-{number}" / shape.key / _slug(setup)
                place.mkdir(parents=True)
                script = folder / f"{shape.key}-script.json"
                extra = (*setup.extra, ("ACDC_FAKE_SCRIPT", str(script)))
                load_start = _load()
                result = run_load(
                    place, make_repo(place / "repo"), replace(setup, extra=extra), sessions, turns
                )
                rows.append({"round": number, **_row(shape, result, load_start, _load())})
    return rows


def _write_script(path: Path, shape: Shape, steps: int) -> None:
    """Every request gets the shape's reply; each worker reads the file for itself."""
    step = {"text": shape.text, "chunk_size": CHUNK, "chunk_delay": shape.chunk_delay}
    path.write_text(json.dumps([step] * steps))


def _slug(setup: Setup) -> str:
    return f"{'pg' if setup.database_url else 'sqlite'}{setup.workers}"


def _load() -> str:
    return " / ".join(f"{x:.2f}" for x in os.getloadavg())


def _row(shape: Shape, result: LoadResult, load_start: str, load_end: str) -> dict[str, Any]:
    data = result.as_data()
    return {
        "shape": shape.key,
        "shape_title": shape.title,
        "reply_chars": len(shape.text),
        "provider_s": round(shape.provider_seconds, 2),
        "load": f"{load_start} → {load_end}",
        **data,
    }


def scale_markdown(rows: list[dict[str, Any]], sessions: int, turns: int) -> str:
    head = (
        f"{sessions} sessions × {turns} turns per setup, all sessions at once, one websocket "
        "each; the same fake model script for every setup of a shape. "
        "Ratios: ÷ 1 worker is two PostgreSQL + Redis workers over one (the worker count "
        "alone); ÷ SQLite is each setup over SQLite with one worker, the best simple "
        "alternative."
    )
    parts = [head]
    for shape in dict.fromkeys(row["shape"] for row in rows):
        mine = [row for row in rows if row["shape"] == shape]
        parts.append(_shape_table(mine))
    return "\n\n".join(parts)


def _shape_table(rows: list[dict[str, Any]]) -> str:
    first = rows[0]
    cells, ratios = [], []
    for number in dict.fromkeys(row["round"] for row in rows):
        mine = [row for row in rows if row["round"] == number]
        sqlite = next((r for r in mine if r["workers"] == 1 and "SQLite" in r["setup"]), None)
        one = next((r for r in mine if r["workers"] == 1 and "SQLite" not in r["setup"]), None)
        cells += [_cells(row, sqlite, one) for row in mine]
        two = next((r for r in mine if r["workers"] == 2), None)
        if two and one and one["turns_per_s"]:
            ratios.append(two["turns_per_s"] / one["turns_per_s"])
    header = ["round", "setup", "load average", "turns done", "turns/s", "p50", "p95"]
    header += ["errors", "÷ SQLite", "÷ 1 worker", "workers' CPU s"]
    table = markdown_table(header, cells, "rllrrrrrrrr")
    ceiling = first["sessions"] / first["provider_s"] if first["provider_s"] else 0.0
    note = (
        f"the provider alone takes {first['provider_s']:.1f} s a reply, so "
        f"{first['sessions']} sessions cannot pass {ceiling:.1f} turns/s"
        if ceiling
        else "the provider takes no time: the servers' CPU is the limit"
    )
    title = f"**{first['shape_title']}**, {first['reply_chars']:,}-character replies ({note}):"
    spread = ", ".join(f"{r:.2f}x" for r in ratios)
    verdict = f"Two workers over one, {first['shape']}: {spread or 'not measured'}."
    return f"{title}\n\n{table}\n\n{verdict}"


def _cells(row: dict[str, Any], sqlite: dict | None, one: dict | None) -> list[str]:
    errors = sum(row["errors"].values())
    cpu = sum(s for name, s in row["cpu_s"].items() if name.startswith("worker"))
    return [
        str(row["round"]),
        row["setup"],
        row["load"],
        f"{row['completed']:,} / {row['sessions'] * row['turns_per_session']:,}",
        f"{row['turns_per_s']:.2f}",
        f"{row['p50_s']:.2f} s",
        f"{row['p95_s']:.2f} s",
        f"{errors} ({', '.join(f'{n} {k}' for k, n in row['errors'].items())})" if errors else "0",
        _ratio(row, sqlite),
        _ratio(row, one) if row["workers"] > 1 else "",
        f"{cpu:.1f}",
    ]


def _ratio(row: dict[str, Any], base: dict | None) -> str:
    if base is None or not base["turns_per_s"]:
        return ""
    return f"{row['turns_per_s'] / base['turns_per_s']:.2f}x"
