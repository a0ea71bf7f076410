"""The assembly benchmark: how long one turn's context work takes, and how much memory.

A synthetic repository (default 5,000 files, 50 selected holding about 150k tokens, a file
tree of every path) and 400 history messages go into a `ContextManager`; we time
`prepare_request` (refresh, layers 2 and 3, assembly, counting, the hard-cap check):
cold (fresh manager and fresh `TokenCounter`), restored (`from_state` with a warm
counter, as a chat worker rebuilds a session) and warm (same manager, a new user message
each time). Peak memory: tracemalloc over a separate cold+warm pass, and the process's
max RSS. Excludes the LLM and the database. Not a test: nothing asserts timings.
"""

from __future__ import annotations

import argparse
import random
import resource
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from bench.report import QUICK_NOTE, machine, machine_line, markdown_table, percentile
from bench.sessions import make_file, prose
from contextcore.manager import ContextConfig, ContextManager
from contextcore.models import ModelFacts
from contextcore.tokens import TokenCounter

WARM_GOAL_MS, COLD_GOAL_MS = 15.0, 1500.0
TOKENS_PER_FUNCTION = 115  # what one generated function costs in cl100k_base
FACTS = ModelFacts(
    name="anthropic/claude-bench",
    max_input_tokens=400_000,
    max_output_tokens=8_192,
    min_cacheable_tokens=1_024,
    supports_prompt_caching=True,
)


@dataclass(frozen=True)
class AssemblySpec:
    files: int = 5_000
    selected: int = 50
    selected_tokens: int = 150_000
    history: int = 400
    cold_runs: int = 10
    warm_runs: int = 100
    scheme: str = "acdc"


QUICK = AssemblySpec(
    files=200, selected=5, selected_tokens=5_000, history=20, cold_runs=2, warm_runs=5
)


@dataclass(frozen=True)
class Workload:
    root: Path
    selected: tuple[str, ...]
    file_tree: str
    history: tuple[dict[str, str], ...]


def _path(i: int) -> str:
    return f"pkg_{i // 100:02d}/module_{i:04d}.py"


def build_workload(root: Path, spec: AssemblySpec) -> Workload:
    """Write the synthetic repository under `root`; selected files are spread evenly."""
    step = max(1, spec.files // max(1, spec.selected))
    chosen = {i * step for i in range(min(spec.selected, spec.files))}
    functions = max(1, round(spec.selected_tokens / max(1, spec.selected) / TOKENS_PER_FUNCTION))
    for i in range(spec.files):
        full = root / _path(i)
        full.parent.mkdir(parents=True, exist_ok=True)
        text = make_file(i, functions) if i in chosen else f"def helper_{i}():\n    return {i}\n"
        full.write_text(text)
    rng = random.Random(3)
    history = tuple(
        {"role": "user", "content": prose(rng, 50)}
        if n % 2 == 0
        else {"role": "assistant", "content": prose(rng, 150)}
        for n in range(spec.history)
    )
    selected = tuple(_path(i) for i in sorted(chosen))
    return Workload(root, selected, _file_tree(spec.files), history)


def _file_tree(count: int) -> str:
    lines: list[str] = []
    for i in range(count):
        if i % 100 == 0:
            lines.append(f"pkg_{i // 100:02d}/")
        lines.append(f"  module_{i:04d}.py")
    return "\n".join(lines)


def fresh_manager(work: Workload, counter: TokenCounter, scheme: str) -> ContextManager:
    config = ContextConfig(tier_scheme=scheme, compaction_enabled=False)
    manager = ContextManager(FACTS, counter, repo_root=work.root, config=config)
    for path in work.selected:
        manager.file_context.add_file(path)
    manager.set_history(work.history)
    manager.set_context_texts(file_tree=work.file_tree)
    return manager


def _timed(action: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    result = action()
    return (time.perf_counter() - start) * 1000, result


def _cold(work: Workload, scheme: str, n: int) -> tuple[float, Any]:
    def turn() -> Any:
        manager = fresh_manager(work, TokenCounter("cl100k_base"), scheme)
        return manager, manager.prepare_request(f"Cold question {n}: what does this do?", now=n)

    return _timed(turn)


def _restored(state: dict[str, Any], work: Workload, counter: TokenCounter, scheme: str, n: int):
    def turn() -> Any:
        config = ContextConfig(tier_scheme=scheme, compaction_enabled=False)
        manager = ContextManager.from_state(
            state, FACTS, counter, repo_root=work.root, config=config
        )
        return manager.prepare_request(f"Restored question {n}: and this?", now=n)

    return _timed(turn)


def measure(work: Workload, spec: AssemblySpec) -> dict[str, Any]:
    """Timings in milliseconds per measurement, plus the request's size."""
    first_ms, (manager, prepared) = _cold(work, spec.scheme, 0)
    cold = [_cold(work, spec.scheme, n)[0] for n in range(1, spec.cold_runs + 1)]
    warm = [
        _timed(lambda n=n: manager.prepare_request(f"Warm question {n}?", now=1000 + n))[0]
        for n in range(spec.warm_runs)
    ]
    state = manager.to_state()
    restored = [
        _restored(state, work, manager.counter, spec.scheme, n)[0] for n in range(spec.cold_runs)
    ]
    return {
        "first_cold_ms": [first_ms],
        "cold_ms": cold,
        "restored_ms": restored,
        "warm_ms": warm,
        "prompt_tokens": prepared.estimated_tokens,
        "messages": len(prepared.messages),
        "selected_tokens": manager.file_context.count_tokens(manager.counter),
        "history_tokens": manager.history_token_count(),
        "tree_tokens": manager.counter.count_text(work.file_tree),
    }


def peak_memory(work: Workload, spec: AssemblySpec) -> dict[str, float]:
    """Peak traced Python allocations over one cold turn and a few warm ones, in MB."""
    tracemalloc.start()
    try:
        _, (manager, _) = _cold(work, spec.scheme, 0)
        for n in range(min(5, spec.warm_runs)):
            manager.prepare_request(f"Memory question {n}?", now=2000 + n)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    maxrss_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"traced_peak_mb": peak / 2**20, "max_rss_mb": maxrss_kb / 1024}


def run(args: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    """`acdc bench assembly`: the markdown report and its data."""
    runs = args.runs
    spec = with_sizes(
        QUICK if args.quick else AssemblySpec(),
        scheme=args.scheme,
        files=args.files,
        selected=args.selected,
        history=args.history,
        warm_runs=runs,
        cold_runs=max(1, runs // 10) if runs else None,
    )
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="acdc-bench-") as tmp:
        results = run_spec(Path(tmp), spec)
    info = machine()
    lines = [
        "## acdc bench assembly",
        "",
        machine_line(info) + f"; took {time.perf_counter() - started:.1f} s.",
        "",
        assembly_markdown(results),
        *(["", QUICK_NOTE] if args.quick else []),
    ]
    return "\n".join(lines), {"machine": info, **results}


def run_spec(root: Path, spec: AssemblySpec) -> dict[str, Any]:
    """Build the workload under `root`, then time it and take its peak memory."""
    work = build_workload(root, spec)
    results = measure(work, spec)
    results["memory"] = peak_memory(work, spec)
    results["spec"] = {**spec.__dict__}
    return results


def with_sizes(spec: AssemblySpec, **sizes: Any) -> AssemblySpec:
    """`spec` with every size that is not None replaced."""
    return replace(spec, **{k: v for k, v in sizes.items() if v is not None})


_ROWS = (
    ("cold, first in the process (tokenizer load)", "first_cold_ms", ""),
    ("cold (fresh manager and TokenCounter)", "cold_ms", f"< {COLD_GOAL_MS:,.0f} ms"),
    ("restored (from_state, warm TokenCounter)", "restored_ms", ""),
    ("warm (same manager, new message)", "warm_ms", f"p50 < {WARM_GOAL_MS:.0f} ms"),
)


def _verdict(key: str, samples: list[float]) -> str:
    if key == "cold_ms":
        return "met" if percentile(samples, 50) < COLD_GOAL_MS else "NOT met"
    if key == "warm_ms":
        return "met" if percentile(samples, 50) < WARM_GOAL_MS else "NOT met"
    return ""


def assembly_markdown(results: dict[str, Any]) -> str:
    spec, memory = results["spec"], results["memory"]
    header = ("measurement", "runs", "p50 (ms)", "p95 (ms)", "max (ms)", "goal", "")
    cells = []
    for label, key, goal in _ROWS:
        samples = results[key]
        cells.append(
            (
                label,
                str(len(samples)),
                f"{percentile(samples, 50):,.1f}",
                f"{percentile(samples, 95):,.1f}",
                f"{max(samples):,.1f}",
                goal,
                _verdict(key, samples),
            )
        )
    workload = (
        f"Workload: {spec['files']:,} files, {spec['selected']} selected "
        f"({results['selected_tokens']:,} tokens), file tree {results['tree_tokens']:,} tokens, "
        f"{spec['history']} history messages ({results['history_tokens']:,} tokens); "
        f"request {results['prompt_tokens']:,} tokens in {results['messages']} messages, "
        f"layout `{spec['scheme']}`."
    )
    peak = (
        f"Peak memory: {memory['traced_peak_mb']:,.1f} MB traced by tracemalloc over one cold "
        f"turn and five warm ones; process max RSS {memory['max_rss_mb']:,.1f} MB."
    )
    table = markdown_table(header, cells, "lrrrrll")
    return "\n".join(["### Context assembly, one turn", "", workload, "", table, "", peak])
