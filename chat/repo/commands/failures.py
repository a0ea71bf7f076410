"""Which lines of a long command output a person reads first, and the cut that keeps them.

`ranked` gives each line of a test runner's output a rank: the summary (pytest's "short
test summary info" and "N failed, M passed", mocha's "N passing / N failing", jest's and
vitest's "Tests:" lines, go's "FAIL pkg", cargo's "test result:", TAP's "# fail N"), then
the failures' names (pytest's FAILED lines, mocha's numbered titles after "N failing",
jest's "●", go's "--- FAIL:", cargo's "... FAILED", TAP's "not ok"), then the first lines
of each failure (round robin, so every failure gets its first line before any its
second), then any line saying error, fail, assert, panic or exception (unless it reports
a pass: "✔ should handle errors" is a passing test's name). `cut` keeps those
lines within about three quarters of the budget, best rank first, and spends what is left
on the head and the tail; lines stay in their order, a marker stands in each gap, and a
first line says what was cut and how many failure names did not fit. It works on lines
with their SGR colours (kept in `shown`, for the card) and measures their plain form (the
model's copy, `plain`). Non-goals: redaction (the caller's) and parsing any tool fully.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from contextcore.controls import printable

SUMMARY, NAME, FIRST_LINES, GENERIC = range(4)
FOLLOW = 3  # first lines kept per failure
KEY_LINE_BYTES = 300  # a key line longer than this shows its start
GAP_BYTES = 32  # what one gap's marker costs, at most
_SGR = re.compile(r"\x1b\[[0-9;:]*m")

_SUMMARY = re.compile(
    r"^=+ short test summary info =+$"
    r"|^=+ .*\b\d+ (?:failed|passed|errors?|error)\b.* =+$"  # pytest's last line
    r"|^\s*\d+ (?:passing|failing|pending)\b"  # mocha
    r"|^\s*(?:Tests|Test Suites|Test Files|Snapshots):?\s+\d+ "  # jest, vitest
    r"|^FAIL(?:\s+\S+\s+[\d.]+s|\s+\S+\s+\[.*\])?$"  # go: FAIL, FAIL pkg 0.1s
    r"|^test result: "  # cargo
    r"|^# (?:tests|pass|fail|cancelled|todo) \d+$"  # TAP (node --test)
    r"|^ℹ (?:tests|pass|fail) \d+$"  # node's spec reporter
)
_NAME = re.compile(
    r"^(?:FAILED|ERROR) \S"  # pytest's short summary
    r"|^\s*● \S"  # jest
    r"|^\s*(?:FAIL|×|✗|✖)\s+\S"  # vitest, node's spec reporter
    r"|^\s*--- FAIL: "  # go
    r"|^panic: "
    r"|^test \S+ \.\.\. FAILED$"  # cargo
    r"|^\s*not ok \d+ "  # TAP
)
# A failure's own header, whose next lines are its first lines.
_HEADER = re.compile(r"^_{3,} .+ _{3,}$|^---- \S+ stdout ----$")
_PYTEST_HEADER = re.compile(r"^_{3,} .+ _{3,}$")
_PYTEST_FIRST = re.compile(r"^(?:E\s|>\s|\S+:\d+: )")
_GO_FAIL = re.compile(r"^\s*--- FAIL: (\S+)")
# Not a failure's first line: a stack frame (JavaScript's, Java's), TAP's YAML furniture.
_NOT_FIRST = re.compile(
    r"^\s+at \S|^\s*(?:---|\.\.\.|duration_ms: .*|failureType: .*|error: [|>]-?)\s*$"
)
# A line reporting a pass, whatever its test's name says: mocha's and jest's ticks, pytest -v's
# PASSED, go's and cargo's and TAP's "ok".
_PASSED = re.compile(
    r"^\s*[✔✓√]\s|\sPASSED\b|^\s*--- PASS: |^ok\s+\S+\s+[\d.]+s$|\s\.\.\. ok$|^ok \d+\b"
)
_NOT_GENERIC = re.compile(f"{_NOT_FIRST.pattern}|{_PASSED.pattern}")
_MOCHA_FAILING = re.compile(r"^\s*\d+ failing\b")
_MOCHA_TITLE = re.compile(r"^\s*\d+\) \S")
_GENERIC = re.compile(
    r"\b(?:error|errors|fail|failed|failing|failure|failures|assert\w*|panic\w*|"
    r"exception|traceback)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Cut:
    shown: str  # with its colours, for the person's card
    plain: str  # what the model reads
    names_left_out: int


def ranked(lines: Sequence[str]) -> dict[int, tuple[int, int]]:
    """Line index -> (rank, order within the rank's pass) for the lines worth keeping;
    `lines` are plain, without their line breaks."""
    ranks: dict[int, tuple[int, int]] = {}
    failing = False
    for i, line in enumerate(lines):
        if _SUMMARY.search(line):
            ranks[i] = (SUMMARY, 0)
            failing = failing or bool(_MOCHA_FAILING.match(line))
        elif failing and _MOCHA_TITLE.match(line):
            end = _mocha_title_end(lines, i)
            ranks.update(dict.fromkeys(range(i, end + 1), (NAME, 0)))
            _follow(lines, end, ranks)
        elif _NAME.search(line):
            ranks[i] = (NAME, 0)
            _follow(lines, _go_run_line(lines, i), ranks)
        elif _HEADER.match(line):
            ranks[i] = (FIRST_LINES, 0)
            _follow(lines, i, ranks, _PYTEST_FIRST if _PYTEST_HEADER.match(line) else None)
        elif i not in ranks and _GENERIC.search(line) and not _NOT_GENERIC.search(line):
            ranks[i] = (GENERIC, 0)
    return ranks


def _mocha_title_end(lines: Sequence[str], start: int) -> int:
    """The last line of a numbered mocha title: its title path runs to a line ending ':'."""
    for i in range(start, min(start + 8, len(lines))):
        if lines[i].rstrip().endswith(":"):
            return i
    return start


def _go_run_line(lines: Sequence[str], at: int) -> int:
    """Where `go test -v` started the test that line `at` says failed ("=== RUN   Name"),
    since its log lines come before its "--- FAIL:"; else `at`."""
    found = _GO_FAIL.match(lines[at])
    if found:
        run = f"=== RUN   {found.group(1)}"
        for i in range(at - 1, max(at - 60, -1), -1):
            if lines[i].strip() == run:
                return i
    return at


def _follow(
    lines: Sequence[str], after: int, ranks: dict, only: re.Pattern[str] | None = None
) -> None:
    """The first FOLLOW lines after a failure's title (those matching `only`, if given)."""
    taken = 0
    for i in range(after + 1, min(after + 60, len(lines))):
        line = lines[i]
        if taken == FOLLOW or _SUMMARY.search(line) or _NAME.search(line) or _HEADER.match(line):
            return
        if _MOCHA_TITLE.match(line):
            return
        if line.strip() and (only.match(line) if only else not _NOT_FIRST.match(line)):
            if ranks.get(i, (GENERIC + 1,))[0] > FIRST_LINES:
                ranks[i] = (FIRST_LINES, taken)
            taken += 1


def cut(text: str, total: int, budget: int) -> Cut:
    """`text` (the output, with colours) cut to at most about `budget` bytes of plain text:
    the ranked lines, then the head and tail, in order, with a marker in each gap."""
    lines = text.splitlines(keepends=True) or [""]
    plains = [printable(line, colours=False) for line in lines]
    sizes = [len(p.encode()) for p in plains]
    ranks = ranked([p.rstrip("\r\n") for p in plains])
    first = _first_line(total, sum(1 for r in ranks.values() if r[0] == NAME))
    kept = _key_lines(ranks, sizes, budget * 3 // 4)
    clips = {i: (min(sizes[i], KEY_LINE_BYTES), False) for i in kept}
    runs = sum(1 for i in kept if i - 1 not in kept) + 2
    room = budget - len(first.encode()) - sum(c[0] for c in clips.values()) - runs * GAP_BYTES
    _ends(sizes, clips, max(room, 0))
    shown = {i for i, (size, _) in clips.items() if size >= min(sizes[i], KEY_LINE_BYTES)}
    left_out = sum(1 for i, r in ranks.items() if r[0] == NAME and i not in shown)
    first = _first_line(total, left_out)
    parts = [_render(lines, plains, clips, colours) for colours in (True, False)]
    return Cut(first + parts[0], first + parts[1], left_out)


def _key_lines(ranks: dict, sizes: Sequence[int], room: int) -> set[int]:
    """The best-ranked lines that fit in `room` bytes (a gap's marker counted where a
    line starts a new run)."""
    kept: set[int] = set()
    for i in sorted(ranks, key=lambda i: (*ranks[i], i)):
        alone = i - 1 not in kept and i + 1 not in kept
        size = min(sizes[i], KEY_LINE_BYTES) + (GAP_BYTES if alone else 0)
        if size <= room:
            kept.add(i)
            room -= size
    return kept


def _ends(sizes: Sequence[int], clips: dict[int, tuple[int, bool]], room: int) -> None:
    """Spend half of `room` on the head's lines, the rest on the tail's, until they meet;
    a line cut short keeps its start (head) or its end (tail)."""
    head: set[int] = set()
    left = room // 2
    for i in range(len(sizes)):
        if left <= 0:
            break
        if i not in clips:
            clips[i] = (min(sizes[i], left), False)
            left -= clips[i][0]
            head.add(i)
    left += room - room // 2
    for i in range(len(sizes) - 1, -1, -1):
        if left <= 0 or i in head:
            break
        if i not in clips:
            clips[i] = (min(sizes[i], left), True)
            left -= clips[i][0]


def _first_line(total: int, left_out: int) -> str:
    names = f" ({left_out:,} more failure names did not fit)" if left_out else ""
    return (
        f"[output cut: {total:,} bytes in all; shown: the lines that summarize what failed"
        f"{names}, then the first and the last lines; [… n lines cut] marks each gap]\n"
    )


def _render(lines: Sequence[str], plains: Sequence[str], clips: dict, colours: bool) -> str:
    out: list[str] = []
    last = -1
    for i in [*sorted(clips), len(lines)]:
        gap = range(last + 1, i)
        if len(gap) == 1 and len(plains[gap[0]]) < GAP_BYTES:  # cheaper than its marker
            out.append(lines[gap[0]] if colours else plains[gap[0]])
        elif gap:
            out.append(f"[… {len(gap):,} line{'s' if len(gap) > 1 else ''} cut]\n")
        if i == len(lines):
            break
        size, from_end = clips[i]
        line = _clip(lines[i] if colours else plains[i], size, tail=from_end)
        out.append(line if line.endswith("\n") else line + "\n")
        last = i
    return "".join(out)


def _clip(line: str, size: int, *, tail: bool = False) -> str:
    """`line` with at most `size` bytes of plain text (its colours do not count): its
    start, or its end when `tail`; "…" marks a cut."""
    pieces = _SGR.split(line)
    codes = _SGR.findall(line)
    if sum(len(p.encode()) for p in pieces) <= size:
        return line
    order = range(len(pieces) - 1, -1, -1) if tail else range(len(pieces))
    kept: dict[int, str] = {}
    left = max(size - 3, 0)
    for k in order:
        data = pieces[k].encode()
        taken = data[-left:] if tail and left else data[:left]
        kept[k] = taken.decode(errors="ignore")
        left -= len(taken)
    out = [kept[k] + (codes[k] if k < len(codes) else "") for k in range(len(pieces))]
    text = "".join(out)
    return "…" + text if tail else text.rstrip("\n") + "…\n"
