"""The localization part's markdown: recall by repository and overall, side by side.

One row per repository and one for all cases: acdc's request, BM25's pieces and aider's
map, each as `named / shown / lines` (means over the cases, so a repository counts by
its cases), and the average size of acdc's request, which both baselines were given.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bench.report import QUICK_NOTE, machine_line, markdown_table

CONTESTANTS = (
    ("acdc", "acdc's request"),
    ("bm25", "BM25, 40-line pieces"),
    ("aider", "aider's map"),
)


def _mean(rows: Sequence[dict[str, Any]], who: str, measure: str) -> float:
    values = [r[who][measure] for r in rows if who in r]
    return sum(values) / len(values) if values else float("nan")


def _triple(rows: Sequence[dict[str, Any]], who: str) -> str:
    if not any(who in r for r in rows):
        return "—"
    return " / ".join(f"{_mean(rows, who, m):.2f}" for m in ("named", "shown", "lines"))


def summary(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Means over `rows`, by contestant and measure, and the average request."""
    return {
        "cases": len(rows),
        "tokens": sum(r["tokens"] for r in rows) / max(len(rows), 1),
        **{
            who: {m: _mean(rows, who, m) for m in ("named", "shown", "lines")}
            for who, _ in CONTESTANTS
            if any(who in r for r in rows)
        },
    }


def _row(name: str, rows: Sequence[dict[str, Any]]) -> list[str]:
    tokens = sum(r["tokens"] for r in rows) / max(len(rows), 1)
    return [name, str(len(rows)), f"{tokens:,.0f}", *(_triple(rows, w) for w, _ in CONTESTANTS)]


def localization_markdown(data: dict[str, Any], quick: bool) -> str:
    rows = data["rows"]
    repos = list(dict.fromkeys(r["repo"] for r in rows))
    table = markdown_table(
        ["repository", "cases", "request tokens", *(label for _, label in CONTESTANTS)],
        [
            *(_row(repo, [r for r in rows if r["repo"] == repo]) for repo in repos),
            _row("**all**", rows),
        ],
        "lrrlll",
    )
    settings = ", ".join(f"{k}={v}" for k, v in data["settings"].items()) or "defaults"
    errors = sum("aider_error" in r for r in rows)
    aider = f"aider {data['aider']}" if data["aider"] else "aider's venv not found: left out"
    lines = [
        "## acdc bench context --part localization",
        "",
        "Does the first request for a fix's own commit message, no file ticked, hold what "
        "the fix changed? Each cell: `named / shown / lines` — the share of the fixed files "
        "whose path is in the text, of which it shows a changed line in a body (three "
        "consecutive lines of the file), and of the changed lines it shows so. BM25 and "
        "aider's map were given the token size of acdc's request, case by case.",
        f"Settings: {settings}; {aider}"
        + (f" ({errors} maps failed, counted empty)" if errors else "")
        + f". {machine_line(data['machine'])}; took {data['seconds']:.0f} s.",
        "",
        table,
        *(["", QUICK_NOTE] if quick else []),
    ]
    return "\n".join(lines)
