"""`acdc bench turn`'s plumbing: its tables and its in-process turns (never timings)."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from acdc.bench import main
from tests.bench.turn_kill import Trial, kill_markdown
from tests.bench.turn_load import LoadResult, Setup, load_markdown
from tests.bench.turn_storage import QUICK, storage_markdown


def test_the_kill_table_counts_only_words_lost_before_the_last_second():
    trials = [
        Trial(2.0, shown=50, stored=45, status="streaming", lost_before_grace=0, lost_in_grace=5),
        Trial(3.0, shown=80, stored=60, status="streaming", lost_before_grace=3, lost_in_grace=9),
    ]
    table = kill_markdown(trials)
    assert "| 2 | 3.00 s | 80 | 60 | streaming | 9 | **3** |" in table
    assert "not stored: 3 (goal 0: NOT met (3 words in all))" in table


def test_the_load_table_compares_two_workers_with_one():
    one = LoadResult(Setup("SQLite, 1 worker"), sessions=2, turns=2, wall_s=2.0)
    one.latencies = [0.1, 0.2, 0.3, 0.4]
    two = LoadResult(Setup("PostgreSQL + Redis, 2 workers", 2, "postgres://x/y"), 2, 2, 1.0)
    two.latencies = [0.1, 0.2, 0.3]
    two.errors = Counter(timeout=1)
    two.services = {"postgres sessions": 30}
    table = load_markdown([one, two])
    assert "| SQLite, 1 worker | 4 / 4 | 2.0 | 0.25 s | 0.40 s | 0 |" in table
    assert "| 3 / 4 | 3.0 |" in table and "1 (1 timeout)" in table
    assert "| 0.0 frames, 0.0 KB, 10.0 postgres sessions |" in table
    assert "1.50x (goal ≥ 1.5x: met)" in table and "Errors in all setups: 1" in table


def test_the_storage_tables_hold_the_goals():
    size = {"turns": 6, "messages": 12, "db_bytes": 250_000, "text_bytes": 10_000}
    row = {
        "label": "no compaction",
        "file_bytes": 18_000,
        "sizes": [{**size, "largest_tables": [["history_session", 4096]]}],
        "early": {"wchar": 1000.0, "write_bytes": 1000.0},
        "late": {"wchar": 2000.0, "write_bytes": 1500.0},
        "compactions": 0,
    }
    text = storage_markdown([row], QUICK)
    assert "| no compaction | 6 | 12 | 244 KB | 20,833 B | 10 KB | 5.0x | met |" in text
    assert "| 2.00x | NOT met |" in text and "history_session 4 KB" in text


@pytest.mark.django_db(transaction=True)
def test_bench_turn_quick_cpu_runs_real_turns_and_counts_their_sql(tmp_path, capsys):
    assert main(["turn", "--quick", "--part", "cpu", "--out", str(tmp_path)]) == 0
    table = (tmp_path / "turn.md").read_text()
    assert table in capsys.readouterr().out
    assert "### (a) Server CPU and SQL per turn" in table and "load average" in table
    rows = json.loads((tmp_path / "turn.json").read_text())["cpu"]
    assert [(r["messages"], r["files"]) for r in rows] == [(4, 0), (10, 0), (4, 3), (10, 3)]
    assert all(min(r["statements"]) > 0 and min(r["writes"]) > 0 for r in rows)
