"""The edits benchmark: acdc's matcher beside aider's and "exact text, first occurrence".

The corpus (`bench/edits/corpus/`) holds edits in the shapes models produce, each
with its expected outcome: 248 built over real files (`bench.edits.cases`) and the
hunks of real commits of flask and starlette with the drift models make, stale files and
token splits (`bench.edits.history`). Every matcher applies every edit to the same
file; an outcome is right when the file became the expected file (or, for an edit that must
be refused, stayed as it was, or became the file the model meant), wrong when the file
changed otherwise (a wrong place: the goal is 0), refused when it should have applied.
aider's matcher runs in its own venv, in one subprocess (`bench.edits.aider_runner`). Also
measured: the tokens the next request carries after an applied edit against the whole
file, and the time to apply one edit in a 1 MB file. Figures, never assertions.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.edits import aider_runner as edits_aider
from bench.edits.builder import CORPUS, apply_splice
from bench.report import QUICK_NOTE, machine, machine_line, markdown_table
from contextcore.edits import EditOp, Outcome, apply_edits, result_line, unified_diff
from contextcore.tokens import TokenCounter

GOAL_APPLY_MS = 50.0
TIMED = (
    ("exact", "exact"),
    ("indentation", "by the indentation pass"),
    ("not found", "refused after every pass, with the closest lines"),
)
RUNS = 7
USABLE_WORDS = (
    "does not exist",
    "'...'",
    "in place of real lines",
    "changed since",
    "longer word or number",
)
CORPORA = (("sources.jsonl", "cases.jsonl"), ("history_sources.jsonl", "history_cases.jsonl"))


@dataclass(frozen=True)
class Verdict:
    after: str  # the file after the edit (unchanged when nothing applied)
    ok: bool  # the matcher said the edit is in the file (applied or already there)
    usable: bool  # a refusal that says why and where, so a retry can succeed
    next_request: str = ""  # what the next request carries about the edit


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def load(folder: Path = CORPUS) -> tuple[dict[tuple[str, str], str], list[dict[str, Any]]]:
    sources: dict[tuple[str, str], str] = {}
    cases: list[dict[str, Any]] = []
    for source_file, case_file in CORPORA:
        if (folder / case_file).exists():
            sources |= {(r["file"], r["variant"]): r["text"] for r in _jsonl(folder / source_file)}
            cases += _jsonl(folder / case_file)
    return sources, cases


def acdc(case: dict[str, Any], disk: str, seen: str | None) -> Verdict:
    spec = case["op"]
    op = EditOp(
        spec["path"],
        "replace",
        spec["old_text"],
        spec["new_text"],
        base_sha256=case.get("base_sha256"),
    )
    batch = apply_edits([op], {case["file"]: disk}, seen={case["file"]: seen} if seen else None)
    result, after = batch.results[0], batch.texts.get(case["file"], disk)
    if result.outcome is Outcome.APPLIED:
        diff = unified_diff(case["file"], disk, after)
        return Verdict(after, True, False, result_line(result) + "\n" + diff)
    usable = bool(result.matches or result.closest) or any(
        word in result.reason for word in USABLE_WORDS
    )
    return Verdict(after, result.ok, not result.ok and usable)


def first_occurrence(case: dict[str, Any], disk: str, seen: str | None) -> Verdict:
    """`str.replace(old, new, 1)` on the named file: what many tools do."""
    spec = case["op"]
    if spec["path"] != case["file"] or spec["old_text"] not in disk:
        return Verdict(disk, False, False)
    return Verdict(disk.replace(spec["old_text"], spec["new_text"], 1), True, False)


def judge(case: dict[str, Any], disk: str, verdict: Verdict) -> str:
    """right | wrong (changed the file other than expected) | refused (should have applied)
    | refused-right (rightly left the file as it was)."""
    changed = verdict.after != disk
    after = _sha(verdict.after)
    if case["expected"] == "refused":
        if not changed:
            return "refused-right" if not verdict.ok else "wrong"
        return "right" if after == case.get("intended_sha256") else "wrong"
    if case["expected"] == "already":
        return "wrong" if changed else ("right" if verdict.ok else "refused")
    if not changed:
        return "refused"
    return "right" if after == case["expected_sha256"] else "wrong"


def aider_verdict(after: str | None, disk: str) -> Verdict:
    return Verdict(disk, False, False) if after is None else Verdict(after, True, False)


def run_corpus(sources, cases, aider: Path | None = None) -> dict[str, Any]:
    counter = TokenCounter("cl100k_base")
    rows: dict[str, list[tuple[dict[str, Any], str, Verdict]]] = {"acdc": [], "plain": []}
    tokens, jobs = [], []
    for case in cases:
        disk = apply_splice(sources[(case["file"], case["variant"])], case["splice"])
        seen = sources.get((case["file"], case["seen_variant"])) if case["seen_variant"] else None
        jobs.append((case, disk))
        for name, matcher in (("acdc", acdc), ("plain", first_occurrence)):
            verdict = matcher(case, disk, seen)
            rows[name].append((case, judge(case, disk, verdict), verdict))
            if name == "acdc" and verdict.next_request:
                whole = counter.count_text(verdict.after)
                tokens.append((counter.count_text(verdict.next_request), whole))
    aider_note = "not installed"
    if aider is not None:
        try:
            ran = edits_aider.run(aider, jobs)
        except edits_aider.AiderUnavailable as exc:
            aider_note = f"not run: {exc}"
        else:
            aider_note = f"aider-chat {ran.version}"
            rows["aider"] = [
                (case, judge(case, disk, v), v)
                for case, disk in jobs
                for v in [aider_verdict(ran.afters[case["id"]], disk)]
            ]
    counted = (
        "~4 characters per token (tiktoken unavailable)" if counter.uses_fallback else "cl100k_base"
    )
    return {"rows": rows, "tokens": tokens, "counted": counted, "aider": aider_note}


def summary(rows) -> dict[str, dict[str, Any]]:
    out = {}
    for name, judged in rows.items():
        counts = Counter(j for _, j, _ in judged)
        refusals = [v for _, j, v in judged if j in ("refused", "refused-right")]
        out[name] = {
            "cases": len(judged),
            "applied_right": counts["right"],
            "refused_right": counts["refused-right"],
            "wrong": counts["wrong"],
            "refused_missed": counts["refused"],
            "refusals": len(refusals),
            "refusals_usable": sum(v.usable for v in refusals),
            "by_shape": {
                shape: Counter(j for c, j, _ in judged if c["shape"] == shape)
                for shape in dict.fromkeys(c["shape"] for c, _, _ in judged)
            },
        }
    return out


def big_file_times(sources, runs: int) -> dict[str, float]:
    """Median ms to apply one edit in a 1 MB file: exact, by the indentation pass, and a
    failure (every pass tried, closest lines looked up)."""
    plain = [text for (_, variant), text in sorted(sources.items()) if variant == "plain"]
    parts, size, n = [], 0, 0
    while size < 1_000_000:
        part = f"# part {n}\n" + plain[n % len(plain)]
        parts.append(part)
        size, n = size + len(part), n + 1
    middle = len(parts) // 2
    parts.insert(middle, "class Marker:\n    def edited(self):\n        return 'marker'\n")
    text = "".join(parts)
    ops = {
        "exact": EditOp("big.py", "replace", "        return 'marker'\n", "        return 1\n"),
        "indentation": EditOp(
            "big.py",
            "replace",
            "def edited(self):\n    return 'marker'\n",
            "def edited(self):\n    return 2\n",
        ),
        "not found": EditOp("big.py", "replace", "def edited(self, other):\n", "x\n"),
    }
    times: dict[str, Any] = {"size_bytes": len(text.encode("utf-8"))}
    for name, op in ops.items():
        wall, cpu = [], []
        for _ in range(runs):
            start, start_cpu = time.perf_counter(), time.process_time()
            apply_edits([op], {"big.py": text})
            wall.append((time.perf_counter() - start) * 1000)
            cpu.append((time.process_time() - start_cpu) * 1000)
        times[name] = round(statistics.median(wall), 2)
        times[name + " cpu"] = round(statistics.median(cpu), 2)
    return times


def _pct(n: int, total: int) -> str:
    return f"{n} ({100 * n / total:.1f}%)" if total else "0"


NAMES = {
    "acdc": "acdc (exact, unique; tolerant passes; merges; pieces)",
    "aider": "aider's SEARCH/REPLACE matcher",
    "plain": "exact text, first occurrence",
}
SHORT = {"acdc": "acdc", "aider": "aider", "plain": "first occurrence"}
MAIN_HEADER = [
    "matcher",
    "applied correctly",
    "rightly refused",
    "applied at a wrong place",
    "refused, should have applied",
    "refusals with a usable reason",
]
REAL = ("real:", "token split:")


def _main_table(stats: dict[str, dict[str, Any]], aider_note: str) -> str:
    rows = []
    for key, label in NAMES.items():
        if key not in stats:
            rows.append([f"{label} ({aider_note})", *["—"] * 5])
            continue
        s, total = stats[key], stats[key]["cases"]
        counts = ("applied_right", "refused_right", "wrong", "refused_missed")
        usable = f"{s['refusals_usable']} of {s['refusals']}" if key == "acdc" else "—"
        rows.append([label, *(_pct(s[c], total) for c in counts), usable])
    return markdown_table(MAIN_HEADER, rows, "lrrrrr")


def _cells(counts: Counter | None) -> list[str]:
    if counts is None:
        return ["—"] * 3
    right = counts["right"] + counts["refused-right"]
    return [str(right), str(counts["wrong"]), str(counts["refused"])]


def _shape_table(stats: dict[str, dict[str, Any]]) -> str:
    """Per shape, for each matcher: correct / applied at a wrong place / refused where it
    should have applied; then the totals of the synthetic and the real-history corpus."""
    header = ["shape", "cases"]
    for key in NAMES:
        name = SHORT[key]
        header += [f"{name} correct", f"{name} wrong", f"{name} refused"]
    shapes = list(stats["acdc"]["by_shape"])
    groups = {
        "all synthetic": [s for s in shapes if not s.startswith(REAL)],
        "all real history and token splits": [s for s in shapes if s.startswith(REAL)],
        "all": shapes,
    }
    rows = []
    for label, members in [*((s, [s]) for s in shapes), *groups.items()]:
        if not members:
            continue
        row = [f"**{label}**" if label in groups else label]
        row.append(str(sum(sum(stats["acdc"]["by_shape"][s].values()) for s in members)))
        for key in NAMES:
            by_shape = stats.get(key, {}).get("by_shape")
            total = sum((by_shape[s] for s in members), Counter()) if by_shape else None
            row += _cells(total)
        rows.append(row)
    return markdown_table(header, rows, "l" + "r" * (len(header) - 1))


def run(args: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    info = machine()
    sources, cases = load()
    if args.quick:
        cases = cases[::5]
    corpus = run_corpus(sources, cases, edits_aider.interpreter(args.aider))
    stats = summary(corpus["rows"])
    carried = [t for t, _ in corpus["tokens"]]
    whole = [w for _, w in corpus["tokens"]]
    times = big_file_times(sources, 3 if args.quick else RUNS)
    lines = [
        "## acdc bench edits",
        "",
        machine_line(info),
        "",
        f"{len(cases)} edits over {len({c['file'] for c in cases})} real source files "
        "(bench/edits/corpus; the `real:` and `token split:` shapes are hunks of "
        "commits of pallets/flask and encode/starlette); correct means the file became "
        "exactly the expected file, or stayed as it was when the edit must be refused (or "
        "became the file the model meant); wrong means it changed otherwise. A usable reason "
        "names the lines that matched, the closest lines with their numbers, or the cause "
        "(a missing path, lines elided with `...`, a file changed since it was read, a match "
        f"inside a longer word). aider: {corpus['aider']}, run on the same cases in one "
        "subprocess of its own venv.",
        "",
        _main_table(stats, corpus["aider"]),
        "",
        _shape_table(stats),
        "",
        f"Tokens counted with {corpus['counted']}, over the {len(carried)} edits acdc applied:",
        "",
        "| after an applied edit, the next request carries | tokens, total | median per edit |",
        "| --- | ---: | ---: |",
        f"| a result line and the unified diff | {sum(carried)} | {statistics.median(carried) if carried else 0} |",  # noqa: E501
        f"| the whole file again | {sum(whole)} | {statistics.median(whole) if whole else 0} |",
        "",
        f"One edit in a {times['size_bytes'] / 1e6:.2f} MB file, median of "
        f"{3 if args.quick else RUNS} runs, wall (CPU) (goal: ≤ {GOAL_APPLY_MS:.0f} ms): "
        + "; ".join(f"{label} {times[key]} ms ({times[key + ' cpu']} ms)" for key, label in TIMED)
        + ".",
    ]
    if args.quick:
        lines += ["", QUICK_NOTE]
    data = {
        "machine": info,
        "aider": corpus["aider"],
        "stats": stats,
        "tokens": {"carried": sum(carried), "whole_file": sum(whole), "edits": len(carried)},
        "big_file_ms": times,
    }
    return "\n".join(lines) + "\n", json.loads(json.dumps(data, default=dict))
