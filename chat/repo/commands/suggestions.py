"""Commands a repository's own files suggest: offered to the person, never added by acdc.

`suggest(root)` reads a few well-known files at the repository root and proposes what to
declare: pytest (pyproject.toml's `[tool.pytest.ini_options]`, setup.cfg's `[tool:pytest]`,
pytest.ini, or a tests folder; with the repository's own `.venv` when it has one), the
checking scripts of package.json, the checking targets of a Makefile, `cargo test` for
Cargo.toml and `go test ./...` for go.mod. Pure reading: it runs nothing, writes nothing
and adds nothing; a file it cannot read or parse suggests nothing. Only names that check
(test, lint, typecheck …) are offered: a script called `deploy` is never proposed.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

CHECKING_NAMES = ("test", "tests", "check", "lint", "typecheck", "type-check", "fmt-check")
MAX_READ_BYTES = 1_000_000
_LOCKS = (("yarn", "yarn.lock"), ("pnpm", "pnpm-lock.yaml"))
_TARGET = re.compile(r"^([A-Za-z0-9][A-Za-z0-9_.-]*)\s*:(?!=)", re.MULTILINE)


@dataclass(frozen=True)
class Suggestion:
    name: str
    argv: tuple[str, ...]
    why: str  # what in the repository suggests it


def suggest(root: Path, declared: tuple[tuple[str, ...], ...] = ()) -> list[Suggestion]:
    """What `root`'s files suggest declaring, leaving out argvs already in `declared`."""
    found = [*_pytest(root), *_npm(root), *_make(root), *_cargo(root), *_go(root)]
    seen: set[tuple[str, ...]] = set(declared)
    kept = []
    for suggestion in found:
        if suggestion.argv not in seen:
            seen.add(suggestion.argv)
            kept.append(suggestion)
    return kept


def _text(path: Path) -> str | None:
    try:
        if not path.is_file() or path.stat().st_size > MAX_READ_BYTES:
            return None
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def _pytest(root: Path) -> list[Suggestion]:
    why = _pytest_reason(root)
    if not why:
        return []
    python = ".venv/bin/python" if (root / ".venv" / "bin" / "python").exists() else "python3"
    return [Suggestion("test", (python, "-m", "pytest", "-q"), why)]


def _pytest_reason(root: Path) -> str:
    pyproject = _text(root / "pyproject.toml")
    if pyproject:
        try:
            tool = tomllib.loads(pyproject).get("tool", {})
        except tomllib.TOMLDecodeError:
            tool = {}
        if isinstance(tool, dict) and "pytest" in tool:
            return "pyproject.toml configures pytest"
    if "[tool:pytest]" in (_text(root / "setup.cfg") or ""):
        return "setup.cfg configures pytest"
    if (root / "pytest.ini").is_file():
        return "pytest.ini"
    for folder in ("tests", "test"):
        if (root / folder).is_dir() and any((root / folder).glob("test_*.py")):
            return f"{folder}/ holds test_*.py files"
    return ""


def _npm(root: Path) -> list[Suggestion]:
    text = _text(root / "package.json")
    if not text:
        return []
    try:
        scripts = json.loads(text).get("scripts") or {}
    except (json.JSONDecodeError, AttributeError):
        return []
    if not isinstance(scripts, dict):
        return []
    runner = next((r for r, lock in _LOCKS if (root / lock).exists()), "npm")
    return [
        Suggestion(name, (runner, "run", name), f"package.json has a {name!r} script")
        for name in CHECKING_NAMES
        if isinstance(scripts.get(name), str)
    ]


def _make(root: Path) -> list[Suggestion]:
    for filename in ("GNUmakefile", "makefile", "Makefile"):
        text = _text(root / filename)
        if text is not None:
            targets = set(_TARGET.findall(text))
            return [
                Suggestion(name, ("make", name), f"{filename} has a {name!r} target")
                for name in CHECKING_NAMES
                if name in targets
            ]
    return []


def _cargo(root: Path) -> list[Suggestion]:
    if (root / "Cargo.toml").is_file():
        return [Suggestion("test", ("cargo", "test"), "Cargo.toml")]
    return []


def _go(root: Path) -> list[Suggestion]:
    if (root / "go.mod").is_file():
        return [Suggestion("test", ("go", "test", "./..."), "go.mod")]
    return []
