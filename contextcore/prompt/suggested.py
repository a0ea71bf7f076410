"""The "Suggested for this message" part of a request: code regions found for the message.

The chat ranks the repository for each message and hands the engine the best regions
(whole functions and classes, or the lines around a named identifier) of files nobody put
in the context; this module renders them. The part is per message, so it goes in the
request's uncached tail (after the history, like the artifact trail): it never moves the
cached prefix. It is the first thing a request over budget leaves out, before any history
or file: what the person chose always wins. Non-goals: ranking (the chat's), the budget
(`Region`s arrive fitted to it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

HEADER = (
    "# Suggested for this message\n"
    "Excerpts acdc found for this message in files that are not in the context (read "
    "only: ask for a file, or read it, before editing it). Each names its lines and why "
    "it was chosen."
)


@dataclass(frozen=True)
class Region:
    path: str
    name: str  # the definition it shows ("" for lines around a use)
    start: int  # 1-based, inclusive
    end: int
    text: str  # the lines as they are on disk
    why: tuple[str, ...] = ()  # the identifiers and words of the message that matched
    language: str = ""
    pinned: bool = False

    @property
    def key(self) -> str:
        """What a removal or a pin names: the file and the definition (lines move)."""
        return f"{self.path}::{self.name or self.start}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "name": self.name,
            "start": self.start,
            "end": self.end,
            "why": list(self.why),
            "key": self.key,
            "pinned": self.pinned,
        }


def region_block(region: Region) -> str:
    """One region as the model reads it: a heading line, then its lines fenced."""
    what = f" ({region.name})" if region.name else ""
    why = f"; matched: {', '.join(region.why)}" if region.why else ""
    fence = "````" if "```" in region.text else "```"
    body = region.text if region.text.endswith("\n") else region.text + "\n"
    head = f"{region.path} lines {region.start}-{region.end}{what}{why}"
    return f"{head}\n{fence}{region.language}\n{body}{fence}"


def render(regions: Sequence[Region]) -> str:
    """The part's text ("" for no region)."""
    if not regions:
        return ""
    return HEADER + "\n\n" + "\n\n".join(region_block(r) for r in regions)


@dataclass
class Suggested:
    """What the engine holds of this message's suggestions (set by the caller per turn)."""

    regions: tuple[Region, ...] = ()
    text: str = field(default="")

    @classmethod
    def of(cls, regions: Sequence[Region]) -> Suggested:
        return cls(tuple(regions), render(regions))

    def to_state(self) -> list[dict[str, Any]]:
        return [{**r.as_dict(), "text": r.text, "language": r.language} for r in self.regions]

    @classmethod
    def from_state(cls, state: Any) -> Suggested:
        """The saved regions (none for a state of another shape)."""
        try:
            return cls.of([_region(item) for item in state or ()])
        except (KeyError, TypeError, ValueError):
            return cls()


def _region(item: dict[str, Any]) -> Region:
    return Region(
        path=str(item["path"]),
        name=str(item["name"]),
        start=int(item["start"]),
        end=int(item["end"]),
        text=str(item["text"]),
        why=tuple(str(w) for w in item.get("why", ())),
        language=str(item.get("language", "")),
        pinned=bool(item.get("pinned")),
    )
