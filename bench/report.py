"""Writing benchmark results: the machine they were taken on, a markdown table and JSON.

Every benchmark prints its markdown to stdout and writes `<out>/<name>.md` and
`<out>/<name>.json` with the same figures, headed by the machine (CPU model, cores,
Python, platform) so numbers in docs/benchmarks.md can say where they came from. Non-goals:
comparing runs, plotting.
"""

from __future__ import annotations

import json
import math
import os
import platform
import statistics
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

QUICK_NOTE = "Quick run: sizes cut down to check the plumbing; the figures mean nothing."


def machine() -> dict[str, Any]:
    return {
        "cpu": _cpu_model(),
        "nproc": os.cpu_count() or 0,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "load_start": _LOAD_AT_START,
    }


def _load_average() -> str:
    try:
        return " / ".join(f"{v:.2f}" for v in os.getloadavg())
    except OSError:
        return "unknown"


# Each benchmark imports this module as it starts, and most ask `machine()` only as they
# write their report: the load they started under is the one read here.
_LOAD_AT_START = _load_average()


def _cpu_model() -> str:
    try:
        lines = Path("/proc/cpuinfo").read_text(errors="replace").splitlines()
    except OSError:
        return platform.processor() or "unknown"
    for line in lines:
        if line.lower().startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def machine_line(info: dict[str, Any]) -> str:
    """The machine, and its load average (1, 5, 15 min) when `machine()` was asked and now:
    the machines are shared, and a figure means little without what else ran beside it."""
    info.setdefault("load_end", _load_average())
    return (
        f"Machine: {info['cpu']}, {info['nproc']} cores, Python {info['python']}, "
        f"{info['platform']} ({info['date']}); load average (1, 5, 15 min) "
        f"{info.get('load_start', 'unknown')} at the start, {info['load_end']} at the end"
    )


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]], align: str) -> str:
    """`align` holds one character per column: `l` or `r`."""
    rule = ["---:" if a == "r" else "---" for a in align]
    lines = [header, rule, *rows]
    return "\n".join("| " + " | ".join(cells) + " |" for cells in lines)


def percentile(samples: Sequence[float], p: float) -> float:
    """Nearest-rank percentile (p in 0..100); the median for p=50 on odd counts."""
    if not samples:
        return 0.0
    if p == 50:
        return statistics.median(samples)
    ordered = sorted(samples)
    rank = max(1, min(len(ordered), math.ceil(p / 100 * len(ordered))))
    return ordered[rank - 1]


def write_results(out: Path, name: str, markdown: str, data: dict[str, Any]) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    md_path, json_path = out / f"{name}.md", out / f"{name}.json"
    md_path.write_text(markdown.rstrip("\n") + "\n", encoding="utf-8")
    json_path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return [md_path, json_path]
