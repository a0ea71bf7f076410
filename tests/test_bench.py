"""The benchmark plumbing: tables, ratios and result files (never timings)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from acdc.bench import main
from bench.cache import replay
from bench.cache.cache_bench import sessions_for
from bench.cache.compaction import LongReport, long_report, prompt_series_svg
from bench.cache.compare import (
    LONG_SESSION,
    PAUSE_SESSION,
    STRATEGIES,
    compare,
    goal_misses,
    shape_markdown,
)
from bench.cache.explain import refresh_split, side_split
from bench.cache.pricing import Recording, Sent, acting_as, price, rule_sets
from bench.cache.replay import replay_through_turns
from bench.repo.repo_bench import RepoSpec, build_repo, repo_markdown
from bench.repo.timings import measure
from bench.report import percentile
from bench.sessions import file_edit_session
from chat.llm.facts import model_facts
from chat.llm.sdk import model_info
from contextcore.prompt.cacherules import ANTHROPIC, NO_CACHE, OPENAI
from contextcore.prompt.cachesim import CacheSimulator, RequestCost, SimulationReport
from contextcore.tokens import TokenCounter
from history.models import Session

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


def test_the_table_says_per_rule_set_which_goal_is_missed():
    reports = {s: _report((1000, 0, 0, 1000.0)) for s in ("none", "seed")}
    reports |= {"last": _report((1000, 0, 0, 500.0)), "acdc": _report((1000, 900, 0, 150.0))}
    rows = compare(reports)
    assert goal_misses(rows, ANTHROPIC, "file edits") == []
    text = shape_markdown("file edits (1 turns)", [("Anthropic", rows, [])])
    assert "| Anthropic | 1,000 | 0.50x | 1.00x | 0.15x | 0.30x | met |" in text
    reports["acdc"] = _report((1000, 0, 0, 450.0))
    rows = compare(reports)
    assert goal_misses(rows, ANTHROPIC, "x") == [
        "0.90x best simple (goal <= 0.85)",
        "0.45x no caching (goal <= 0.25)",
    ]
    # Automatic rules: at most the best simple layout; explicit ones: the long session
    # at most 0.6x of (b).
    reports["acdc"] = _report((1000, 0, 0, 400.0))
    assert goal_misses(compare(reports), OPENAI, "x") == []
    reports["acdc"] = _report((1000, 0, 0, 520.0))
    assert goal_misses(compare(reports), OPENAI, "x") == ["1.04x best simple (goal <= 1.00)"]
    reports["acdc"] = _report((1000, 900, 0, 320.0))
    assert goal_misses(compare(reports), ANTHROPIC, LONG_SESSION) == [
        "0.64x (b) (goal <= 0.6)",
        "0.32x no caching (goal <= 0.25)",
    ]
    # Reads at 0.5x: the 0.25x goal does not apply; the pause session's goal does.
    reports["acdc"] = _report((1000, 0, 0, 1100.0))
    assert goal_misses(compare(reports), OPENAI, PAUSE_SESSION)[1:] == [
        "1.10x no caching (goal <= 1.0)"
    ]


def test_a_recording_is_priced_in_order_with_side_requests_split_out():
    counter = TokenCounter("cl100k_base")
    text = [{"role": "user", "content": "cache prefix token " * 600}]
    recording = Recording("s", "last", [Sent(text, 0.0), Sent(text, 1.0, side=True)])
    recording.sent.append(Sent(text, 2.0))
    first, side, third = price(recording, OPENAI, counter).requests
    assert first.cache_read_tokens == 0
    assert side.cache_read_tokens == third.cache_read_tokens > 1024
    series = long_report("last", recording, price(recording, OPENAI, counter))
    assert series.compaction_cost == side.cost and len(series.prompt_tokens) == 2


def test_the_split_says_what_chat_and_side_requests_cost():
    counter = TokenCounter("cl100k_base")
    text = [{"role": "user", "content": "cache prefix token " * 600}]
    plain = Recording("s", "last", [Sent(text, 0.0), Sent(text, 1.0, side=True)])
    acdc = Recording("s", "acdc", [Sent(text, 0.0), Sent(text, 1.0)])
    reports = {
        "none": price(plain, NO_CACHE, counter),
        "last": price(plain, OPENAI, counter),
        "acdc": price(acdc, OPENAI, counter),
    }

    split = side_split({"last": plain, "acdc": acdc}, reports)

    first, side = reports["last"].requests
    base = reports["none"].cost
    assert split["last_chat"] == first.cost / base and split["last_side"] == side.cost / base
    assert split["acdc_side"] == 0.0
    assert split["last_chat_of_total"] == first.cost / (first.cost + side.cost)
    assert split["last_uncached_chat"] == first.prompt_tokens


def test_the_refresh_split_counts_refreshes_their_cost_and_the_late_returns():
    counter = TokenCounter("cl100k_base")
    block = {
        "type": "text",
        "text": "cache prefix token " * 600,
        "cache_control": {"type": "ephemeral"},
    }
    text = [{"role": "user", "content": [block]}]
    sent = [Sent(text, 0.0), Sent(text, 270.0, refresh=True), Sent(text, 400.0)]
    acdc = Recording("s", "acdc", [*sent, Sent(text, 460.0)])
    reports = {"none": price(acdc, NO_CACHE, counter), "acdc": price(acdc, ANTHROPIC, counter)}

    split = refresh_split(acdc, reports)

    refresh = reports["acdc"].requests[1]
    assert refresh.cache_read_tokens > 1024  # it read what the first request wrote
    assert split["count"] == 1 and split["cost"] == refresh.cost / reports["none"].cost
    assert split["returns"] == 1  # 400 s after the first chat request; 60 s after that


def test_every_session_shape_is_benchmarked():
    args = type("Args", (), {"quick": False, "direct": False, "turns": 40})()
    names = [s.name for s in sessions_for(args)]
    assert names == [
        "file edits",
        "selection changes",
        PAUSE_SESSION,
        "selection switching",
        "long session with compaction",
    ]
    pauses = sessions_for(args)[2]
    gaps = [t.seconds_before for t in pauses.turns]
    assert any(g < 60 for g in gaps) and any(300 <= g <= 1200 for g in gaps)
    assert any(g > 3600 for g in gaps)


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
        "from bench.runner import BENCHMARKS\n"
        "importlib.import_module(BENCHMARKS['assembly'])\n"
        "print(sorted({'django', 'litellm'} & sys.modules.keys()))\n"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert loaded.stdout.strip() == "[]"


def test_bench_cache_direct_writes_every_shape_under_every_rule_set(tmp_path, capsys):
    assert main(["cache", "--direct", "--turns", "2", "--out", str(tmp_path)]) == 0
    table = (tmp_path / "cache.md").read_text()
    assert "FALLBACK" in table
    assert "### file edits (2 turns)" in table and "### selection switching (2 turns)" in table
    lifetimes = table.split("### cache lifetimes under Anthropic's rules (direct replays)")[1]
    assert "| long pauses |" in lifetimes and "1 h only" in lifetimes
    assert "as chosen, with refreshes" in lifetimes
    data = json.loads((tmp_path / "cache.json").read_text())
    rule_sets = data["sessions"][0]["rule_sets"]
    assert [r["rules"].split(" ")[0] for r in rule_sets] == [
        "Anthropic",
        "OpenAI",
        "DeepSeek",
        "Gemini",
        "Grok",
    ]
    strategies = rule_sets[0]["strategies"]
    assert [s["strategy"] for s in strategies] == list(STRATEGIES)
    assert strategies[0]["vs_none"] == 1.0 and strategies[1]["vs_last"] == 1.0
    # No layout of the same requests can cost less than their lowest possible cost.
    assert "The least any cache layout could charge" in table
    for rule_set in rule_sets:
        shares = rule_set["vs_last_real_and_lowest"]
        assert shares["last"] == 1.0
        assert shares["last_lowest"] <= shares["last"] and shares["acdc_lowest"] <= shares["acdc"]


@pytest.mark.django_db(transaction=True)
def test_the_pipeline_replay_records_the_requests_run_turn_sent(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    recording = replay_through_turns(file_edit_session(turns=2), "acdc", tmp_path)
    first, second = price(recording, ANTHROPIC, TokenCounter("cl100k_base")).requests
    assert first.cache_read_tokens == 0 and first.cache_write_tokens > 4 * 4000
    assert second.cache_read_tokens >= first.cache_write_tokens
    assert (tmp_path / "src" / "module_0.py").exists()


@pytest.mark.django_db(transaction=True)
def test_each_replay_decides_with_the_facts_it_acts_as_even_after_another(tmp_path):
    """The chat caches a model's facts by name: a replay acting as another provider's model
    after a plain one must still see the provider it acts as (the HUD names it)."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    fake = model_facts(replay.MODEL, model_info)[0]
    target = rule_sets()[1].facts  # OpenAI's
    replay_through_turns(file_edit_session(turns=1), "last", tmp_path)
    replay_through_turns(file_edit_session(turns=1), "acdc", tmp_path, acting_as(fake, target))
    huds = [s.context_state["hud"] for s in Session.objects.order_by("created_at")]
    assert [hud["model"] for hud in huds] == [replay.MODEL, target.name]


def test_a_replay_acting_as_a_model_budgets_with_that_models_window():
    """`acdc serve` takes a model's window from litellm's map; the in-process replay acting
    as that model must shed and rebuild against the same window, or its layouts differ from
    the ones sent over the wire (the stale-copy budget is a share of the input budget)."""
    fake = model_facts(replay.MODEL, model_info)[0]
    for rule_set in rule_sets():
        acting = acting_as(fake, rule_set.facts)
        assert acting.input_budget == rule_set.facts.input_budget, rule_set.label
        assert acting.max_output_tokens == rule_set.facts.max_output_tokens


def test_the_long_session_plot_shows_compactions():
    none = LongReport("none", [100, 200, 50], [0, 0, 0], chat_cost=350.0, compaction_cost=50)
    acdc = LongReport(
        "acdc", [100, 200, 50], [0, 180, 0], chat_cost=80.0, compaction_cost=50, compactions=[1]
    )
    svg = prompt_series_svg({"none": none, "acdc": acdc})
    assert svg.startswith("<svg") and svg.count("<polyline") == 2
    assert 'stroke-dasharray="3 3"' in svg  # the compaction after turn 2


@pytest.mark.django_db(transaction=True)
def test_the_repository_benchmark_measures_listing_and_counting(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    size = build_repo(repo, RepoSpec(files=60, folders=3))
    result = measure(repo, size, tmp_path / "data")
    assert result["files"] == 60 and result["cold_mb_s"] > 0 and result["cold_ratio"] > 0
    assert result["new_process_page_cache"] in ("evicted", "warm")
    assert result["new_process_cold_cache_s"] > 0 and result["new_process_warm_cache_s"] > 0
    table = repo_markdown(result)
    assert "60 files" in table and "| warm, same process (stat only) |" in table
    assert "| warm, new process, page cache " + result["new_process_page_cache"] in table
    gc = subprocess.run(["git", "-C", str(repo), "config", "gc.auto"], capture_output=True)
    assert gc.stdout.strip() == b"0"


def test_the_map_table_says_which_goals_are_met():
    from bench.repo.map_bench import map_markdown

    data = {
        "files": 4547, "source_files": 960, "definitions": 20000, "map_tokens": 5900,
        "symbols_cold_s": 2.0, "cold_s": 3.0, "warm_s": 0.2, "incremental_s": 0.08,
        "rss_peak_mb": 180.0, "rss_before_mb": 80.0, "cold_cpu": 1.5, "incremental_cpu": 0.04,
        "parsed_incremental": 1, "full_warm_s": 0.05, "full_incremental_s": 0.09,
        "parsed_full_incremental": 1,
    }  # fmt: skip
    info = {"cpu": "cpu", "nproc": 2, "python": "3.11", "platform": "p", "date": "d", "load": "1"}

    table = map_markdown(data, info, quick=False)

    assert "| cold map (symbols, graph, rank, fit) | 3.00 s | 1.50 s | ≤ 5 s: met |" in table
    heard = "| one file edited, its event heard (1 parsed) | 80 ms | 40 ms | ≤ 50 ms: missed |"
    assert heard in table
    assert "| one file edited, no watcher (1 parsed) | 90 ms | 0 ms |  |" in table
    assert "180 MB (before: 80 MB) |  | ≤ 300 MB: met" in table


def test_the_wire_harness_reads_the_session_header_the_server_stores():
    """The over-the-wire benchmark reads the server's session row for its refresh plan; the
    header is stored deflated (and as JSON text in older databases)."""
    from bench.cache.wire_drive import _header
    from history.models.fields import pack

    header = {"engine": {"stability": {"history_rewrites": 2}}}
    assert _header(pack(header)) == header
    assert _header(json.dumps(header)) == header
    assert _header(None) is None


@pytest.mark.django_db(transaction=True)
def test_bench_context_trail_quick_finds_every_artifact_in_the_trail(tmp_path, capsys):
    assert main(["context", "--part", "trail", "--quick", "--out", str(tmp_path)]) == 0
    [row] = json.loads((tmp_path / "context-trail.json").read_text())["rows"]
    assert row["compactions"] == 1 and row["case"] == "summarize"
    assert row["artifacts"] == 8 and row["trail"] == 1.0 and row["without_trail"] < 1.0
    assert "| 1 | 8 | 100% |" in capsys.readouterr().out
