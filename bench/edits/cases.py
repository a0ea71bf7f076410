"""The edits benchmark's corpus: edit blocks in the shapes models produce, built over real files.

Run once (`python -m bench.edits.cases`) to write `bench/edits/corpus/`:
`sources.jsonl` (real Python files copied from this repository and from Django, each also
rendered with CRLF endings, tab indentation and some trailing whitespace) and `cases.jsonl`
(one edit each, its expected outcome and the sha256 of the expected file). Each case starts
from a true change to logical lines; the expected file is that change written in the file's
own style, and the model's text is the change with the drift models show. Expectations are
built here by splicing lines, never by the matcher under test. The files are read from the
corpus's own plain copies when it has them, so a rerun rebuilds the same cases. Non-goal:
regenerating on each run. Real history's hunks are `bench.edits.history`'s; the cases that
went wrong in use, `bench.edits.reported`'s.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

from bench.edits.builder import (
    CORPUS,
    WORD,
    Builder,
    Change,
    apply_splice,
    curly,
    file_text,
    sha,
)
from bench.edits.expect import elision_is_determined, indent_of
from bench.edits.reported import reported


def _trailing_drift(old: list[str], new: Change, rng: random.Random):
    padded = {k for k, line in enumerate(old) if line.strip() and rng.random() < 0.6} or {0}
    old_lines = [line + " " * 2 if k in padded else line for k, line in enumerate(old)]
    return old_lines, [old_lines[k] if k is not None else t for t, k in new]


def _indent_drift(old: list[str], new: Change, rng: random.Random):
    least = min(indent_of(line) for line in old if line.strip())
    if rng.random() < 0.7:  # quoted from its own first column, as models quote a method
        shift = lambda line: line[least:] if line.strip() else ""  # noqa: E731
    else:
        shift = lambda line: "    " + line if line.strip() else ""  # noqa: E731
    return [shift(line) for line in old], [shift(t) for t, _ in new]


def _punctuation_drift(old: list[str], new: Change, rng: random.Random):
    return [curly(line) for line in old], [curly(t) for t, _ in new]


def _indented(window: list[str]) -> bool:
    return min(indent_of(line) for line in window if line.strip()) >= 4


def _quoted(window: list[str]) -> bool:
    return any('"' in line or "'" in line or " - " in line for line in window)


def _plain_quoted(window: list[str]) -> bool:
    return _quoted(window) and all(line.isascii() for line in window)


def substring_edits(b: Builder, count: int) -> None:
    """Part of one line, as edit_file calls often quote it: a unique run of 12+ characters
    (one that ends inside a word is no place: applied as meant or refused are both right)."""
    while count:
        key = b.key()
        i, [line] = b.window(key, 1)
        word = WORD.search(line)
        text = file_text(b.logical[key], "plain")
        part = line.strip()[: b.rng.randint(12, 40)]
        if not word or text.count(part) != 1 or word.group(0) not in part:
            continue
        new = part.replace(word.group(0), word.group(0) + "_v2", 1)
        meant = text.replace(part, new)
        rest = line.strip()[len(part) :]
        if rest and (rest[0].isalnum() or rest[0] == "_") and part[-1].isalnum():
            # The quote ends inside a word: no place in the file, whatever it meant.
            b.add("exact", key, "plain", part, new, intended_sha256=sha(meant))
        else:
            b.add("exact", key, "plain", part, new, expected_text=meant)
        count -= 1


def ambiguous(b: Builder, count: int) -> None:
    """A line that occurs more than once, quoted alone (as such, or without its indentation);
    `intended_sha256` is the file as changed at the occurrence the model meant."""
    while count:
        key = b.key()
        lines = b.logical[key]
        repeated = [s for s in set(lines) if len(s.strip()) >= 8 and lines.count(s) > 1]
        if not repeated:
            continue
        line = b.rng.choice(sorted(repeated))
        places = [k for k, s in enumerate(lines) if s == line]
        meant = b.rng.choice(places)
        quoted = line if b.rng.random() < 0.6 else line.strip()
        intended = b.expected(key, "plain", meant, 1, [(line + "  # checked", None)])
        b.add(
            "ambiguous",
            key,
            "plain",
            quoted + "\n",
            quoted + "  # checked\n",
            intended_sha256=sha(intended),
        )
        count -= 1


def stale(b: Builder, count: int) -> None:
    """The person edited the file after the model read it: above the edit (it merges), or
    a line of the quoted ones (it merges when an unchanged line separates the two changes,
    else it is a conflict: nothing may be applied)."""
    for n in range(count):
        key = b.key()
        i, window = b.window(key, b.rng.randint(2, 5), lambda w: True)
        new = b.change(window, ("rename", "comment"))
        old_text, new_text = b.texts(window, [t for t, _ in new])
        seen = {"seen_variant": "plain", "base_sha256": sha(file_text(b.logical[key], "plain"))}
        if n % 5 < 3 and i > 0:
            at = b.rng.randrange(0, i)
            splice = [at, at, ["# a note the person added\n", "\n"]]
            expected = apply_splice(b.expected(key, "plain", i, len(window), new), splice)
            b.add(
                "stale",
                key,
                "plain",
                old_text,
                new_text,
                splice=splice,
                expected_text=expected,
                **seen,
            )
            continue
        k = i + b.rng.choice([k for k, s in enumerate(window) if WORD.search(s)])
        mine = WORD.sub(lambda m: m.group(0) + "_mine", b.logical[key][k], count=1)
        splice = [k, k + 1, [mine + "\n"]]
        # As `git merge-file`: one unchanged line between the two changes and they merge.
        changed = i + next(n for n, (_, was) in enumerate(new) if was is None)
        if abs(changed - k) >= 2:
            merged = apply_splice(b.expected(key, "plain", i, len(window), new), splice)
            seen["expected_text"] = merged
        b.add("stale", key, "plain", old_text, new_text, splice=splice, **seen)


def already_applied(b: Builder, count: int) -> None:
    """The same edit sent again after it applied (a retry, a second notification)."""
    for _ in range(count):
        key = b.key()
        i, window = b.window(key, b.rng.randint(2, 5))
        new = b.change(window, ("rename", "comment"))
        splice = [i, i + len(window), [t + "\n" for t, _ in new]]
        old, new_text = b.texts(window, [t for t, _ in new])
        b.add("already applied", key, "plain", old, new_text, splice=splice, outcome="already")


def elided(b: Builder, count: int) -> None:
    """Old text that skips lines with `...` (applied when the pieces tell one place), or new
    text that stands for lines with a comment (which a plain replace turns into deleted code)."""
    for n in range(count):
        key = b.key()
        i, window = b.window(key, b.rng.randint(8, 12), _indented)
        depth = " " * indent_of(window[2])
        first = b.change(window[:2], ("comment",))
        head = [t for t, _ in first]
        if n % 3 < 2:
            marker = b.rng.choice(["...", "# ...", "# ... existing code ..."])
            old, new = [*window[:2], depth + marker, *window[-2:]], [*head, depth + marker]
            new += window[-2:]
            meant = b.expected(key, "plain", i, 2, first)
            if elision_is_determined(b.logical[key], i, window[:2], window[-2:]):
                b.add("elided", key, "plain", *b.texts(old, new), expected_text=meant)
            else:
                b.add("elided", key, "plain", *b.texts(old, new), intended_sha256=sha(meant))
        else:
            old, new = window, [*head, depth + "# ... rest of the function unchanged"]
            b.add("elided", key, "plain", *b.texts(old, new))


def wrong_path(b: Builder, count: int) -> None:
    """A path the repository does not have: a folder too many or too few."""
    for n in range(count):
        key = b.key()
        i, window = b.window(key, b.rng.randint(2, 4))
        change = b.change(window)
        new = [t for t, _ in change]
        path = "src/" + key if n % 2 else key.split("/", 1)[1]
        # A tool that puts the change in the file the model meant is right to; acdc asks.
        meant = sha(b.expected(key, "plain", i, len(window), change))
        b.add("wrong path", key, "plain", *b.texts(window, new), path=path, intended_sha256=meant)


def misquoted(b: Builder, count: int) -> None:
    """Old text the model misremembered (two letters of a word swapped): no pass may place
    it, however close it is; the refusal shows the closest lines."""
    while count:
        key = b.key()
        i, window = b.window(key, b.rng.randint(2, 5))
        k = b.rng.randrange(len(window))
        word = re.search(r"[a-z]{5,}", window[k])
        if not word:
            continue
        w = word.group(0)
        old = [*window]
        old[k] = window[k].replace(w, w[0] + w[2] + w[1] + w[3:], 1)
        new = [t for t, _ in b.change(old, ("comment",))]
        b.add("misquoted", key, "plain", *b.texts(old, new))
        count -= 1


def build() -> Builder:
    b = Builder()
    b.drifted("exact", "plain", 30)
    substring_edits(b, 10)
    b.drifted("trailing whitespace", "plain", 10, _trailing_drift)
    b.drifted("trailing whitespace", "trailing", 10)
    b.drifted("line endings", "crlf", 20)
    b.drifted("indentation", "plain", 25, _indent_drift, _indented)
    b.drifted("tabs", "tabs", 15, want=_indented)
    b.drifted("punctuation", "plain", 20, _punctuation_drift, _plain_quoted)
    ambiguous(b, 20)
    stale(b, 20)
    already_applied(b, 15)
    elided(b, 15)
    wrong_path(b, 10)
    b.drifted("mixed drift", "crlf", 5, _indent_drift, _indented)
    b.drifted(
        "mixed drift", "tabs", 5, _punctuation_drift, lambda w: _indented(w) and _plain_quoted(w)
    )
    misquoted(b, 10)
    reported(b)
    return b


def write(b: Builder, folder: Path = CORPUS) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    used = {(c["file"], c["variant"]) for c in b.cases} | {
        (c["file"], c["seen_variant"]) for c in b.cases if c["seen_variant"]
    }
    with (folder / "sources.jsonl").open("w", encoding="utf-8") as out:
        for key, variant in sorted(used):
            text = file_text(b.logical[key], variant)
            out.write(json.dumps({"file": key, "variant": variant, "text": text}) + "\n")
    with (folder / "cases.jsonl").open("w", encoding="utf-8") as out:
        for case in b.cases:
            out.write(json.dumps(case, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    builder = build()
    write(builder)
    print(f"{len(builder.cases)} cases written to {CORPUS}")
