"""The person's declared commands for a repository: add, remove, list, and how one reads.

Declarations are rows of acdc's database (`history.models.DeclaredCommand`), keyed by the
repository's path: nothing in the working tree declares or widens them, so a model that can
write files cannot add a command for itself. An argv is a list, run as it is; a shell runs
only when the person wrote one, and `shown` says so (`sh -c '…'` reads as a shell, never as
the program it starts; `codeforms.code_kind` reads wrappers and inline code), with each
character a reader cannot see written as an escape and a line break as `⏎`
(`contextcore.controls`), so what the person reads is what runs. Every bad declaration is a
`DeclarationError` whose text says what to do. Synchronous ORM code. Non-goals: running
(`chat.repo.commands.runner`), suggestions.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from django.conf import settings
from django.db import IntegrityError, transaction

from chat.repo.commands.codeforms import code_kind
from chat.repo.commands.limits import duration
from contextcore.controls import visible, visible_parts
from history.models import DeclaredCommand
from history.models.declared import DEFAULT_TIMEOUT_SECONDS

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,39}\Z")
MAX_ARGV_ITEMS = 200
MAX_ARGV_CHARS = 8_000


class DeclarationError(ValueError):
    """A declaration that cannot be stored; the text says why and what to do."""


@dataclass(frozen=True)
class Declared:
    name: str
    argv: tuple[str, ...]
    timeout_seconds: int
    network: bool
    read_paths: tuple[str, ...] = ()  # outside the work tree, seen read-only by its runs

    @classmethod
    def of(cls, row: DeclaredCommand) -> Declared:
        """The row as it runs: a timeout stored before the maximum was lowered is held to it."""
        timeout = min(row.timeout_seconds, max_timeout_seconds())
        reads = tuple(row.read_paths or ())
        return cls(row.name, tuple(row.argv), timeout, row.network, reads)

    @property
    def shown(self) -> str:
        return shown(self.argv)


def check_name(name: str) -> str:
    if not NAME.match(name or ""):
        raise DeclarationError(
            f"{name[:60]!r} is not a command name: use 1 to 40 letters, digits, '.', '_' or "
            "'-', starting with a letter or digit (for example: test, lint, type-check)"
        )
    return name


def check_argv(argv: Sequence[str]) -> tuple[str, ...]:
    """The argv as stored: a non-empty list of text without NUL bytes."""
    items = tuple(argv)
    if not items or not items[0].strip():
        raise DeclarationError(
            "the command is empty: give the program and its arguments after --, "
            "for example: acdc commands add test -- python -m pytest -q"
        )
    if len(items) > MAX_ARGV_ITEMS or sum(len(a) for a in items) > MAX_ARGV_CHARS:
        raise DeclarationError(
            f"the command is too long (at most {MAX_ARGV_ITEMS} arguments and "
            f"{MAX_ARGV_CHARS:,} characters)"
        )
    if any(not isinstance(a, str) or "\0" in a for a in items):
        raise DeclarationError("every argument must be text without NUL bytes")
    return items


def check_read_paths(paths: Sequence[str]) -> tuple[str, ...]:
    """Extra read paths as stored: absolute, existing, not the root folder itself."""
    checked = []
    for path in paths:
        if not isinstance(path, str) or "\0" in path or not os.path.isabs(path):
            raise DeclarationError(f"--read needs an absolute path, not {str(path)[:80]!r}")
        normal = os.path.normpath(path)
        if normal == "/" or not os.path.exists(normal):
            why = "the whole filesystem" if normal == "/" else "not there"
            raise DeclarationError(f"--read {normal}: {why}; name a folder or file to show")
        checked.append(normal)
    return tuple(dict.fromkeys(checked))


def max_timeout_seconds() -> int:
    """The longest timeout a command may be declared with (ACDC_COMMAND_MAX_TIMEOUT)."""
    return settings.ACDC_COMMAND_MAX_TIMEOUT


def check_timeout(seconds: int | None) -> int:
    most = max_timeout_seconds()
    if seconds is None:
        return min(DEFAULT_TIMEOUT_SECONDS, most)
    if not 1 <= seconds <= most:
        raise DeclarationError(
            f"--timeout must be 1 to {most} seconds: a run may last at most {duration(most)} "
            "(ACDC_COMMAND_MAX_TIMEOUT)"
        )
    return seconds


def declared(repository: str) -> list[Declared]:
    rows = DeclaredCommand.objects.filter(repository=repository).order_by("name")
    return [Declared.of(row) for row in rows]


def find(repository: str, name: str) -> Declared | None:
    row = DeclaredCommand.objects.filter(repository=repository, name=name).first()
    return Declared.of(row) if row is not None else None


def add(
    repository: str,
    name: str,
    argv: Sequence[str],
    *,
    timeout_seconds: int | None = None,
    network: bool = False,
    read_paths: Sequence[str] = (),
) -> Declared:
    name, items = check_name(name), check_argv(argv)
    seconds, reads = check_timeout(timeout_seconds), check_read_paths(read_paths)
    try:
        with transaction.atomic():
            row = DeclaredCommand.objects.create(
                repository=repository,
                name=name,
                argv=list(items),
                timeout_seconds=seconds,
                network=network,
                read_paths=list(reads),
            )
    except IntegrityError:
        existing = find(repository, name)
        what = f": {existing.shown}" if existing else ""
        raise DeclarationError(
            f"a command named {name!r} is already declared{what}; remove it first "
            f"(acdc commands remove {name}) or choose another name"
        ) from None
    return Declared.of(row)


def remove(repository: str, name: str) -> None:
    deleted, _ = DeclaredCommand.objects.filter(repository=repository, name=name).delete()
    if not deleted:
        raise DeclarationError(f"no command named {name[:60]!r} is declared; {known(repository)}")


def known(repository: str) -> str:
    """The names a person or model may use, in a sentence."""
    names = [d.name for d in declared(repository)]
    if not names:
        return "no commands are declared for this repository (acdc commands add NAME -- ARGV…)"
    return "declared: " + ", ".join(names)


def shown(argv: Sequence[str]) -> str:
    """The argv as one line a person reads: quoted as a shell would, hidden characters
    escaped; a shell or inline code says it is one."""
    line = visible(shlex.join(argv))
    return f"{line}  [{kind}]" if (kind := code_kind(argv)) else line


def shown_parts(argv: Sequence[str]) -> list[tuple[str, bool]]:
    """The argv's line as (text, is_escape) runs, for a page to style the escapes."""
    return visible_parts(shlex.join(argv))
