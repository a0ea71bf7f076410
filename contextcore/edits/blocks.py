"""SEARCH/REPLACE edit blocks in a model's reply text, parsed whole or as it streams.

The format models are trained on: a path line (bare, in backticks, in bold, as a heading,
or in the fence's info string; an odd name as the tools show it, a JSON string), a fence,
then `<<<<<<< SEARCH`, the old lines, `=======`, the new lines, `>>>>>>> REPLACE`. A fence
may hold several blocks; a block with no path line of its own takes the path of the block
just before it. An empty SEARCH part creates a file. Fences are only read for the path: a
block ends at its REPLACE marker, so code that holds fences is no trouble. Invariant: never
raises; a block that cannot be read is an `EditBlock` with an `error` that says why.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from contextcore.edits.ops import EditOp

_SEARCH = re.compile(r"^\s*<{5,9}\s*SEARCH\s*$")
_DIVIDER = re.compile(r"^\s*={5,9}\s*$")
_REPLACE = re.compile(r"^\s*>{5,9}\s*REPLACE\s*$")
_FENCE = re.compile(r"^\s*(?:```+|~~~+)(.*)$")
_PATH = re.compile(r"^[\w.\-/\\+@~]+$")
_LABEL = re.compile(r"^(?:file(?:name)?|path)\s*:\s*", re.IGNORECASE)
_BACKTICKED = re.compile(r"`([^`\s]+)`")
_DOTFILE = re.compile(r"^\.[A-Za-z][\w.\-]*$")
_BARE_NAMES = frozenset({"Makefile", "Dockerfile", "Procfile", "Gemfile", "Rakefile", "LICENSE"})


@dataclass(frozen=True)
class EditBlock:
    line: int  # the SEARCH marker's line in the reply (1-based)
    op: EditOp | None
    error: str = ""  # why the block is not an edit; "" when `op` is set


def parse_edit_blocks(text: str, *, final: bool = True) -> list[EditBlock]:
    """Every block in `text`. With `final=False` the text is still arriving: an incomplete
    last line is not read yet and an open block is left out, not reported as broken."""
    if not final:
        text = text[: text.rfind("\n") + 1]
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    blocks: list[EditBlock] = []
    i = 0
    while i < len(lines):
        if _REPLACE.match(lines[i]):
            blocks.append(EditBlock(i + 1, None, "a >>>>>>> REPLACE line with no SEARCH before it"))
        if not _SEARCH.match(lines[i]):
            i += 1
            continue
        block, i = _read_block(lines, i, blocks, final)
        if block is None:
            break
        blocks.append(block)
    return blocks


def _read_block(
    lines: list[str], start: int, earlier: list[EditBlock], final: bool
) -> tuple[EditBlock | None, int]:
    """The block whose SEARCH marker is at `start`, and where to go on reading."""
    dividers, end = [], start + 1
    while end < len(lines):
        if _REPLACE.match(lines[end]):
            break
        if _SEARCH.match(lines[end]):
            error = f"no >>>>>>> REPLACE line before the next SEARCH (line {end + 1})"
            return EditBlock(start + 1, None, error), end
        if _DIVIDER.match(lines[end]):
            dividers.append(end)
        end += 1
    else:
        if not final:
            return None, end
        return EditBlock(start + 1, None, "the block has no >>>>>>> REPLACE line"), end
    if len(dividers) != 1:
        what = "no" if not dividers else f"{len(dividers)}"
        error = f"{what} ======= lines between SEARCH and REPLACE; a block needs exactly one"
        return EditBlock(start + 1, None, error), end + 1
    path = _path_before(lines, start, earlier)
    if not path:
        return EditBlock(start + 1, None, _no_path(lines, start)), end + 1
    search = _joined(lines[start + 1 : dividers[0]])
    replace = _joined(lines[dividers[0] + 1 : end])
    if not search.strip():
        op = EditOp(path, "create", new_text=replace, source="block", origin_line=start + 1)
    else:
        op = EditOp(path, "replace", search, replace, source="block", origin_line=start + 1)
    return EditBlock(start + 1, op), end + 1


def _no_path(lines: list[str], start: int) -> str:
    """Why a block names no path; when the line above it (or above its fence) would be a
    path but for a space or "=", which a bare path line cannot hold, the form that can."""
    error = "no file path before the block (put the path on the line above the fence)"
    k = _skip_blank(lines, start - 1)
    if k >= 0 and _FENCE.match(lines[k]):
        k = _skip_blank(lines, k - 1)
    candidate = _bare(lines[k]) if k >= 0 else ""
    bare = re.sub(r"[ =]", "_", candidate)  # what the line would be without them
    if bare != candidate and _looks_like_path(bare):
        quoted = json.dumps(candidate, ensure_ascii=False)
        return f"{error[:-1]}; if the path is {quoted}, write it so, in double quotes)"
    return error


def _joined(lines: list[str]) -> str:
    return "".join(line + "\n" for line in lines)


def _path_before(lines: list[str], start: int, earlier: list[EditBlock]) -> str:
    """The path a block names: the line above it, the fence's info string, the line above
    the fence, or (right after another block) that block's path."""
    k = _skip_blank(lines, start - 1)
    if _follows_block(lines, k):
        previous = next((b.op for b in reversed(earlier) if b.op), None)
        return previous.path if previous else ""
    if k >= 0 and _path_in_line(lines[k]):
        return _path_in_line(lines[k])
    fence = _FENCE.match(lines[k]) if k >= 0 else None
    if not fence:
        return ""
    in_info = _path_in_info(fence.group(1))
    if in_info:
        return in_info
    k = _skip_blank(lines, k - 1)
    return _path_in_line(lines[k]) if k >= 0 else ""


def _follows_block(lines: list[str], k: int) -> bool:
    """Whether only blank lines and bare fences stand between line `k` and a REPLACE line."""
    while k >= 0 and (not lines[k].strip() or _bare_fence(lines[k])):
        k -= 1
    return k >= 0 and bool(_REPLACE.match(lines[k]))


def _bare_fence(line: str) -> bool:
    fence = _FENCE.match(line)
    return bool(fence) and not _path_in_info(fence.group(1))


def _skip_blank(lines: list[str], k: int) -> int:
    while k >= 0 and not lines[k].strip():
        k -= 1
    return k


def _path_in_info(info: str) -> str:
    for token in info.split():
        candidate = token.split(":", 1)[1] if ":" in token else token
        if ("/" in candidate or "." in candidate) and _looks_like_path(candidate):
            return candidate
    return ""


def _path_in_line(line: str) -> str:
    """The path a line names, if naming it is all the line does (or, in a sentence ending
    with a colon, the one path it quotes in backticks)."""
    if _FENCE.match(line) or _SEARCH.match(line) or _DIVIDER.match(line):
        return ""
    quoted = _shown_path(line)
    if quoted:
        return quoted
    candidate = _bare(line)
    if _looks_like_path(candidate):
        return candidate
    quoted = _BACKTICKED.findall(line)
    if line.rstrip().endswith(":") and len(quoted) == 1 and _looks_like_path(quoted[0]):
        return quoted[0]
    return ""


def _bare(line: str) -> str:
    """A line without the markup around a path: heading marks, bold, a `path:` label,
    backticks, quotes, a closing colon."""
    candidate = line.strip().lstrip("#").strip()
    return _LABEL.sub("", candidate.strip("*_ ")).strip("*_`'\" ").rstrip(":").strip("*`")


def _shown_path(line: str) -> str:
    """The path of a line that names it as `contextcore.paths.shown` writes an odd name (a
    JSON string, so a colon, a line break or spaces stay part of it), read back as JSON;
    "" for any other line. Bare, it would read as another file (`new\\nline.py`) or none."""
    candidate = line.strip().lstrip("#").strip()
    candidate = _LABEL.sub("", candidate.strip("*_ ")).rstrip(":").strip("*_`")
    if len(candidate) < 3 or candidate[0] != '"' or candidate[-1] != '"':
        return ""
    try:
        path = json.loads(candidate)
    except ValueError:
        return ""
    named = isinstance(path, str) and "\0" not in path and re.search(r"[A-Za-z0-9]", path)
    return path if named and _names_a_file(path) else ""


def _looks_like_path(candidate: str) -> bool:
    if not candidate or not _PATH.match(candidate) or not re.search(r"[A-Za-z0-9]", candidate):
        return False
    return _names_a_file(candidate) or candidate in _BARE_NAMES


def _names_a_file(path: str) -> bool:
    """Whether a name reads as a file's, not a word: a folder in it, an extension, or a
    dotfile's leading dot (`.gitignore`; "..." and "x." are no names)."""
    return "/" in path or "." in path.strip(".") or bool(_DOTFILE.match(path))
