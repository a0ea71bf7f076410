"""Scripted chat sessions for the cache benchmark, generated deterministically.

`file_edit_session`: 40 turns, 5 selected files of ~4k tokens that stay selected, one of
them edited on disk every third turn (a function body changes). `selection_session`:
files added and dropped along the way, long answers, an image, and one pause longer than
the provider cache's lifetime. `pause_session`: the gaps between turns drawn from a seeded
distribution of how people pause (most under a minute, some 5-20 minutes, a few over an
hour). `switching_session`: the selection changes every other turn. `long_session`: 120
turns that cross a compaction trigger again and again. Text is synthetic but code-shaped,
so token counts are realistic. Non-goal: realistic model answers.
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass, field
from pathlib import Path

TURN_SECONDS = 60.0
START_TIME = 1_000_000.0  # the fake clock at the start of a replay


@dataclass(frozen=True)
class Turn:
    user: str
    answer: str
    edits: dict[str, str] = field(default_factory=dict)  # path -> new content
    add: tuple[str, ...] = ()
    drop: tuple[str, ...] = ()
    image: tuple[int, int] | None = None  # width, height
    pause: float = 0.0  # extra seconds before this turn
    gap: float | None = None  # seconds since the previous turn, when not the usual rhythm

    @property
    def seconds_before(self) -> float:
        return self.gap if self.gap is not None else TURN_SECONDS + self.pause


@dataclass(frozen=True)
class Session:
    name: str
    files: dict[str, str]  # every file the session ever uses, initial content
    selected: tuple[str, ...]  # selected before the first turn
    turns: tuple[Turn, ...]
    compaction_trigger: int | None = None  # history tokens; None: the session never compacts


_WORDS = [
    "request",
    "cache",
    "prefix",
    "token",
    "budget",
    "handler",
    "parser",
    "session",
    "module",
    "record",
    "index",
    "value",
    "result",
    "config",
    "window",
    "message",
    "history",
    "layout",
    "render",
    "stream",
    "counter",
    "update",
    "version",
]


def _function(rng: random.Random, name: str, lines: int) -> str:
    body = []
    for i in range(lines):
        a, b = rng.choice(_WORDS), rng.choice(_WORDS)
        body.append(f"    {a}_{i} = {b}.get({rng.randint(0, 999)!r}) or compute_{a}({b}_{i})")
    return f"def {name}(self, {rng.choice(_WORDS)}):\n" + "\n".join(body) + "\n    return None\n"


def make_file(seed: int, functions: int = 40) -> str:
    rng = random.Random(seed)
    header = f'"""Module {seed}: synthetic code for the cache benchmark."""\n\nimport os\n\n'
    return header + "\n\n".join(_function(rng, f"step_{i}", 6) for i in range(functions))


def edit_file(text: str, seed: int) -> str:
    """Rewrite one function's body, as an edit on disk would."""
    rng = random.Random(seed)
    parts = text.split("\n\ndef ")
    index = rng.randrange(1, len(parts))
    name = parts[index].split("(", 1)[0]
    parts[index] = _function(rng, name, 6)[len("def ") :].rstrip("\n")
    return "\n\ndef ".join(parts) + ("" if text.endswith("\n") else "")


def prose(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(words)).capitalize() + "."


def file_edit_session(turns: int = 40) -> Session:
    rng = random.Random(7)
    paths = [f"src/module_{i}.py" for i in range(5)]
    current = {p: make_file(i) for i, p in enumerate(paths)}
    script = []
    for t in range(turns):
        edits = {}
        if t > 0 and t % 3 == 0:
            path = paths[rng.randrange(len(paths))]
            current[path] = edit_file(current[path], seed=1000 + t)
            edits[path] = current[path]
        script.append(Turn(user=prose(rng, 40), answer=prose(rng, 300), edits=edits))
    files = {p: make_file(i) for i, p in enumerate(paths)}
    return Session("file edits", files, tuple(paths), tuple(script))


def selection_session(turns: int = 40) -> Session:
    rng = random.Random(11)
    paths = [f"pkg/part_{i}.py" for i in range(8)]
    files = {p: make_file(100 + i, functions=30) for i, p in enumerate(paths)}
    current = dict(files)
    script = []
    for t in range(turns):
        add = (paths[5 + (t // 10) % 3],) if t in (8, 18, 28) else ()
        drop = (paths[t // 10],) if t in (12, 22) else ()
        edits = {}
        if t > 0 and t % 5 == 0:
            path = paths[rng.randrange(3, 5)]
            current[path] = edit_file(current[path], seed=2000 + t)
            edits[path] = current[path]
        answer_words = 1200 if t % 4 == 1 else 250
        script.append(
            Turn(
                user=prose(rng, 30),
                answer=prose(rng, answer_words),
                edits=edits,
                add=add,
                drop=drop,
                image=(1600, 1000) if t == 15 else None,
                pause=400.0 if t == 25 else 0.0,
            )
        )
    return Session("selection changes", files, tuple(paths[:5]), tuple(script))


def pause_gap(rng: random.Random) -> float:
    """Seconds between two turns: 70% under a minute, 22% 5-20 minutes, 8% 1-3 hours."""
    draw = rng.random()
    if draw < 0.70:
        return rng.uniform(15.0, 60.0)
    if draw < 0.92:
        return rng.uniform(300.0, 1200.0)
    return rng.uniform(3600.0, 3 * 3600.0)


def pause_session(turns: int = 40) -> Session:
    rng = random.Random(31)
    paths = [f"lib/unit_{i}.py" for i in range(4)]
    files = {p: make_file(400 + i) for i, p in enumerate(paths)}
    current = dict(files)
    script = []
    for t in range(turns):
        edits = {}
        if t > 0 and t % 4 == 0:
            path = paths[rng.randrange(len(paths))]
            current[path] = edit_file(current[path], seed=3000 + t)
            edits[path] = current[path]
        gap = pause_gap(rng)
        script.append(Turn(prose(rng, 40), prose(rng, 300), edits=edits, gap=gap))
    return Session("long pauses", files, tuple(paths), tuple(script))


def switching_session(turns: int = 40) -> Session:
    """Ten files; every other turn one is added or dropped, so four to six stay selected."""
    rng = random.Random(41)
    paths = [f"web/view_{i}.py" for i in range(10)]
    files = {p: make_file(500 + i, functions=25) for i, p in enumerate(paths)}
    selected = list(paths[:5])
    script = []
    for t in range(turns):
        add: tuple[str, ...] = ()
        drop: tuple[str, ...] = ()
        if t % 2 == 1:
            if len(selected) > 4 and (len(selected) == 6 or rng.random() < 0.5):
                drop = (selected.pop(rng.randrange(len(selected))),)
            else:
                add = (rng.choice([p for p in paths if p not in selected]),)
                selected.append(add[0])
        script.append(Turn(prose(rng, 40), prose(rng, 300), add=add, drop=drop))
    return Session("selection switching", files, tuple(paths[:5]), tuple(script))


def long_session(turns: int = 120, trigger: int = 12_000) -> Session:
    """Three selected files and steady talk: the history grows ~700 tokens a turn."""
    rng = random.Random(23)
    paths = [f"app/part_{i}.py" for i in range(3)]
    files = {p: make_file(300 + i, functions=25) for i, p in enumerate(paths)}
    script = tuple(
        Turn(user=prose(rng, 60), answer=prose(rng, 420 if t % 5 else 900)) for t in range(turns)
    )
    return Session("long session with compaction", files, tuple(paths), script, trigger)


def write_file(root: Path, path: str, text: str, when: float) -> None:
    """Write `text` with mtime `when` (the fake clock), as an editor saving at that time."""
    full = root / path
    full.parent.mkdir(parents=True, exist_ok=True)
    full.write_text(text)
    os.utime(full, ns=(int(when * 1e9), int(when * 1e9)))
