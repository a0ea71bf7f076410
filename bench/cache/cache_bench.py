"""The cache benchmark: scripted sessions priced under every provider's cache rules.

Layouts: (a) "none": plain layout, no caching; (b) "last": plain layout with one
breakpoint on the last message (under automatic rules: plain prefix caching); (c) "seed":
seed 000 tiers; (d) "acdc": the default append-only layout. `run` (`acdc bench cache`)
replays every session shape once per layout through the real turn pipeline
(`bench.cache.replay`, Django on a throwaway repository and database), then prices
the recorded requests under each provider's rules (`bench.cache.pricing`); (a) is
(b)'s requests priced with no caching. Then, unless --no-wire or --direct, every shape
is played through `acdc serve` against loopback provider fakes (`bench.cache.wire`)
and those tables follow. `replay_direct` here drives `ContextManager` alone,
the fallback (`--direct`) and the quick path for tests. The layouts are judged by
`bench.cache.compare`'s pure functions. Not a test: nothing here asserts timings.
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from bench.cache.compaction import long_report, prompt_series_svg
from bench.cache.compare import compare, goal_misses, priced, rows_as_data, shape_markdown
from bench.cache.explain import (
    lifetime_experiments,
    refresh_markdown,
    refresh_split,
    side_split,
    split_markdown,
)
from bench.cache.mcp_attached import mcp_attached, tools_line
from bench.cache.pricing import (
    Recording,
    RuleSet,
    Sent,
    acting_as,
    lowest,
    rule_sets,
)
from bench.cache.wire import cut, in_process_ratios, run_wire
from bench.django_env import close_database, setup_django
from bench.report import QUICK_NOTE, machine, machine_line, markdown_table
from bench.sessions import (
    START_TIME,
    Session,
    file_edit_session,
    long_session,
    pause_session,
    selection_session,
    switching_session,
    write_file,
)
from chat.llm.facts import model_facts
from chat.llm.sdk import model_info
from contextcore.manager import ContextConfig, ContextManager
from contextcore.models import ModelFacts
from contextcore.prompt.assembly import ImageInput
from contextcore.prompt.cacherules import CacheRules
from contextcore.prompt.cachesim import SimulationReport
from contextcore.prompt.siderequest import refresh_request
from contextcore.tokens import TokenCounter

QUICK_TURNS = 6
THROUGH_PIPELINE = (
    "Replayed through the real turn pipeline (`chat.turn.turns.run_turn`, `acdc/fake`)."
)
THROUGH_MANAGER = "FALLBACK: replayed through `ContextManager` directly, not the turn pipeline."
LONG_PLOT = "cache-long-session.svg"
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


def replay_direct(
    session: Session,
    strategy: str,
    *,
    facts: ModelFacts = SONNET,
    counter: TokenCounter | None = None,
    keep_alive: bool = False,
) -> Recording:
    """`session` through `ContextManager` alone (no compaction, no Django); with
    `keep_alive`, the refreshes the plan holds go out in the gaps, as an open tab's."""
    counter = counter or TokenCounter("cl100k_base")
    config = ContextConfig(tier_scheme=strategy, keep_alive=keep_alive)
    recording = Recording(session.name, strategy)
    now = START_TIME
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for path, text in session.files.items():
            write_file(root, path, text, now)
        manager = ContextManager(facts, counter, repo_root=root, config=config)
        for path in session.selected:
            assert manager.file_context.add_file(path).ok
        for turn in session.turns:
            for at in manager.refresh_plan():
                if at >= now + turn.seconds_before:
                    break
                ping = refresh_request(manager.side_prefix(None), facts.name)
                if ping is None:
                    break
                recording.sent.append(Sent(ping.messages, at, refresh=True))
                manager.stability.note_refresh(at)
            now += turn.seconds_before
            for path, text in turn.edits.items():
                write_file(root, path, text, now)
            for path in turn.add:
                manager.file_context.add_file(path)
            for path in turn.drop:
                manager.file_context.remove_file(path)
            images = [ImageInput("image/png", PIXEL, *turn.image)] if turn.image else []
            prepared = manager.prepare_request(turn.user, images, now=now)
            recording.sent.append(Sent(prepared.messages, now))
            manager.record_exchange(turn.user, turn.answer)
    return recording


Replay = Callable[[Session, str, "ModelFacts | None"], Recording]


def run_sessions(
    replay: Replay,
    sessions: Sequence[Session],
    rules: Sequence[RuleSet],
    counter: TokenCounter,
    out: Path,
) -> tuple[str, list[dict[str, Any]]]:
    """Every session under every layout and rule set: tables and data. The simple layouts
    are recorded once; acdc once per rule set, deciding for that provider."""
    parts, data = [], []
    for session in sessions:
        simple = {strategy: replay(session, strategy, None) for strategy in ("last", "seed")}
        results, shape, splits, refreshes, floors = [], [], [], [], []
        for rule_set in rules:
            recordings = {**simple, "acdc": replay(session, "acdc", rule_set.facts)}
            reports = priced(recordings, rule_set.rules, counter)
            rows = compare(reports)
            misses = goal_misses(rows, rule_set.rules, session.name)
            results.append((rule_set.label, rows, misses))
            shape.append({"rules": rule_set.label, "strategies": rows_as_data(rows)})
            if any(sent.side for sent in recordings["acdc"].sent):
                splits.append((rule_set.label, side_split(recordings, reports)))
                shape[-1]["split"] = splits[-1][1]
            if any(sent.refresh for sent in recordings["acdc"].sent):
                refreshes.append((rule_set.label, refresh_split(recordings["acdc"], reports)))
                shape[-1]["refreshes"] = refreshes[-1][1]
            shares = _floor_shares(rule_set, recordings, reports, counter)
            floors.append((rule_set.label, *(f"{value:.2f}x" for value in shares.values())))
            shape[-1]["vs_last_real_and_lowest"] = shares
            if session.compaction_trigger and rule_set is rules[0]:
                _plot(out, recordings, reports)
        title = f"{session.name} ({len(session.turns)} turns)"
        parts.append(shape_markdown(title, results))
        if splits:
            parts.append("Chat and side requests apart:\n\n" + split_markdown(splits))
        parts.append(FLOOR_NOTE + markdown_table(FLOOR_HEADER, floors, "lrrrr"))
        if refreshes:
            parts.append("acdc's keep-alive refreshes (in (d)):\n\n" + refresh_markdown(refreshes))
        compactions = len(recordings["acdc"].compactions)
        if compactions:
            parts.append(
                f"{compactions} compactions; plot of the first rule set: `{out / LONG_PLOT}`."
            )
        data.append({"session": session.name, "turns": len(session.turns), "rule_sets": shape})
    return "\n\n".join(parts), data


FLOOR_NOTE = (
    "The least any cache layout could charge for the same requests (a block is read only "
    "if an earlier request sent its whole prefix; the rest at full price; lifetimes and "
    "minimums ignored), against (b)'s real cost: a goal below acdc's floor cannot be met "
    "without sending other content.\n\n"
)
FLOOR_HEADER = ("rule set", "(b) real", "(b) floor", "(d) real", "(d) floor")


def _floor_shares(
    rule_set: RuleSet,
    recordings: Mapping[str, Recording],
    reports: Mapping[str, SimulationReport],
    counter: TokenCounter,
) -> dict[str, float]:
    """(b)'s and (d)'s real and lowest possible cost, each as a share of (b)'s real cost."""
    last = reports["last"].cost or 1.0
    costs = {
        "last": reports["last"].cost,
        "last_lowest": lowest(recordings["last"], rule_set.rules, counter),
        "acdc": reports["acdc"].cost,
        "acdc_lowest": lowest(recordings["acdc"], rule_set.rules, counter),
    }
    return {name: round(cost / last, 4) for name, cost in costs.items()}


def _plot(
    out: Path, recordings: Mapping[str, Recording], reports: Mapping[str, SimulationReport]
) -> None:
    series = {
        name: long_report(name, recordings["last" if name == "none" else name], reports[name])
        for name in ("none", "acdc")
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / LONG_PLOT).write_text(prompt_series_svg(series), encoding="utf-8")


def sessions_for(args: argparse.Namespace) -> list[Session]:
    turns = QUICK_TURNS if args.quick else args.turns
    shapes = [
        file_edit_session(turns),
        selection_session(turns),
        pause_session(turns),
        switching_session(turns),
    ]
    if not args.quick and not args.direct:
        shapes.append(long_session())
    return shapes


def run(args: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    """`acdc bench cache`: the markdown report and its data."""
    sessions = sessions_for(args)
    rules = rule_sets()
    counter = TokenCounter("cl100k_base")
    started = time.perf_counter()
    if args.direct:
        tables, data = run_sessions(
            lambda session, strategy, facts: replay_direct(
                session, strategy, counter=counter, facts=acting_as(SONNET, facts or SONNET)
            ),
            sessions,
            rules,
            counter,
            args.out,
        )
        path, notes = THROUGH_MANAGER, []
    else:
        with tempfile.TemporaryDirectory(prefix="acdc-bench-") as tmp:
            tables, data, notes = _through_pipeline(Path(tmp), sessions, rules, counter, args)
        path = THROUGH_PIPELINE
    if not args.quick:
        tables += "\n\n### cache lifetimes under Anthropic's rules (direct replays)\n\n"
        tables += lifetime_experiments(
            sessions_for(argparse.Namespace(quick=False, turns=args.turns, direct=True)),
            lambda session, strategy, keep_alive=False: replay_direct(
                session,
                strategy,
                counter=counter,
                facts=acting_as(SONNET, rules[0].facts),
                keep_alive=keep_alive,
            ),
            rules[0].rules,
            counter,
        )
    wire_data: list[dict[str, Any]] = []
    if getattr(args, "wire", False) and not args.direct:
        # A quick run checks the plumbing with one shape: each replay starts a server.
        wire_sessions = sessions[:1] if args.quick else sessions
        if args.wire_turns:
            wire_sessions = [cut(s, args.wire_turns) for s in wire_sessions]
        with tempfile.TemporaryDirectory(prefix="acdc-wire-") as tmp:
            wire_tables, wire_data = run_wire(wire_sessions, Path(tmp), in_process_ratios(data))
        tables += "\n\n" + wire_tables
    info = machine()
    lines = [
        "## acdc bench cache",
        "",
        path,
        "Cost in input-token units at each model's prices from litellm's map; (b)-(d) as a "
        "share of (a). Rules: " + "; ".join(_describe(r.label, r.rules) for r in rules) + ".",
        machine_line(info) + f"; took {time.perf_counter() - started:.1f} s.",
        "",
        tables,
        *(["", *notes] if notes else []),
        *(["", QUICK_NOTE] if args.quick else []),
    ]
    mode = "direct" if args.direct else "pipeline"
    result = {"machine": info, "mode": mode, "sessions": data, "notes": notes, "wire": wire_data}
    return "\n".join(lines), result


def _describe(label: str, rules: CacheRules) -> str:
    name = label.split(" (", 1)[0]
    if rules.kind == "explicit":
        return (
            f"{name}: breakpoints from {rules.min_tokens:,} tokens, writes "
            f"{rules.write_multiplier:g}x (5 min) / {rules.long_write_multiplier:g}x (1 h), "
            f"reads {rules.read_multiplier:g}x"
        )
    return (
        f"{name}: automatic from {rules.min_tokens:,} tokens in steps of {rules.granularity}, "
        f"{rules.ttl / 60:.0f} min, reads {rules.read_multiplier:.2g}x"
    )


def _through_pipeline(
    tmp: Path,
    sessions: Sequence[Session],
    rules: Sequence[RuleSet],
    counter: TokenCounter,
    args: argparse.Namespace,
) -> tuple[str, list[dict[str, Any]], list[str]]:
    """The sessions through `run_turn` on Django in `tmp`."""
    repo = tmp / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=False, capture_output=True)
    subprocess.run(["git", "-C", str(repo), "config", "gc.auto", "0"], check=False)
    setup_django(repo, tmp / "data")
    # Lazy: it imports chat's models, which load only once Django is set up on `repo`.
    from bench.cache import replay

    fake = model_facts(replay.MODEL, model_info)[0]
    mode, first_tools = getattr(args, "mcp", None), []

    def replayed(session: Session, strategy: str, facts: ModelFacts | None) -> Recording:
        recording = replay.replay_through_turns(
            session, strategy, repo, acting_as(fake, facts) if facts else None
        )
        if not first_tools and recording.sent:
            first_tools.append(recording.sent[0].tools)
        return recording

    with mcp_attached(mode, tmp / "data"):
        tables, data = run_sessions(replayed, sessions, rules, counter, args.out)
    close_database()
    line = tools_line(mode, first_tools[0] if first_tools else None, counter)
    return tables, data, [replay.LIMITATIONS, line]
