"""The cache benchmark: scripted sessions priced with the provider-cache simulator.

Strategies: (a) "none": plain layout, no caching; (b) "last": plain layout, one breakpoint
on the last message; (c) "seed": seed 000 tiers; (d) "acdc": the default append-only
layout. `run` (`acdc bench cache`) replays each session through the real turn pipeline
(`tests.bench.turn_replay`, Django on a throwaway repository and database) and, for a full
run, the long session with compaction; `replay_direct` here drives `ContextManager`
alone, the fallback (`--direct`) and the quick path for tests. Files live in a temporary
repository and edits are written to disk, so the engine's own refresh picks them up as in
a chat. `compare` and `cache_markdown` turn simulation reports into the table: pure
functions. Not a test: nothing here asserts timings.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from contextcore.manager import ContextConfig, ContextManager
from contextcore.models import ModelFacts
from contextcore.prompt.assembly import ImageInput
from contextcore.prompt.cacherules import rules_for
from contextcore.prompt.cachesim import CacheSimulator, SimulationReport
from contextcore.tokens import TokenCounter
from tests.bench.django_env import close_database, setup_django
from tests.bench.report import QUICK_NOTE, machine, machine_line, markdown_table
from tests.bench.sessions import TURN_SECONDS, Session, file_edit_session, selection_session

STRATEGIES = ("none", "last", "seed", "acdc")
LABELS = {
    "none": "(a) no caching",
    "last": "(b) last message",
    "seed": "(c) seed tiers",
    "acdc": "(d) acdc",
}
GOAL_VS_NONE, GOAL_VS_LAST = 0.2, 0.5
GOAL_SESSION = "file edits"
QUICK_TURNS = 6
THROUGH_PIPELINE = (
    "Replayed through the real turn pipeline (`chat.turn.turns.run_turn`, `acdc/fake`)."
)
THROUGH_MANAGER = "FALLBACK: replayed through `ContextManager` directly, not the turn pipeline."
START_TIME = 1_000_000.0
SONNET = ModelFacts(
    name="anthropic/claude-sonnet-4-5",
    max_input_tokens=200_000,
    max_output_tokens=64_000,
    input_cost_per_token=3e-6,
    min_cacheable_tokens=1024,
    supports_prompt_caching=True,
)
# A 1x1 PNG stands in for the pasted image; its token cost comes from `Turn.image` sizes.
PIXEL = (
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQ"
    "GAhKmMIQAAAABJRU5ErkJggg=="
)


@dataclass(frozen=True)
class StrategyRow:
    strategy: str
    prompt_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    cost: float
    vs_none: float
    vs_last: float

    @property
    def cache_read_share(self) -> float:
        return self.cache_read_tokens / self.prompt_tokens if self.prompt_tokens else 0.0


def write_file(root: Path, path: str, text: str, when: float) -> None:
    """Write `text` with mtime `when` (the fake clock), as an editor saving at that time."""
    full = root / path
    full.parent.mkdir(parents=True, exist_ok=True)
    full.write_text(text)
    os.utime(full, ns=(int(when * 1e9), int(when * 1e9)))


def replay_direct(
    session: Session,
    strategy: str,
    *,
    facts: ModelFacts = SONNET,
    counter: TokenCounter | None = None,
) -> SimulationReport:
    counter = counter or TokenCounter("cl100k_base")
    config = ContextConfig(tier_scheme=strategy)
    simulator = CacheSimulator(counter, rules_for(facts))
    now = START_TIME
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for path, text in session.files.items():
            write_file(root, path, text, now)
        manager = ContextManager(facts, counter, repo_root=root, config=config)
        for path in session.selected:
            assert manager.file_context.add_file(path).ok
        for turn in session.turns:
            now += TURN_SECONDS + turn.pause
            for path, text in turn.edits.items():
                write_file(root, path, text, now)
            for path in turn.add:
                manager.file_context.add_file(path)
            for path in turn.drop:
                manager.file_context.remove_file(path)
            images = [ImageInput("image/png", PIXEL, *turn.image)] if turn.image else []
            prepared = manager.prepare_request(turn.user, images, now=now)
            simulator.request(prepared.messages, now)
            manager.record_exchange(turn.user, turn.answer)
    return simulator.report


def compare(reports: Mapping[str, SimulationReport]) -> list[StrategyRow]:
    """One row per strategy, in STRATEGIES order, with cost ratios against (a) and (b)."""
    base, last = reports["none"].cost, reports["last"].cost
    return [
        StrategyRow(
            strategy=name,
            prompt_tokens=report.prompt_tokens,
            cache_read_tokens=report.cache_read_tokens,
            cache_write_tokens=report.cache_write_tokens,
            cost=report.cost,
            vs_none=report.cost / base if base else 0.0,
            vs_last=report.cost / last if last else 0.0,
        )
        for name in STRATEGIES
        if (report := reports.get(name)) is not None
    ]


def goal_line(rows: list[StrategyRow]) -> str:
    acdc = next(r for r in rows if r.strategy == "acdc")
    met = acdc.vs_none <= GOAL_VS_NONE and acdc.vs_last <= GOAL_VS_LAST
    return (
        f"Goal (d) <= {GOAL_VS_NONE}x (a) and <= {GOAL_VS_LAST}x (b): "
        f"{'met' if met else 'NOT met'} ({acdc.vs_none:.2f}x, {acdc.vs_last:.2f}x)."
    )


def cache_markdown(title: str, rows: list[StrategyRow], *, goal: bool = False) -> str:
    header = (
        "strategy",
        "prompt tokens",
        "cache-read share",
        "cache writes",
        "cost (input-token units)",
        "vs (a)",
        "vs (b)",
    )
    cells = [
        (
            LABELS[r.strategy],
            f"{r.prompt_tokens:,}",
            f"{r.cache_read_share:.0%}",
            f"{r.cache_write_tokens:,}",
            f"{r.cost:,.0f}",
            f"{r.vs_none:.2f}x",
            f"{r.vs_last:.2f}x",
        )
        for r in rows
    ]
    parts = [f"### {title}", "", markdown_table(header, cells, "lrrrrrr")]
    if goal:
        parts += ["", goal_line(rows)]
    return "\n".join(parts)


def rows_as_data(rows: list[StrategyRow]) -> list[dict[str, Any]]:
    return [
        {
            "strategy": r.strategy,
            "label": LABELS[r.strategy],
            "prompt_tokens": r.prompt_tokens,
            "cache_read_tokens": r.cache_read_tokens,
            "cache_write_tokens": r.cache_write_tokens,
            "cache_read_share": round(r.cache_read_share, 4),
            "cost": round(r.cost, 1),
            "vs_none": round(r.vs_none, 4),
            "vs_last": round(r.vs_last, 4),
        }
        for r in rows
    ]


Replay = Callable[[Session, str], SimulationReport]


def run_sessions(replay: Replay, sessions: Sequence[Session]) -> tuple[str, list[dict[str, Any]]]:
    """Every session under every strategy: the markdown tables and the same as data."""
    parts, data = [], []
    for session in sessions:
        reports = {strategy: replay(session, strategy) for strategy in STRATEGIES}
        rows = compare(reports)
        title = f"{session.name} ({len(session.turns)} turns)"
        parts.append(cache_markdown(title, rows, goal=session.name == GOAL_SESSION))
        data.append(
            {
                "session": session.name,
                "turns": len(session.turns),
                "strategies": rows_as_data(rows),
                "requests": {s: [asdict(r) for r in reports[s].requests] for s in reports},
            }
        )
    return "\n\n".join(parts), data


def run(args: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    """`acdc bench cache`: the markdown report and its data."""
    turns = QUICK_TURNS if args.quick else args.turns
    sessions = [file_edit_session(turns), selection_session(turns)]
    started = time.perf_counter()
    if args.direct:
        counter = TokenCounter("cl100k_base")
        tables, data = run_sessions(
            lambda session, strategy: replay_direct(session, strategy, counter=counter), sessions
        )
        path, notes = THROUGH_MANAGER, []
    else:
        with tempfile.TemporaryDirectory(prefix="acdc-bench-") as tmp:
            tables, data, notes = _through_pipeline(Path(tmp), sessions, args)
        path = THROUGH_PIPELINE
    info = machine()
    lines = [
        "## acdc bench cache",
        "",
        path,
        "Cost in input-token units: uncached 1x, cache writes 1.25x, reads 0.1x; "
        f"5-minute cache lifetime on a fake clock, {TURN_SECONDS:.0f} s per turn.",
        machine_line(info) + f"; took {time.perf_counter() - started:.1f} s.",
        "",
        tables,
        *(["", *notes] if notes else []),
        *(["", QUICK_NOTE] if args.quick else []),
    ]
    mode = "direct" if args.direct else "pipeline"
    return "\n".join(lines), {"machine": info, "mode": mode, "sessions": data, "notes": notes}


def _through_pipeline(
    tmp: Path, sessions: Sequence[Session], args: argparse.Namespace
) -> tuple[str, list[dict[str, Any]], list[str]]:
    """The sessions through `run_turn` on Django in `tmp`; a full run adds the long one."""
    repo = tmp / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=False, capture_output=True)
    setup_django(repo, tmp / "data")
    # Lazy: both import chat's models, which load only once Django is set up on `repo`.
    from tests.bench import compaction_bench, turn_replay

    tables, data = run_sessions(
        lambda session, strategy: turn_replay.replay_through_turns(session, strategy, repo),
        sessions,
    )
    if not args.quick:
        long_table, long_data = compaction_bench.run_long(repo, args.out)
        tables += "\n\n" + long_table
        data.append(long_data)
    close_database()
    return tables, data, [turn_replay.LIMITATIONS]
