"""`acdc bench turn --part scale`: both shapes of turn, each setup named (never timings)."""

from __future__ import annotations

import json

from acdc.bench import main
from bench.turn.scale import scale_markdown, shapes


def _row(shape: str, round_: int, setup: str, workers: int, turns_per_s: float) -> dict:
    paced = shape == "paced"
    return {
        "round": round_,
        "shape": shape,
        "shape_title": "paced (40-character events 0.12 s apart)" if paced else "CPU-bound",
        "reply_chars": 1500 if paced else 9000,
        "provider_s": 4.56 if paced else 0.0,
        "load": "0.50 / 0.40 / 0.30 → 0.90 / 0.50 / 0.30",
        "setup": setup,
        "workers": workers,
        "sessions": 16,
        "turns_per_session": 8,
        "completed": 128,
        "turns_per_s": turns_per_s,
        "p50_s": 1.0,
        "p95_s": 2.0,
        "errors": {},
        "cpu_s": {"worker 1": 5.0, "worker 2": 1.5, "postgres": 9.0},
    }


def test_the_shapes_are_one_provider_bound_and_one_cpu_bound():
    paced, cpu = shapes()
    assert (paced.key, cpu.key) == ("paced", "cpu")
    assert paced.provider_seconds > 1.0 and cpu.provider_seconds == 0.0
    assert len(cpu.text) > 4 * len(paced.text)


def test_the_table_says_which_shape_each_ratio_is_against_one_worker_and_sqlite():
    rows = []
    for shape, fast in (("paced", 3.3), ("cpu", 18.0)):
        rows += [
            _row(shape, 1, "SQLite, 1 worker", 1, 10.0 if shape == "cpu" else 3.0),
            _row(shape, 1, "PostgreSQL + Redis, 1 worker", 1, 10.0 if shape == "cpu" else 3.0),
            _row(shape, 1, "PostgreSQL + Redis, 2 workers", 2, fast),
        ]
    text = scale_markdown(rows, 16, 8)
    assert "**paced (40-character events 0.12 s apart)**" in text and "**CPU-bound**" in text
    assert "16 sessions cannot pass 3.5 turns/s" in text
    assert "the servers' CPU is the limit" in text
    assert "Two workers over one, paced: 1.10x." in text
    assert "Two workers over one, cpu: 1.80x." in text
    assert "the best simple alternative" in text
    assert "| 1 | PostgreSQL + Redis, 2 workers | 0.50 / 0.40 / 0.30 → 0.90" in text
    assert "| 1.80x | 1.80x | 6.5 |" in text  # ÷ SQLite, ÷ 1 worker, the workers' CPU


def test_a_quick_run_measures_both_shapes_on_a_real_server(tmp_path):
    argv = ["turn", "--quick", "--part", "scale", "--setup", "sqlite", "--out", str(tmp_path)]
    assert main([*argv, "--scale-sessions", "1", "--scale-turns", "1"]) == 0
    rows = json.loads((tmp_path / "turn.json").read_text())["scale"]
    assert [(r["shape"], r["setup"], r["completed"]) for r in rows] == [
        ("paced", "SQLite, 1 worker", 1),
        ("cpu", "SQLite, 1 worker", 1),
    ]
    report = (tmp_path / "turn.md").read_text()
    assert "**paced (" in report and "**CPU-bound (" in report and "load average" in report
