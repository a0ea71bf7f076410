"""The long-session cache benchmark: 120 turns that cross the compaction trigger repeatedly.

Each turn goes through the real pipeline (`tests.bench.turn_replay`); after a turn, as in
the chat, the session is compacted when its history passed the trigger
(`chat.turn.compaction.compact_session`, detector and summarizer played by `acdc/fake`). The
chat requests are priced by the provider-cache simulator; the two compaction requests are
priced in full (they go to the smaller model, with no shared prefix), and both go into the
session's cost. Each strategy's cost is compared with "none" (no caching) over the same
turns and compactions. `prompt_series_svg` draws prompt tokens per turn with the
compactions marked: a pure function writing SVG text. Imports chat's models, so it loads
only after Django is set up (`cache_bench` imports it then). Not a test: nothing asserts
timings.
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from channels.db import database_sync_to_async
from django.test import override_settings

from chat.llm.fake import FakeStep
from chat.llm.runtime import facts_for
from chat.turn.compaction import compact_session, needs_compaction
from contextcore.prompt.cacherules import rules_for
from contextcore.prompt.cachesim import CacheSimulator
from contextcore.tokens import TokenCounter
from history import services
from tests.bench.cache_bench import write_file
from tests.bench.sessions import TURN_SECONDS, Session, Turn, make_file, prose
from tests.bench.turn_replay import MODEL, FakeClock, scripted_pipeline, scripted_turn, select_paths

LONG_TURNS = 120
TRIGGER_TOKENS = 12_000
SUMMARY_WORDS = 220
GOAL_VS_NONE = 0.3
STRATEGIES = ("none", "acdc")


def long_session(turns: int = LONG_TURNS) -> Session:
    """Three selected files and steady talk: the history grows ~700 tokens a turn."""
    rng = random.Random(23)
    paths = [f"app/part_{i}.py" for i in range(3)]
    files = {p: make_file(300 + i, functions=25) for i, p in enumerate(paths)}
    script = tuple(
        Turn(user=prose(rng, 60), answer=prose(rng, 420 if t % 5 else 900)) for t in range(turns)
    )
    return Session("long session with compaction", files, tuple(paths), script)


@dataclass
class LongReport:
    strategy: str
    prompt_tokens: list[int] = field(default_factory=list)  # per chat turn
    read_tokens: list[int] = field(default_factory=list)
    chat_cost: float = 0.0
    compaction_cost: float = 0.0
    compactions: list[int] = field(default_factory=list)  # turn index after which it ran

    @property
    def cost(self) -> float:
        return self.chat_cost + self.compaction_cost

    @property
    def cache_read_share(self) -> float:
        total = sum(self.prompt_tokens)
        return sum(self.read_tokens) / total if total else 0.0

    def as_data(self) -> dict[str, Any]:
        return {
            "strategy": self.strategy,
            "cost": round(self.cost, 1),
            "chat_cost": round(self.chat_cost, 1),
            "compaction_cost": round(self.compaction_cost, 1),
            "cache_read_share": round(self.cache_read_share, 4),
            "compactions_after_turns": self.compactions,
            "prompt_tokens": self.prompt_tokens,
            "cache_read_tokens": self.read_tokens,
        }


def replay_long(session: Session, strategy: str, repo: Path) -> LongReport:
    clock = FakeClock()
    for path, text in session.files.items():
        write_file(repo, path, text, clock.now)
    with (
        scripted_pipeline(repo, strategy, clock) as script,
        override_settings(
            ACDC_COMPACTION_TRIGGER_TOKENS=TRIGGER_TOKENS,
            ACDC_SMALLER_MODEL="acdc/fake",
            ACDC_CHECKPOINT_EVERY=0,
        ),
    ):
        return asyncio.run(_replay(session, strategy, repo, clock, script))


async def _replay(session: Session, strategy: str, repo: Path, clock, script) -> LongReport:
    facts, _ = facts_for(MODEL)
    counter = TokenCounter(facts.tokenizer)
    simulator = CacheSimulator(counter, rules_for(facts))
    stored = await database_sync_to_async(services.session_create)(
        repository=str(repo), model=MODEL, title=f"bench: {session.name} ({strategy})"
    )
    await select_paths(stored.id, add=session.selected)
    report = LongReport(strategy)
    rng = random.Random(99)
    for index, turn in enumerate(session.turns):
        clock.now += TURN_SECONDS
        cost = simulator.request(await scripted_turn(stored.id, turn, script), clock.now)
        report.prompt_tokens.append(cost.prompt_tokens)
        report.read_tokens.append(cost.cache_read_tokens)
        report.chat_cost += cost.cost
        if await database_sync_to_async(needs_compaction)(stored.id):
            detector = '{"boundary_index": null, "boundary_reason": "", "confidence": 0.2}'
            script.enqueue(FakeStep(text=detector), FakeStep(text=prose(rng, SUMMARY_WORDS)))
            before = len(script.requests)
            outcome = await compact_session(stored.id)
            for request in script.requests[before:]:
                report.compaction_cost += counter.count(request.messages)
            if outcome.changed:
                report.compactions.append(index)
    return report


def long_markdown(reports: dict[str, LongReport]) -> str:
    base = reports["none"].cost
    lines = [
        f"#### {LONG_TURNS} turns crossing the compaction trigger ({TRIGGER_TOKENS:,} tokens)",
        "",
        "| strategy | cost (input-token units) | of which compaction | cache-read share "
        "| compactions | vs no caching |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, report in reports.items():
        ratio = report.cost / base if base else 0.0
        lines.append(
            f"| {name} | {report.cost:,.0f} | {report.compaction_cost:,.0f} "
            f"| {report.cache_read_share:.1%} | {len(report.compactions)} | {ratio:.2f}x |"
        )
    acdc = reports.get("acdc")
    if acdc is not None and base:
        ratio = acdc.cost / base
        verdict = "met" if ratio <= GOAL_VS_NONE else "NOT met"
        lines += ["", f"Goal: acdc at or below {GOAL_VS_NONE}x of no caching: {verdict}."]
    return "\n".join(lines)


def prompt_series_svg(reports: dict[str, LongReport], width: int = 720, height: int = 260) -> str:
    """Prompt tokens per turn, one line per strategy, compactions as dashed verticals, and
    the cache-read tokens of acdc as a filled area under its line."""
    pad, top = 48, 20
    series = [r.prompt_tokens for r in reports.values() if r.prompt_tokens]
    turns = max((len(s) for s in series), default=0)
    peak = max((max(s) for s in series), default=1) or 1
    inner_w, inner_h = width - pad - 12, height - top - 36

    def x(i: int) -> float:
        return pad + (inner_w * i / max(1, turns - 1))

    def y(v: float) -> float:
        return top + inner_h * (1 - v / peak)

    colours = {"none": "#98a2b3", "acdc": "#2f6feb"}
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" font-family="sans-serif" font-size="11">',
        f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
        f'<line x1="{pad}" y1="{top + inner_h}" x2="{width - 12}" y2="{top + inner_h}" '
        'stroke="#d0d5dd"/>',
        f'<text x="{pad}" y="{height - 8}">turn 1</text>',
        f'<text x="{width - 12}" y="{height - 8}" text-anchor="end">turn {turns}</text>',
        f'<text x="4" y="{top + 4}">{peak:,}</text>',
        f'<text x="4" y="{top + inner_h}">0</text>',
    ]
    acdc = reports.get("acdc")
    if acdc is not None and acdc.read_tokens:
        area = [f"{x(i):.1f},{y(v):.1f}" for i, v in enumerate(acdc.read_tokens)]
        area = [f"{x(0):.1f},{y(0):.1f}", *area, f"{x(len(acdc.read_tokens) - 1):.1f},{y(0):.1f}"]
        parts.append(f'<polygon points="{" ".join(area)}" fill="#2f6feb" fill-opacity="0.15"/>')
        for turn in acdc.compactions:
            parts.append(
                f'<line x1="{x(turn):.1f}" y1="{top}" x2="{x(turn):.1f}" y2="{top + inner_h}" '
                'stroke="#dc6803" stroke-dasharray="3 3"/>'
            )
    for name, report in reports.items():
        points = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in enumerate(report.prompt_tokens))
        colour = colours.get(name, "#344054")
        parts.append(
            f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="1.5"/>'
        )
    legend = [
        ("#2f6feb", "prompt tokens per turn"),
        ("#c7d7fb", "of which acdc reads from cache"),
        ("#dc6803", "compaction"),
    ]
    for n, (colour, label) in enumerate(legend):
        lx = pad + 10 + n * 200
        parts.append(f'<rect x="{lx}" y="4" width="10" height="10" fill="{colour}"/>')
        parts.append(f'<text x="{lx + 14}" y="13">{label}</text>')
    parts.append("</svg>")
    return "\n".join(parts)


def run_long(repo: Path, out: Path) -> tuple[str, dict[str, Any]]:
    """Both strategies on the long session in `repo`: the table and its data; the plot of
    prompt tokens per turn goes to `<out>/cache-long-session.svg`."""
    session = long_session()
    reports = {s: replay_long(session, s, repo) for s in STRATEGIES}
    out.mkdir(parents=True, exist_ok=True)
    plot = out / "cache-long-session.svg"
    plot.write_text(prompt_series_svg(reports), encoding="utf-8")
    table = long_markdown(reports) + f"\n\nPrompt tokens per turn: `{plot}`."
    data = {name: report.as_data() for name, report in reports.items()}
    return table, {"session": "long session with compaction", "strategies": data}
