"""`acdc bench turn`'s plumbing: its tables and its in-process turns (never timings)."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from acdc.bench import main
from bench.turn.kill import Trial, kill_markdown
from bench.turn.load import LoadResult, Setup, load_markdown
from bench.turn.storage import ACDC_PAGE, NO_COMPACTION, QUICK, storage_markdown


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


def _storage_row(label: str, page: int, db_bytes: int, late_wchar: float) -> dict:
    size = {"turns": 6, "messages": 12, "db_bytes": db_bytes, "text_bytes": 10_000}
    return {
        "label": label,
        "trigger": NO_COMPACTION,
        "page": page,
        "file_bytes": 18_000,
        "sizes": [{**size, "largest_tables": [["history_session", 4096]]}],
        "early": {"wchar": 40_000.0, "write_bytes": 40_000.0, "log": 30_000.0},
        "late": {"wchar": late_wchar, "write_bytes": 50_000.0, "log": 40_000.0},
        "last": {"wchar": late_wchar, "write_bytes": 50_000.0, "log": 40_000.0},
        "compactions": 0,
    }


def test_the_storage_tables_hold_the_goals():
    """4x the text + 200 KB for the database, 64 KB for a late turn, each row judged, and
    the verdict names the best simple alternative."""
    rows = [
        _storage_row("acdc (512-byte pages)", ACDC_PAGE, 230_000, 50_000.0),
        _storage_row("1 KB pages", 1024, 250_000, 70_000.0),
    ]
    text = storage_markdown(rows, QUICK)
    assert "| acdc (512-byte pages) | 6 | 225 KB | 19,167 B | 10 KB | 3.0x | 234 KB: met |" in text
    assert "| 1 KB pages | 6 | 244 KB | 20,833 B | 10 KB | 5.0x | 234 KB: NOT met |" in text
    assert "| 1 KB pages | 39.1 KB | 68.4 KB | 39.1 KB | NOT met | 1.75x |" in text
    assert "acdc's layout meets both storage goals" in text
    assert "the best simple alternative measured, 1 KB pages, does not meet them" in text
    assert "history_session 4 KB" in text


@pytest.mark.django_db(transaction=True)
def test_bench_turn_quick_cpu_runs_real_turns_and_counts_their_sql(tmp_path, capsys):
    assert main(["turn", "--quick", "--part", "cpu", "--out", str(tmp_path)]) == 0
    table = (tmp_path / "turn.md").read_text()
    assert table in capsys.readouterr().out
    assert "### (a) Server CPU and SQL per turn" in table and "load average" in table
    rows = json.loads((tmp_path / "turn.json").read_text())["cpu"]
    assert [(r["messages"], r["files"]) for r in rows] == [(4, 0), (10, 0), (4, 3), (10, 3)]
    assert all(min(r["statements"]) > 0 and min(r["writes"]) > 0 for r in rows)
