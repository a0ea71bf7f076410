"""What every case of the edits corpus is built from: the real files, as each variant holds
them, and the `Builder` that adds a case over them with its expected file.

A file is kept as logical lines (spaces, no trailing whitespace) and rendered in a variant
(`plain`, `crlf`, `tabs`, `trailing`); an expectation is a splice of those lines, never the
matcher's work. The shapes of the synthetic cases are `cases`' and `reported`'s, those of
real history `drift`'s; `edits_bench` reads the corpus this writes (`CORPUS`).
"""

from __future__ import annotations

import difflib
import hashlib
import json
import random
import re
import zlib
from pathlib import Path
from typing import Any

from bench import CHECKOUT
from bench.edits.expect import indent_of

CORPUS = Path(__file__).resolve().parent / "corpus"
SITE = next((CHECKOUT / ".venv" / "lib").glob("python3*/site-packages"), CHECKOUT)
SOURCES = {
    "contextcore/quality.py": CHECKOUT / "contextcore/quality.py",
    "contextcore/objectview.py": CHECKOUT / "contextcore/objectview.py",
    "history/export.py": CHECKOUT / "history/interchange/export.py",
    "django/utils/text.py": SITE / "django/utils/text.py",
    "django/utils/functional.py": SITE / "django/utils/functional.py",
    "django/utils/datastructures.py": SITE / "django/utils/datastructures.py",
    "django/utils/dateformat.py": SITE / "django/utils/dateformat.py",
    "django/core/paginator.py": SITE / "django/core/paginator.py",
}
VARIANTS = ("plain", "crlf", "tabs", "trailing")
WORD = re.compile(r"[A-Za-z_]\w{3,}")
Change = list[tuple[str, int | None]]  # new window lines: (text, index in old window or None)


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def render(line: str, variant: str, changed: bool = False) -> str:
    """A logical line (spaces, no trailing whitespace) as the variant's file holds it; a
    changed line is the model's, so it has no trailing whitespace of the file's."""
    if variant == "tabs":
        n = indent_of(line)
        return "\t" * (n // 4) + " " * (n % 4) + line.lstrip(" ")
    trailing = variant == "trailing" and not changed and line.strip()
    return line + "  " if trailing and zlib.crc32(line.encode()) % 3 == 0 else line


def eol(variant: str) -> str:
    return "\r\n" if variant == "crlf" else "\n"


def file_text(lines: list[str], variant: str) -> str:
    return "".join(render(line, variant) + eol(variant) for line in lines)


def apply_splice(text: str, splice: list[Any] | None) -> str:
    if not splice:
        return text
    start, end, rows = splice
    lines = text.splitlines(True)
    return "".join(lines[:start] + rows + lines[end:])


def curly(line: str) -> str:
    """What chat rendering does to code: curly quotes, en dashes, a non-breaking space."""
    out, double = [], True
    for ch in line:
        if ch == '"':
            out.append("\u201c" if double else "\u201d")
            double = not double
        else:
            out.append("\u2019" if ch == "'" else ch)
    return "".join(out).replace(" - ", " \u2013 ").replace(" = ", " =\u00a0", 1)


def stored_sources(folder: Path = CORPUS) -> dict[str, str]:
    """The plain copies the corpus holds, by file: the sources the cases were built from."""
    path = folder / "sources.jsonl"
    if not path.exists():
        return {}
    rows = (json.loads(line) for line in path.read_text(encoding="utf-8").splitlines())
    return {row["file"]: row["text"] for row in rows if row["variant"] == "plain"}


class Builder:
    def __init__(self, seed: int = 22) -> None:
        self.rng = random.Random(seed)
        stored = stored_sources()
        texts = {key: stored.get(key) or path.read_text() for key, path in SOURCES.items()}
        self.logical = {
            key: [line.rstrip() for line in text.split("\n")[:-1]] for key, text in texts.items()
        }
        self.cases: list[dict[str, Any]] = []

    def key(self) -> str:
        return self.rng.choice(list(SOURCES))

    def window(self, key: str, size: int, want=lambda w: True) -> tuple[int, list[str]]:
        """A run of `size` lines, unique even with indentation ignored, that starts and
        ends with code and that `want` accepts."""
        lines = self.logical[key]
        stripped = [line.strip() for line in lines]
        for _ in range(3000):
            i = self.rng.randrange(0, len(lines) - size)
            w = lines[i : i + size]
            if not (w[0].strip() and w[-1].strip()) or max(len(s.strip()) for s in w) < 12:
                continue
            same = (k for k in range(len(lines) - size + 1) if stripped[k] == stripped[i])
            if want(w) and sum(stripped[k : k + size] == stripped[i : i + size] for k in same) == 1:
                return i, w
        raise RuntimeError(f"no window of {size} lines in {key}")

    def change(self, window: list[str], kinds: tuple[str, ...] = ()) -> Change:
        kinds = kinds or (
            ("rename", "comment", "insert", "delete") if len(window) > 2 else ("rename",)
        )
        kind = self.rng.choice(kinds)
        c = self.rng.choice([k for k, line in enumerate(window) if line.strip()])
        out: Change = [(line, k) for k, line in enumerate(window)]
        line, word = window[c], WORD.search(window[c].strip())
        if kind == "rename" and word:
            out[c] = (line.replace(word.group(0), word.group(0) + "_v2", 1), None)
        elif kind in ("rename", "comment"):
            out[c] = (line + "  # checked", None)
        elif kind == "insert":
            depth = indent_of(line) + (4 if line.endswith(":") else 0)
            out.insert(c + 1, (" " * depth + f"trace({len(self.cases)})", None))
        else:
            del out[c]
        return out

    def expected(self, key: str, variant: str, i: int, size: int, new: Change) -> str:
        lines = [render(line, variant) for line in self.logical[key]]
        window = [lines[i + k] if k is not None else render(t, variant, True) for t, k in new]
        return "".join(line + eol(variant) for line in lines[:i] + window + lines[i + size :])

    def texts(self, old: list[str], new: list[str]) -> tuple[str, str]:
        """The old and new text as a model sends them: tool arguments often leave out the
        last line break (of both), blocks never do."""
        if self.rng.random() < 0.3:
            return "\n".join(old), "\n".join(new)
        return "".join(line + "\n" for line in old), "".join(line + "\n" for line in new)

    def add(self, shape: str, key: str, variant: str, old: str, new: str, **fields: Any) -> None:
        disk = apply_splice(file_text(self.logical[key], variant), fields.get("splice"))
        expected = fields.pop("expected_text", None)
        target = disk if expected is None else expected
        number = sum(case["shape"] == shape for case in self.cases) + 1
        diff = difflib.unified_diff(disk.splitlines(True), target.splitlines(True), key, key, n=1)
        self.cases.append(
            {
                "id": f"{shape.replace(' ', '-')}-{number:03}",
                "shape": shape,
                "file": key,
                "variant": variant,
                "splice": fields.pop("splice", None),
                "seen_variant": fields.pop("seen_variant", None),
                "op": {"path": fields.pop("path", key), "old_text": old, "new_text": new},
                "expected": fields.pop("outcome", "applied" if expected else "refused"),
                "expected_sha256": sha(target),
                "expected_diff": "".join(diff),
                **fields,
            }
        )

    def drifted(self, shape: str, variant: str, count: int, drift=None, want=None) -> None:
        """`count` true changes of 2-6 lines in `variant` files; `drift(old, new)` gives the
        model's old and new lines."""
        for _ in range(count):
            key = self.key()
            i, window = self.window(key, self.rng.randint(2, 6), want or (lambda w: True))
            new = self.change(window)
            old_lines, new_lines = (drift or _no_drift)(window, new, self.rng)
            expected = self.expected(key, variant, i, len(window), new)
            old, new_text = self.texts(old_lines, new_lines)
            self.add(shape, key, variant, old, new_text, expected_text=expected)


def _no_drift(old: list[str], new: Change, rng: random.Random) -> tuple[list[str], list[str]]:
    return old, [t for t, _ in new]
