"""Project instructions: the repository's own notes to the model (AGENTS.md, CLAUDE.md, …).

`Instructions` is what one session sends of them: the files in order, each capped to a
token allowance (a file cut short ends with a note saying so), plus what was found but not
sent (switched off for the session, or refused by the repository boundary) for the HUD.
`text()` is the block that follows the system prompt in the system message: the same files
give the same bytes, so the cached prefix holds until a file changes on disk.
Non-goals: finding or reading the files (chat.repo.instructions), the boundary itself.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

HEADER = (
    "\n\n# Project instructions\n"
    "The repository's own instructions for working in it. Follow them unless the user "
    "asks otherwise."
)


@dataclass(frozen=True)
class InstructionFile:
    name: str  # repo-relative path
    text: str  # as sent, a cap note included
    tokens: int = 0  # of the whole file on disk
    capped: bool = False


@dataclass(frozen=True)
class Instructions:
    files: tuple[InstructionFile, ...] = ()
    switched_off: tuple[str, ...] = ()  # found, but off for this session
    refused: tuple[tuple[str, str], ...] = ()  # (name, reason) the boundary kept back
    # What the files were on disk just before they were read (the caller's mark, compared
    # and never parsed): a figure drawn from these is out of date once the disk's differs.
    seen: str = ""

    def text(self) -> str:
        """The block appended to the system prompt ("" when nothing is sent)."""
        if not self.files:
            return ""
        parts = [HEADER, *(f"\n\n## {f.name}\n\n{f.text.strip()}" for f in self.files)]
        return "".join(parts)

    def to_state(self) -> dict[str, Any]:
        return {
            "files": [[f.name, f.text, f.tokens, f.capped] for f in self.files],
            "switched_off": list(self.switched_off),
            "refused": [list(r) for r in self.refused],
            "seen": self.seen,
        }

    @classmethod
    def from_state(cls, state: Mapping[str, Any] | None) -> Instructions:
        state = state or {}
        files = tuple(
            InstructionFile(str(n), str(t), int(k), bool(c))
            for n, t, k, c in state.get("files", ())
        )
        return cls(
            files,
            tuple(state.get("switched_off", ())),
            tuple((str(n), str(r)) for n, r in state.get("refused", ())),
            str(state.get("seen", "")),
        )


def capped_file(
    name: str, text: str, count: Callable[[str], int], max_tokens: int
) -> InstructionFile:
    """`text` as one instruction file of at most about `max_tokens` tokens: a longer one is
    cut at a line break and ends with a note naming what was left out."""
    tokens = count(text)
    if tokens <= max_tokens:
        return InstructionFile(name, text, tokens)
    keep = len(text) * max_tokens // tokens
    while keep > 0 and count(text[:keep]) > max_tokens:
        keep = keep * 9 // 10
    cut = text.rfind("\n", 0, keep)
    kept = text[: cut if cut > keep // 2 else keep].rstrip()
    note = (
        f"\n\n[acdc: {name} was cut here: it holds about {tokens:,} tokens and at most "
        f"{max_tokens:,} are sent. The rest of the file is not in this prompt.]"
    )
    return InstructionFile(name, kept + note, tokens, capped=True)
