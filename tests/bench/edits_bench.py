"""The edits benchmark: acdc's matcher against "exact text, first occurrence" on a fixed corpus.

The corpus (`tests/bench/edits_corpus/`, written by `tests.bench.edits_cases`) holds 240
edits in the shapes models produce, over real files, each with its expected outcome. Both
matchers apply every edit; an outcome is right when the file became the expected file (or,
for an edit that must be refused, stayed as it was). Also measured: the tokens the next
request carries after an applied edit (result line and unified diff) against the whole file,
and the time to apply one edit in a 1 MB file. Figures, never assertions.
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

from contextcore.edits import EditOp, Outcome, apply_edits, result_line, unified_diff
from contextcore.tokens import TokenCounter
from tests.bench.edits_cases import CORPUS, apply_splice
from tests.bench.report import QUICK_NOTE, machine, machine_line, markdown_table

GOAL_APPLY_MS = 50.0
TIMED = (
    ("exact", "exact"),
    ("indentation", "by the indentation pass"),
    ("not found", "refused after every pass, with the closest lines"),
)
RUNS = 7
USABLE_WORDS = ("does not exist", "stands for lines", "in place of real lines", "changed since")


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
    sources = {(r["file"], r["variant"]): r["text"] for r in _jsonl(folder / "sources.jsonl")}
    return sources, _jsonl(folder / "cases.jsonl")


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


def run_corpus(sources, cases) -> dict[str, Any]:
    counter = TokenCounter("cl100k_base")
    rows: dict[str, list[tuple[dict[str, Any], str, Verdict]]] = {"acdc": [], "plain": []}
    tokens = []
    for case in cases:
        disk = apply_splice(sources[(case["file"], case["variant"])], case["splice"])
        seen = sources.get((case["file"], case["seen_variant"])) if case["seen_variant"] else None
        for name, matcher in (("acdc", acdc), ("plain", first_occurrence)):
            verdict = matcher(case, disk, seen)
            rows[name].append((case, judge(case, disk, verdict), verdict))
            if name == "acdc" and verdict.next_request:
                whole = counter.count_text(verdict.after)
                tokens.append((counter.count_text(verdict.next_request), whole))
    counted = (
        "~4 characters per token (tiktoken unavailable)" if counter.uses_fallback else "cl100k_base"
    )
    return {"rows": rows, "tokens": tokens, "counted": counted}


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


NAMES = {"acdc": "acdc (exact, unique; tolerant passes)", "plain": "exact text, first occurrence"}
MAIN_HEADER = [
    "matcher",
    "applied correctly",
    "rightly refused",
    "applied at a wrong place",
    "refused, should have applied",
    "refusals with a usable reason",
]
SHAPE_HEADER = [
    "shape",
    "cases",
    "acdc right",
    "first occurrence right",
    "acdc wrong",
    "first occurrence wrong",
]


def _main_table(stats: dict[str, dict[str, Any]]) -> str:
    rows = []
    for key, label in NAMES.items():
        s, total = stats[key], stats[key]["cases"]
        counts = ("applied_right", "refused_right", "wrong", "refused_missed")
        usable = f"{s['refusals_usable']} of {s['refusals']}"
        rows.append([label, *(_pct(s[c], total) for c in counts), usable])
    return markdown_table(MAIN_HEADER, rows, "lrrrrr")


def _shape_table(stats: dict[str, dict[str, Any]]) -> str:
    rows = []
    for shape, ours in stats["acdc"]["by_shape"].items():
        plain = stats["plain"]["by_shape"][shape]
        right = [str(c["right"] + c["refused-right"]) for c in (ours, plain)]
        rows.append(
            [shape, str(sum(ours.values())), *right, str(ours["wrong"]), str(plain["wrong"])]
        )
    return markdown_table(SHAPE_HEADER, rows, "lrrrrr")


def run(args: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    info = machine()
    sources, cases = load()
    if args.quick:
        cases = cases[::5]
    corpus = run_corpus(sources, cases)
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
        "(tests/bench/edits_corpus); right means the file became exactly the expected file, "
        "or stayed as it was when the edit must be refused. A usable reason names the lines "
        "that matched, the closest lines with their numbers, or the cause (a missing path, "
        "lines elided with `...`, a file changed since it was read).",
        "",
        _main_table(stats),
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
        "stats": stats,
        "tokens": {"carried": sum(carried), "whole_file": sum(whole), "edits": len(carried)},
        "big_file_ms": times,
    }
    return "\n".join(lines) + "\n", json.loads(json.dumps(data, default=dict))
