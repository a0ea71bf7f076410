"""The text the model was shown: each redacted value replaced by its marker.

The matcher works on this text only, so what an edit is told depends on the marker and
never on the value behind it: a guessed value is "not found" whether the guess is right or
wrong. `view` builds it from a file's text and the caller's `hide` (spans and markers);
`touches` and `overlaps` say whether an edit reaches a marker, which is refused with the
one `REDACTED_REFUSAL`; `View.to_real` turns an edited shown text back into the file's
text, putting each value back in its place. Invariant: an edit never adds, removes or moves
a marker, so the k-th marker of the result stands for the k-th value of the file. A marker
string the file holds as plain text is treated as a marker too (refusing more, never less).
Non-goals: finding the values (the caller's `hide`), redacting what the model reads.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass

Hide = Callable[[str], Sequence[tuple[int, int, str]]]

REDACTED_REFUSAL = (
    "the edit reaches a value that was shown as a [redacted: …] marker; acdc never matches, "
    "changes or moves a redacted value, so nothing was changed. Leave the marker and the "
    "lines holding it out of the old and new text, or ask the person to change that value."
)


@dataclass(frozen=True)
class View:
    real: str
    shown: str
    markers: frozenset[str] = frozenset()
    # For each marker string found in `shown`, in order: the real value it stands for, or
    # None where the file itself holds the marker string.
    values: tuple[tuple[str, str | None], ...] = ()
    opaque: bool = False  # the markers could not be told apart: refuse every edit

    def to_real(self, shown_after: str) -> str | None:
        """The file's text for an edited shown text; None when a marker was added, lost or
        moved, which no allowed edit does."""
        if not self.markers:
            return shown_after
        found = list(_pattern(self.markers).finditer(shown_after))
        if self.opaque or [m.group(0) for m in found] != [marker for marker, _ in self.values]:
            return None
        parts, previous = [], 0
        for match, (_, value) in zip(found, self.values, strict=True):
            parts += [
                shown_after[previous : match.start()],
                match.group(0) if value is None else value,
            ]
            previous = match.end()
        parts.append(shown_after[previous:])
        return "".join(parts)


def view(text: str, hide: Hide | None) -> View:
    """The shown text of `text`: every span `hide` names replaced by its marker."""
    spans = sorted(hide(text)) if hide is not None else []
    if not spans:
        return View(text, text)
    parts, previous, inserted, values = [], 0, {}, {}
    opaque = False
    length = 0
    for start, end, marker in spans:
        if not (previous <= start < end <= len(text)) or not marker:
            opaque = True  # overlapping or out of range: no mapping can be trusted
            break
        parts.append(text[previous:start])
        length += start - previous
        inserted[length] = marker
        values[length] = text[start:end]
        parts.append(marker)
        length += len(marker)
        previous = end
    parts.append(text[previous:])
    shown = "".join(parts)
    markers = frozenset(marker for _, _, marker in spans if marker)
    found = list(_pattern(markers).finditer(shown)) if markers else []
    starts = {m.start(): m.group(0) for m in found}
    opaque = opaque or any(starts.get(at) != marker for at, marker in inserted.items())
    pairs = tuple((m.group(0), values.get(m.start())) for m in found)
    return View(text, shown, markers, pairs, opaque)


def touches(text: str, markers: Collection[str]) -> bool:
    """Whether `text` holds a marker."""
    return any(marker in text for marker in markers)


def overlaps(shown: str, markers: Collection[str], spans: Iterable[tuple[int, int]]) -> bool:
    """Whether any of `spans` of `shown` covers part of a marker."""
    if not markers:
        return False
    places = [m.span() for m in _pattern(markers).finditer(shown)]
    return any(s < me and ms < e for s, e in spans for ms, me in places)


def _pattern(markers: Collection[str]) -> re.Pattern[str]:
    return re.compile("|".join(re.escape(m) for m in sorted(markers, key=len, reverse=True)))
