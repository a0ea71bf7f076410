"""The Files panel's script keeps to its budget: what htmx cannot do, and no more.

static/acdc/picker.js: at most 300 lines and 12 KB (12,000 bytes), no line over 100
characters, every function (a `function` or an arrow with a braced body) under 40 lines.
Functions are found by matching braces in the text with its strings, template literals and
comments blanked out; a brace that opens a function body follows `=>` or a parameter list.
"""

from __future__ import annotations

import re
from pathlib import Path

PICKER = Path(__file__).resolve().parents[1] / "static" / "acdc" / "picker.js"
MAX_LINES, MAX_BYTES, MAX_LINE, MAX_FUNCTION = 300, 12_000, 100, 40
_PARAMS = re.compile(r"(?:\bfunction\b[\w\s]*|\b\w+\s*)\([^()]*\)\s*$")


def _code_only(text: str) -> str:
    """`text` with its strings, template literals and comments blanked out (newlines kept,
    so offsets and line numbers stay as they were)."""
    out, i, n = [], 0, len(text)
    while i < n:
        two = text[i : i + 2]
        if two in ("//", "/*"):
            end = text.find("\n" if two == "//" else "*/", i + 2)
            end = n if end < 0 else end + (0 if two == "//" else 2)
        elif text[i] in "\"'`":
            end = i + 1
            while end < n and text[end] != text[i]:
                end += 2 if text[end] == "\\" else 1
            end += 1
        else:
            out.append(text[i])
            i += 1
            continue
        out.append(re.sub(r"[^\n]", " ", text[i:end]))
        i = end
    return "".join(out)


def function_lengths(text: str) -> list[tuple[int, int]]:
    """(first line, lines) of every function whose body is braced."""
    code, opened, found = _code_only(text), [], []
    for at, char in enumerate(code):
        if char == "{":
            before = code[:at].rstrip()
            is_function = before.endswith("=>") or bool(_PARAMS.search(before[-300:]))
            opened.append((at, is_function))
        elif char == "}":
            start, is_function = opened.pop()
            if is_function:
                first = code.count("\n", 0, start) + 1
                found.append((first, code.count("\n", start, at) + 1))
    assert not opened, "unbalanced braces"
    return found


def budget_problems(text: str) -> list[str]:
    lines = text.splitlines()
    problems = [f"{len(lines)} lines"] if len(lines) > MAX_LINES else []
    if (size := len(text.encode("utf-8"))) > MAX_BYTES:
        problems.append(f"{size:,} bytes")
    problems += [
        f"line {n}: {len(line)} characters"
        for n, line in enumerate(lines, 1)
        if len(line) > MAX_LINE
    ]
    problems += [
        f"the function at line {first}: {length} lines"
        for first, length in function_lengths(text)
        if length >= MAX_FUNCTION
    ]
    return problems


def test_the_files_panel_script_keeps_to_its_budget():
    assert budget_problems(PICKER.read_text(encoding="utf-8")) == []


def test_the_budget_sees_a_long_function_a_wrapper_and_a_long_line():
    body = "\n".join(f"  step({n});" for n in range(45))
    wrapped = f"(function () {{\n  const a = () => {{ return '{{'; }};\n{body}\n}})();\n"
    assert budget_problems(wrapped) == ["the function at line 1: 48 lines"]
    assert function_lengths("const f = (x) => {\n  return `${x}}`;\n};\n") == [(1, 3)]
    assert budget_problems("x".join(["y"] * 60) + "\n") == ["line 1: 119 characters"]
