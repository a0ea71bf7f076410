"""The artifact trail: what acdc did in a session, one line an artifact, kept by acdc.

A summary loses first which files changed and which commands failed; the trail is not
written by a summarizer but rendered from the store (`chat.session.trail` reads it), and
goes into every request whose history was cut (a compaction, an emergency truncation, an
Endless view). Bounded: at most `TRAIL_LINES` lines of at most `LINE_CHARS` characters,
so it can never crowd the request; over the bound the oldest of the least important
artifacts (passing commands first) are left out and one line says how many.
Non-goals: reading rows (the chat's), where the trail goes in the request (assembly's).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from contextcore.controls import printable

TRAIL_LINES = 80  # artifacts shown at most; over it one more line counts the rest
LINE_CHARS = 160
HEADER = (
    "# Artifact trail\n"
    "Kept by acdc from what it did, not from a summary: the files changed in this "
    "session, the commands run and the messages pinned, oldest first. It holds even "
    "where the conversation above was compacted or cut."
)
# How much an artifact is worth keeping when the trail is over its bound.
PASSED, CHANGED, FAILED, PINNED = range(4)


@dataclass(frozen=True)
class Artifact:
    line: str  # its one line, as the model reads it
    weight: int = CHANGED  # PASSED < CHANGED < FAILED < PINNED


def clip(text: str, size: int = LINE_CHARS) -> str:
    """One printable line of at most `size` characters."""
    flat = " ".join(printable(text, colours=False).split())
    return flat if len(flat) <= size else flat[: size - 1] + "…"


def render(artifacts: Sequence[Artifact], limit: int = TRAIL_LINES) -> str:
    """The trail's text ("" for no artifact): `HEADER` and one line each, in order."""
    if not artifacts:
        return ""
    kept = set(range(len(artifacts)))
    if len(artifacts) > limit:
        ranked = sorted(range(len(artifacts)), key=lambda i: (artifacts[i].weight, i))
        kept -= set(ranked[: len(artifacts) - limit])
    lines = [f"- {clip(a.line)}" for i, a in enumerate(artifacts) if i in kept]
    left = len(artifacts) - len(kept)
    if left:
        lines.insert(0, f"- ({left} older artifact{'s' if left != 1 else ''} left out)")
    return HEADER + "\n\n" + "\n".join(lines)


def lines_of(text: str) -> list[str]:
    """The artifact lines of a rendered trail (for the HUD)."""
    body = text.split("\n\n", 1)[1] if "\n\n" in text else ""
    return [line[2:] for line in body.splitlines() if line.startswith("- ")]
