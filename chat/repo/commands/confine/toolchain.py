"""The toolchain a command's program needs, found by resolving the program.

A run sees the system's folders (`SYSTEM`), the work tree and nothing else of the person's:
a program installed elsewhere (a virtualenv, pyenv, nvm, a cargo or go prefix, a program
under /opt) would not start. `prefixes` finds what it needs: argv[0] looked up on the run's
PATH (relative to the work tree when it names a path), every symlink on the way to the file
and the file itself; for each, the prefix it lives in (the folder above its `bin/`, the
root of a `shims/` manager such as pyenv or asdf, else its own folder). A virtualenv (its
`pyvenv.cfg`) brings the base interpreter it was made from; a script brings the
interpreter of its `#!` line (through `env`); rustup's proxies bring the rustup home
beside the cargo home. A prefix inside the system folders or the work tree is visible
already; the home folder itself, or a folder above it, is never a prefix (the program's own
folder is bound instead, and never the home folder).
Non-goals: binding them (`sandbox`), the person's own extra read paths (declared).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path

# Read-only in every run; /opt is not (vendors' software, licence files and data: a
# program under it is a toolchain, bound by its prefix).
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
DEPTH = 4  # scripts whose interpreter is a script …
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "busybox"})
# Programs that run the next word of their argv as a program.
WRAPPERS = frozenset({"env", "timeout", "nice", "nohup", "xargs", "time", "exec", "command"})
SEPARATORS = frozenset({";", "&&", "||", "|", "&", "(", ")", "|&", ";;", "{", "}", "!"})
KEYWORDS = frozenset({"then", "do", "else", "elif", "if", "while", "until"})


def prefixes(argv: Sequence[str], root: Path, environ: Mapping[str, str]) -> tuple[Path, ...]:
    """The folders a run of `argv` needs read-only, outside the system's and `root`."""
    home = Path(environ.get("HOME") or "/nonexistent-home")
    found: list[Path] = []
    for program in programs(argv):
        _collect(program, root, environ.get("PATH", os.defpath), home, found, DEPTH)
    kept: list[Path] = []
    for path in found:
        if visible(path, root) or path in kept:
            continue
        kept.append(path)
    return tuple(kept)


def programs(argv: Sequence[str]) -> list[str]:
    """The programs `argv` starts: its own, looked through wrappers (`env`, `timeout` …),
    and, for a shell's `-c` script, each command's (one level: `a && b | c; d`)."""
    found = _command_words(list(argv))
    if found and Path(found[0]).name in SHELLS:
        index = _script_index(argv)
        if index is not None:
            try:
                words = shlex.shlex(argv[index], posix=True, punctuation_chars=True)
                found += _command_words(list(words))
            except ValueError:  # an unbalanced quote: the shell will say so
                pass
    return found


def _command_words(tokens: list[str]) -> list[str]:
    words, expect = [], True
    for token in tokens:
        if token in SEPARATORS or token in KEYWORDS:
            expect = True
        elif expect and not ("=" in token.split("/")[0] or _option(token)):
            words.append(token)
            expect = Path(token).name in WRAPPERS
    return words


def _option(token: str) -> bool:
    """An option or a wrapper's number (`timeout 10s`, `nice -n 5`), not a program."""
    return token.startswith("-") or re.fullmatch(r"\d+(\.\d+)?[smhd]?", token) is not None


def _script_index(argv: Sequence[str]) -> int | None:
    for index, word in enumerate(argv[1:-1], start=1):
        if word.startswith("-") and not word.startswith("--") and "c" in word:
            return index + 1
    return None


def visible(path: Path, root: Path) -> bool:
    """Whether `path` is seen in every run already: a system folder's, or the work tree's."""
    return _within(path, root) or any(_within(path, Path(folder)) for folder in SYSTEM)


def _collect(argv0: str, root: Path, path: str, home: Path, found: list[Path], depth: int):
    program = locate(argv0, root, path)
    if program is None or depth == 0:
        return
    for step in _chain(program):
        prefix = _prefix(step, home)
        if prefix is not None:
            found.append(prefix)
            base = _venv_base(prefix)
            if base is not None:
                _collect(str(base), root, path, home, found, depth - 1)
            rustup = prefix.parent / ".rustup"
            if step.name == "rustup" and prefix.name == ".cargo" and rustup.is_dir():
                found.append(rustup)
    interpreter = _interpreter(program.resolve())
    if interpreter is not None:
        _collect(interpreter, root, path, home, found, depth - 1)


def locate(argv0: str, root: Path, path: str) -> Path | None:
    """Where `argv0` runs from: a path (relative to the work tree), or a PATH lookup."""
    if "/" in argv0:
        candidate = Path(argv0) if argv0.startswith("/") else root / argv0
        return candidate if candidate.exists() else None
    found = shutil.which(argv0, path=path)
    return None if found is None else Path(os.path.abspath(found))


def _chain(program: Path) -> list[Path]:
    """The program, each symlink it goes through (as absolute paths), and its file."""
    chain, current = [program], program
    for _ in range(40):
        if not current.is_symlink():
            break
        target = Path(os.readlink(current))
        current = Path(os.path.normpath(current.parent / target))
        chain.append(current)
    chain.append(program.resolve())
    return chain


def _prefix(program: Path, home: Path) -> Path | None:
    folder = program.parent
    if folder.name in ("bin", "sbin", "shims"):
        prefix = folder.parent
        if not _within(home, prefix):
            return prefix
    return None if _within(home, folder) else folder


def _venv_base(prefix: Path) -> Path | None:
    """A virtualenv's base interpreter, from its pyvenv.cfg `home` (a bin folder)."""
    try:
        lines = (prefix / "pyvenv.cfg").read_text(errors="replace").splitlines()
    except OSError:
        return None
    for line in lines:
        key, _, value = line.partition("=")
        if key.strip() == "home" and value.strip():
            for name in ("python3", "python"):
                if (Path(value.strip()) / name).exists():
                    return Path(value.strip()) / name
    return None


def _interpreter(program: Path) -> str | None:
    """The program a script's `#!` line runs (the one `env` is asked for)."""
    try:
        with program.open("rb") as file:
            first = file.readline(256)
    except OSError:
        return None
    if not first.startswith(b"#!"):
        return None
    words = first[2:].decode(errors="replace").split()
    if words and Path(words[0]).name == "env":
        words = [word for word in words[1:] if not word.startswith("-")]
    return words[0] if words else None


def _within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents
