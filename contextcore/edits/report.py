"""What the model and the person read about edits: result lines and failure reports.

A result line is one short line per op (`applied: src/app.py v3→v4, +12 −3`): what the next
request carries instead of the file. A failure report says which edit failed and why, the
file's closest lines with their numbers, and which edits of the same batch applied, so the
next try can succeed. Closeness is a cheap similarity used only to report, never to apply.
Non-goals: diffs (`contextcore.edits.diff`), rendering for the page.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Sequence
from difflib import SequenceMatcher, get_close_matches

from contextcore.edits.blocks import EditBlock
from contextcore.edits.ops import EditResult, Outcome
from contextcore.edits.textshape import PUNCTUATION, ascii_punctuation, text_lines
from contextcore.paths import shown

CLOSEST_MAX_LINES = 8
CLOSEST_MIN_RATIO = 0.4


def result_line(result: EditResult, versions: tuple[int, int] | None = None) -> str:
    """One line for the next request; `versions` (before, after) when the caller knows them."""
    path = shown(result.op.path)
    if result.outcome is Outcome.APPLIED:
        version = f" v{versions[0]}→v{versions[1]}" if versions else ""
        what = {"create": "created", "delete": "deleted"}.get(result.pass_name, "applied")
        return f"{what}: {path}{version}, +{result.added} −{result.removed}"
    if result.outcome is Outcome.ALREADY_APPLIED:
        return f"already applied: {path}"
    return f"{result.outcome}: {path}: {result.reason}"


def failure_report(results: Sequence[EditResult], broken: Sequence[EditBlock] = ()) -> str:
    """The text sent back to the model when some edits of a batch did not apply, or some
    of its blocks could not be read; "" when everything applied."""
    failed = [r for r in results if not r.ok]
    if not failed and not broken:
        return ""
    parts = [
        f"The edit block at line {b.line} of the reply was not read: {b.error}." for b in broken
    ]
    for r in failed:
        parts.append(f"Edit {r.index + 1} of {len(results)}, {r.op.describe()}, {r.outcome}: ")
        parts[-1] += r.reason
        if r.closest:
            parts.append("The closest lines in the file are:\n" + r.closest)
    applied = [f"edit {r.index + 1} ({shown(r.op.path)})" for r in results if r.ok]
    if applied:
        parts.append("These edits of the same batch applied: " + ", ".join(applied) + ".")
    else:
        parts.append("No edit of this batch applied.")
    return "\n".join(parts)


def closest_lines(body: str, old: str) -> str:
    """The lines of `body` most like `old`, numbered; "" when nothing is alike. The longest
    line of `old` is looked for; the excerpt is aligned to where that line sits in `old`."""
    old_rows = text_lines(old)
    targets = [(j, _plain(row)) for j, row in enumerate(old_rows) if row.strip()]
    if not targets:
        return ""
    offset, target = max(targets, key=lambda t: len(t[1]))
    rows = body.split("\n")
    matcher = SequenceMatcher(None, autojunk=False)
    matcher.set_seq2(target)
    best, best_row, size = CLOSEST_MIN_RATIO, -1, len(target)
    tried: set[str] = set()  # a line like one already measured cannot do better
    # One translation of the whole text, not one per line: this runs on refusals of big files.
    for i, row in enumerate(ascii_punctuation(body).split("\n")):
        row = row.strip()
        length = len(row)
        if 2 * min(length, size) <= best * (length + size) or row in tried:
            continue  # even all of it alike would not beat the best
        tried.add(row)
        matcher.set_seq1(row)
        if matcher.quick_ratio() <= best:
            continue
        ratio = matcher.ratio()
        if ratio > best:
            best, best_row = ratio, i
    if best_row < 0:
        return ""
    start = max(0, best_row - offset)
    end = min(len(rows), start + min(max(len(old_rows), 3), CLOSEST_MAX_LINES))
    return "\n".join(f"{n + 1:>5} | {rows[n].rstrip()}" for n in range(start, end))


def _plain(line: str) -> str:
    return line.translate(PUNCTUATION).strip()


def similar_paths(path: str, paths: Iterable[str]) -> list[str]:
    """Existing paths the model may have meant: the same file name elsewhere, or close."""
    known = [p for p in paths if p != path]
    name = posixpath.basename(path)
    same_name = [p for p in known if posixpath.basename(p) == name]
    close = get_close_matches(path, known, n=3, cutoff=0.75)
    return list(dict.fromkeys([*same_name, *close]))[:3]
