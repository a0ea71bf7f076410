"""The long session's plot: prompt tokens per turn with the compactions marked.

The 120-turn session (`sessions.long_session`) crosses its compaction trigger again and
again; `long_report` splits one priced recording of it into chat and compaction cost and
the per-turn series, and `prompt_series_svg` draws them: pure functions writing SVG text.
Not a test: nothing asserts timings.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bench.cache.pricing import Recording
from contextcore.prompt.cachesim import SimulationReport


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


def long_report(strategy: str, recording: Recording, report: SimulationReport) -> LongReport:
    """The per-turn series of one priced recording of the long session."""
    result = LongReport(strategy, compactions=list(recording.compactions))
    for sent, cost in zip(recording.sent, report.requests, strict=True):
        if sent.side:
            result.compaction_cost += cost.cost
            continue
        result.prompt_tokens.append(cost.prompt_tokens)
        result.read_tokens.append(cost.cache_read_tokens)
        result.chat_cost += cost.cost
    return result


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
