"""The benchmark plumbing: tables, ratios and result files (never timings)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from acdc.bench import main
from contextcore.prompt.cachesim import CacheSimulator, RequestCost, SimulationReport
from contextcore.tokens import TokenCounter
from tests.bench.cache_bench import STRATEGIES, cache_markdown, compare
from tests.bench.compaction_bench import LongReport, long_markdown, prompt_series_svg
from tests.bench.repo_bench import RepoSpec, build_repo, repo_markdown
from tests.bench.repo_timings import measure
from tests.bench.report import percentile
from tests.bench.sessions import file_edit_session
from tests.bench.turn_replay import replay_through_turns

ROOT = Path(__file__).resolve().parent.parent


def _report(*costs: tuple[int, int, int, float]) -> SimulationReport:
    return SimulationReport([RequestCost(*cost) for cost in costs])


def test_compare_gives_each_strategy_its_ratios_against_none_and_last():
    reports = {
        "none": _report((1000, 0, 0, 1000.0), (1000, 0, 0, 1000.0)),
        "last": _report((1000, 0, 1000, 1250.0), (1000, 900, 100, 315.0)),
        "seed": _report((1000, 0, 0, 1000.0), (1000, 500, 0, 550.0)),
        "acdc": _report((1000, 0, 1000, 1250.0), (1000, 1000, 0, 100.0)),
    }
    rows = {row.strategy: row for row in compare(reports)}
    assert [row.strategy for row in compare(reports)] == list(STRATEGIES)
    assert rows["acdc"].cost == 1350.0
    assert rows["acdc"].vs_none == pytest.approx(1350 / 2000)
    assert rows["acdc"].vs_last == pytest.approx(1350 / 1565)
    assert rows["last"].vs_last == 1.0
    assert rows["seed"].cache_read_share == pytest.approx(500 / 2000)


def test_a_repeated_marked_prefix_costs_one_write_then_one_read():
    counter = TokenCounter("cl100k_base")
    text = "cache prefix token " * 600
    marked = [
        {
            "role": "user",
            "content": [{"type": "text", "text": text, "cache_control": {"type": "ephemeral"}}],
        }
    ]
    plain = [{"role": "user", "content": text}]
    reports = {}
    for name, messages in (("none", plain), ("last", marked), ("seed", plain), ("acdc", marked)):
        simulator = CacheSimulator(counter)
        simulator.request(messages, now=0.0)
        simulator.request(messages, now=10.0)
        reports[name] = simulator.report
    acdc = compare(reports)[-1]
    assert acdc.vs_none == pytest.approx((1.25 + 0.1) / 2)
    assert acdc.cache_read_share == pytest.approx(0.5)


def test_the_table_says_whether_the_goal_is_met():
    good = {s: _report((1000, 0, 0, 1000.0)) for s in ("none", "seed")}
    good |= {"last": _report((1000, 0, 0, 500.0)), "acdc": _report((1000, 900, 0, 150.0))}
    text = cache_markdown("file edits (1 turns)", compare(good), goal=True)
    assert "| (d) acdc | 1,000 | 90% | 0 | 150 | 0.15x | 0.30x |" in text
    assert "Goal (d) <= 0.2x (a) and <= 0.5x (b): met" in text
    good["acdc"] = _report((1000, 0, 0, 300.0))
    assert ": NOT met (0.30x, 0.60x)" in cache_markdown("t", compare(good), goal=True)


def test_percentile_is_the_nearest_rank():
    samples = [float(n) for n in range(1, 21)]
    assert percentile(samples, 50) == 10.5
    assert percentile(samples, 95) == 19.0
    assert percentile([3.0], 95) == 3.0


def test_bench_assembly_quick_writes_a_table_and_json(tmp_path, capsys):
    assert main(["assembly", "--quick", "--out", str(tmp_path)]) == 0
    table = (tmp_path / "assembly.md").read_text()
    assert table in capsys.readouterr().out
    for label in ("cold, first in the process", "cold (fresh", "restored (", "warm (same"):
        assert f"| {label}" in table
    assert "Workload: 200 files, 5 selected" in table and "Machine: " in table
    data = json.loads((tmp_path / "assembly.json").read_text())
    assert len(data["warm_ms"]) == 5 and data["memory"]["traced_peak_mb"] > 0
    assert data["machine"]["nproc"] >= 1


def test_the_assembly_benchmark_loads_neither_django_nor_litellm():
    script = (
        "import importlib, sys\n"
        "from tests.bench.runner import BENCHMARKS\n"
        "importlib.import_module(BENCHMARKS['assembly'])\n"
        "print(sorted({'django', 'litellm'} & sys.modules.keys()))\n"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert loaded.stdout.strip() == "[]"


def test_bench_cache_direct_writes_both_sessions(tmp_path, capsys):
    assert main(["cache", "--direct", "--turns", "2", "--out", str(tmp_path)]) == 0
    table = (tmp_path / "cache.md").read_text()
    assert "FALLBACK" in table
    assert "### file edits (2 turns)" in table and "### selection changes (2 turns)" in table
    data = json.loads((tmp_path / "cache.json").read_text())
    strategies = data["sessions"][0]["strategies"]
    assert [s["strategy"] for s in strategies] == list(STRATEGIES)
    assert strategies[0]["vs_none"] == 1.0 and strategies[1]["vs_last"] == 1.0


@pytest.mark.django_db(transaction=True)
def test_the_pipeline_replay_prices_the_requests_run_turn_sent(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    report = replay_through_turns(file_edit_session(turns=2), "acdc", tmp_path)
    first, second = report.requests
    assert first.cache_read_tokens == 0 and first.cache_write_tokens > 4 * 4000
    assert second.cache_read_tokens >= first.cache_write_tokens
    assert (tmp_path / "src" / "module_0.py").exists()


def test_the_long_session_table_and_plot_show_compactions_and_the_goal():
    none = LongReport("none", [100, 200, 50], [0, 0, 0], chat_cost=350.0, compaction_cost=50)
    acdc = LongReport(
        "acdc", [100, 200, 50], [0, 180, 0], chat_cost=80.0, compaction_cost=50, compactions=[1]
    )
    table = long_markdown({"none": none, "acdc": acdc})
    assert "| acdc | 130 | 50 | 51.4% | 1 | 0.33x |" in table
    assert "NOT met" in table
    svg = prompt_series_svg({"none": none, "acdc": acdc})
    assert svg.startswith("<svg") and svg.count("<polyline") == 2
    assert 'stroke-dasharray="3 3"' in svg  # the compaction after turn 2


@pytest.mark.django_db(transaction=True)
def test_the_repository_benchmark_measures_listing_and_counting(tmp_path):
    size = build_repo(tmp_path, RepoSpec(files=60, folders=3))
    result = measure(tmp_path, size)
    assert result["files"] == 60 and result["cold_mb_s"] > 0 and result["cold_ratio"] > 0
    table = repo_markdown(result)
    assert "60 files" in table and "| warm, same process (stat only) |" in table
