"""The cache benchmark over the wire: `acdc serve` against loopback fakes of the providers.

Each session shape is played through a real `acdc serve` process over its websocket
(`bench.cache.wire_drive`) twice per provider API: with (b) one breakpoint on the last
message (ACDC_TIER_SCHEME=last; under automatic rules plain prefix caching) and with (d)
acdc's layout. The fakes (`bench.wirefakes`) bill each request under the provider's
documented cache rules in its own usage fields, and this module prices those fields at
the provider's documented multipliers: Anthropic writes 1.25x (5 min) / 2x (1 h), reads
0.1x; OpenAI reads 0.25x. (a) no caching is (b)'s prompt tokens at 1x. Nothing here
uses contextcore's simulator: the point is to measure acdc from outside.
Non-goals: the seed layout (c), DeepSeek/Gemini/Grok (the OpenAI fake takes their
parameters, but litellm would send them to other endpoints), images.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from bench.cache.wire_drive import classify, drive_session, faketime_available
from bench.report import markdown_table
from bench.sessions import Session
from bench.wirefakes import Clock, Received, WireFake


@dataclass(frozen=True)
class WireRules:
    label: str
    model: str  # as ACDC_MODEL names it
    api: str  # "anthropic" or "openai"
    read: float
    write_5m: float = 1.0
    write_1h: float = 1.0

    def api_base(self, fake: WireFake) -> str:
        return fake.base_url + ("/v1" if self.api == "openai" else "")


WIRE_RULES = (
    WireRules(
        "Anthropic (claude-sonnet-4-5)", "anthropic/claude-sonnet-4-5", "anthropic", 0.1, 1.25, 2.0
    ),
    WireRules("OpenAI (gpt-4.1)", "openai/gpt-4.1", "openai", 0.25),
)
LAYOUTS = ("last", "acdc")
KINDS = ("chat", "side", "refresh")


@dataclass
class Bill:
    """What one replay's requests were billed, by kind of request."""

    prompt: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))
    read: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))
    written: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))
    cost: dict[str, float] = field(default_factory=lambda: dict.fromkeys(KINDS, 0.0))
    requests: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))
    failures: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def total(self) -> float:
        return sum(self.cost.values())

    @property
    def uncached(self) -> int:
        return sum(self.prompt.values())


def bill(received: Sequence[Received], rules: WireRules) -> Bill:
    result = Bill()
    for request in received:
        kind = classify(request.body)
        kind = "side" if kind in ("detector", "summarizer") else kind
        prompt, read, written, cost = _priced(request.usage, rules)
        result.prompt[kind] += prompt
        result.read[kind] += read
        result.written[kind] += written
        result.cost[kind] += cost
        result.requests[kind] += 1
    return result


def _priced(usage: dict[str, Any], rules: WireRules) -> tuple[int, int, int, float]:
    """(prompt tokens, read, written, cost in input-token units) from the provider's fields."""
    if rules.api == "anthropic":
        read = usage["cache_read_input_tokens"]
        split = usage.get("cache_creation") or {}
        long = split.get("ephemeral_1h_input_tokens", 0)
        written = usage["cache_creation_input_tokens"]
        prompt = usage["input_tokens"] + read + written
        cost = usage["input_tokens"] + rules.read * read
        cost += rules.write_5m * (written - long) + rules.write_1h * long
        return prompt, read, written, cost
    prompt = usage["prompt_tokens"]
    read = usage["prompt_tokens_details"]["cached_tokens"]
    return prompt, read, 0, prompt - read + rules.read * read


def replay(session: Session, rules: WireRules, strategy: str, tmp: Path) -> Bill:
    folder = Path(tempfile.mkdtemp(prefix=f"{rules.api}-{strategy}-", dir=tmp))
    with WireFake(clock=Clock()) as fake:
        drive = drive_session(session, folder, fake, rules.model, rules.api_base(fake), strategy)
        result = bill(list(fake.requests), rules)
    result.failures, result.seconds = drive.failures, drive.seconds
    return result


def run_wire(
    sessions: Sequence[Session], tmp: Path, in_process: dict[tuple[str, str], float] | None = None
) -> tuple[str, list[dict[str, Any]]]:
    """Every session under both layouts and both APIs: markdown and data. `in_process` maps
    (session name, rule label) to the in-process (d)/(b), shown beside the wire figure."""
    parts, data = [_preamble()], []
    for session in sessions:
        rows, notes = [], []
        for rules in WIRE_RULES:
            bills = {s: replay(session, rules, s, tmp) for s in LAYOUTS}
            rows.append(_row(session, rules, bills, in_process or {}))
            notes += [f"{rules.label} {s}: {f}" for s, b in bills.items() for f in b.failures[:3]]
            data.append(_data(session, rules, bills))
        title = f"### over the wire: {session.name} ({len(session.turns)} turns)"
        parts.append("\n".join([title, "", markdown_table(HEADER, rows, "lrrrrrrrl")]))
        if notes:
            parts.append("Turns that did not complete: " + "; ".join(notes))
    return "\n\n".join(parts), data


def in_process_ratios(data: list[dict[str, Any]]) -> dict[tuple[str, str], float]:
    """(session, provider) -> the in-process (d)/(b), to print beside the wire figure."""
    found = {}
    for shape in data:
        for rule_set in shape["rule_sets"]:
            acdc = next(r for r in rule_set["strategies"] if r["strategy"] == "acdc")
            found[(shape["session"], rule_set["rules"].split(" ", 1)[0])] = acdc["vs_last"]
    return found


def cut(session: Session, turns: int) -> Session:
    return replace(session, turns=session.turns[:turns])


HEADER = (
    "rule set",
    "(a) no caching",
    "(b) one breakpoint",
    "(d) acdc",
    "(d) vs (b)",
    "(d) vs (a)",
    "in-process (d) vs (b)",
    "(d) side vs (b) side",
    "acdc requests: chat / side / refresh (refresh read share)",
)


def _row(
    session: Session, rules: WireRules, bills: dict[str, Bill], in_process: dict
) -> tuple[str, ...]:
    last, acdc = bills["last"], bills["acdc"]
    base = last.uncached
    side = f"{acdc.cost['side'] / last.cost['side']:.2f}x" if last.cost["side"] else "-"
    inside = in_process.get((session.name, rules.label.split(" ", 1)[0]))
    share = acdc.read["refresh"] / acdc.prompt["refresh"] if acdc.prompt["refresh"] else 0.0
    counts = " / ".join(str(acdc.requests[k]) for k in KINDS)
    return (
        rules.label,
        f"{base:,}",
        f"{last.total:,.0f} ({last.total / base:.2f}x)",
        f"{acdc.total:,.0f} ({acdc.total / base:.2f}x)",
        f"**{acdc.total / last.total:.2f}x**",
        f"{acdc.total / base:.3f}x",
        f"{inside:.2f}x" if inside is not None else "-",
        side,
        counts + (f" ({share:.0%})" if acdc.requests["refresh"] else ""),
    )


def _data(session: Session, rules: WireRules, bills: dict[str, Bill]) -> dict[str, Any]:
    return {
        "session": session.name,
        "turns": len(session.turns),
        "rules": rules.label,
        "layouts": {
            name: {
                "prompt": b.prompt,
                "read": b.read,
                "written": b.written,
                "cost": {k: round(v, 1) for k, v in b.cost.items()},
                "requests": b.requests,
                "failures": b.failures,
                "seconds": round(b.seconds, 1),
            }
            for name, b in bills.items()
        },
    }


def _preamble() -> str:
    clock = (
        "the server's wall clock moved with the fakes' through libfaketime, so pauses and "
        "keep-warm are played"
        if faketime_available()
        else "WITHOUT libfaketime (apt-get install faketime): the server's own clock is not "
        "moved, so it sees no pause and sends no refresh; only the fakes see the gaps"
    )
    return (
        "## over the wire\n\n`acdc serve` in a subprocess, driven over its websocket like a "
        "browser tab, its model pointed at loopback fakes of the Anthropic Messages and OpenAI "
        "Chat Completions APIs (`bench.wirefakes`) that bill each request under the "
        "provider's documented cache rules; priced from their usage fields (Anthropic: writes "
        "1.25x / 2x, reads 0.1x; OpenAI: reads 0.25x). Tokens are cl100k over a canonical "
        f"JSON of each block; {clock}. (a) is (b)'s prompt tokens at full price."
    )
