"""`acdc chat --commit`'s question when acdc's edits changed a hook the commit would run.

The same words in this process and through the server: `--run-changed-hooks` runs the
hook, `--no-hooks` commits without any hook, and without either a terminal is asked
(y/N, anything but yes is no) while a script gets one line saying which flag to add and
nothing is committed. Standard library only: the client reads it before Django starts.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from types import MappingProxyType

FLAGS = MappingProxyType({"run": "--run-changed-hooks", "skip": "--no-hooks"})


def question(hooks: Sequence[str]) -> str:
    return f"acdc's edits changed {', '.join(hooks)}, which git would run on this commit"


def refusal(hooks: Sequence[str]) -> str:
    return (
        f"not committed: {question(hooks)}; add {FLAGS['run']} to run it, or "
        f"{FLAGS['skip']} to commit without any hook"
    )


def may_ask() -> bool:
    """Only a person at a terminal is asked; a pipe or a script gets the refusal."""
    return sys.stdin.isatty() and sys.stderr.isatty()


def ask(hooks: Sequence[str]) -> bool:
    """The person's y/N at the terminal: True only for yes."""
    print(f"acdc: {question(hooks)}. Run it? [y/N] ", end="", file=sys.stderr, flush=True)
    try:
        answer = sys.stdin.readline()
    except (OSError, KeyboardInterrupt):
        answer = ""
    return answer.strip().casefold() in ("y", "yes")
