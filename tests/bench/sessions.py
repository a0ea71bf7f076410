"""Scripted chat sessions for the cache benchmark, generated deterministically.

`file_edit_session`: 40 turns, 5 selected files of ~4k tokens that stay selected, one of
them edited on disk every third turn (a function body changes). `selection_session`:
files added and dropped along the way, long answers, an image, and one pause longer than
the provider cache's lifetime. Text is synthetic but code-shaped, so token counts are
realistic. Non-goal: realistic model answers.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

TURN_SECONDS = 60.0


@dataclass(frozen=True)
class Turn:
    user: str
    answer: str
    edits: dict[str, str] = field(default_factory=dict)  # path -> new content
    add: tuple[str, ...] = ()
    drop: tuple[str, ...] = ()
    image: tuple[int, int] | None = None  # width, height
    pause: float = 0.0  # extra seconds before this turn


@dataclass(frozen=True)
class Session:
    name: str
    files: dict[str, str]  # every file the session ever uses, initial content
    selected: tuple[str, ...]  # selected before the first turn
    turns: tuple[Turn, ...]


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
