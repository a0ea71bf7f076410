"""The judge's own rules for what an edit in the corpus should become, kept apart from the
matcher under test: whether a quote stands once as whole lines, whether pieces quoted around
a `...` tell one place, where a text stands as whole words. The generators
(`bench.edits.cases`, `bench.edits.drift`) use them to set expectations; nothing
here is acdc's code. Non-goals: matching with drift (each generator gives its own key).
"""

from __future__ import annotations

from collections.abc import Callable

Key = Callable[[str], str]


def indent_of(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def runs(lines: list[str], quoted: list[str], key: Key = lambda s: s) -> int:
    """How many times `quoted` stands as whole lines in `lines`, compared by `key`."""
    keys, size = [key(q) for q in quoted], len(quoted)
    firsts = [k for k, line in enumerate(lines[: len(lines) - size + 1]) if key(line) == keys[0]]
    return sum([key(line) for line in lines[k : k + size]] == keys for k in firsts)


def elision_is_determined(lines: list[str], at: int, first: list[str], last: list[str]) -> bool:
    """Whether pieces quoted around a `...` tell one place: `first` once in the file (it is
    at `at`), and `last` once in the whole file, or once after `first` before the code
    leaves their block (a line shallower than the pieces). The judge's own rule, kept apart
    from the matcher's."""
    size, span = len(first), len(last)
    if sum(lines[k : k + size] == first for k in range(len(lines))) != 1:
        return False
    places = [k for k in range(len(lines)) if lines[k : k + span] == last]
    if len(places) == 1:
        return places[0] >= at + size
    least = min(indent_of(line) for line in [*first, *last] if line.strip())
    rest = range(at + size, len(lines))
    end = next((k for k in rest if lines[k].strip() and indent_of(lines[k]) < least), len(lines))
    return sum(at + size <= k <= end - span for k in places) == 1


def is_word(char: str) -> bool:
    return char.isalnum() or char == "_"


def whole_words(text: str, part: str) -> int:
    """Where `part` stands in `text` with no word going on before or after it."""
    count, at = 0, text.find(part)
    while at != -1:
        end = at + len(part)
        inside = (at > 0 and is_word(text[at - 1])) or (end < len(text) and is_word(text[end]))
        count += not inside
        at = text.find(part, at + 1)
    return count
