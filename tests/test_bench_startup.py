"""`acdc bench startup`'s table: the three starts side by side, and which goals are met."""

from __future__ import annotations

from bench.startup.startup_bench import startup_markdown

INFO = {"cpu": "a cpu", "nproc": 2, "python": "3.11", "platform": "linux", "date": "today"}


def _start(after_serving: float, rss: float, line: str, errors: int = 0) -> dict:
    return {
        "serving_s": 1.5,
        "after_serving_s": after_serving,
        "ready_s": 1.5 + after_serving,
        "cpu_s": 1.2,
        "VmRSS": rss,
        "VmHWM": rss + 5,
        "ready_line": line,
        "errors": errors,
        "page_rss_mb": rss + 10,
    }


def test_the_startup_table_says_which_goals_are_met_on_a_restart():
    data = {
        "cold": _start(4.2, 150, "3662 files, 972 parsed, in 4.2 s"),
        "restart": _start(0.4, 230, "3662 files, 0 parsed, in 0.4 s"),
        "restart_no_cache": _start(4.0, 150, "3662 files, 972 parsed, in 4.0 s", errors=2),
        "restart_no_session": _start(0.4, 140, "3662 files, 0 parsed, in 0.4 s"),
        "litellm_import": {"cpu_s": 2.6, "rss_mb": 161.0},
        "cache_mb": 2.7,
        "repeats": 3,
    }

    text = startup_markdown({**data}, {**INFO, "load": ["1", "1", "1"]}, quick=False)

    assert "map ready ≤ 0.5 s after serving on a restart: met (0.40 s)" in text
    assert "RSS before the first turn ≤ 200 MB: missed (230 MB)" in text
    assert "| restart, nothing changed (symbols from disk), median of 3 | 1.50 | 0.40 |" in text
    assert "972 parsed, in 4.0 s (2 errors logged)" in text
    assert "2.6 s CPU, 161 MB" in text
    assert (
        "Restart RSS ≤ first start's: missed: at ready with the session restored 230, without one"
        " 140, against 150 MB" in text
    )
    assert "with the page open 240 against 160 MB" in text
    assert "restart, symbols from disk, no session to restore, median of 3 | 1.50 | 0.40 |" in text
