"""Credentials inside files that are about to be sent: found, named, never sent quietly.

A file that is not shaped like a secret can still hold one (a key pasted into a config, a
token in a script). Before a turn's request leaves, the files in it are scanned for the
shapes below; what is found is said in the chat as a warning, once per file and kind in a
session. The scan names kinds, never the matched text, so the warning itself leaks nothing.
"""

from __future__ import annotations

import re
from functools import lru_cache

# (kind, pattern): shapes specific enough to be worth a warning on sight.
SHAPES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern))
    for kind, pattern in (
        ("a private key", r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"),
        ("an AWS access key", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
        ("a GitHub token", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})"),
        ("a GitLab token", r"\bglpat-[A-Za-z0-9_-]{20,}"),
        ("a Slack token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
        ("an Anthropic API key", r"\bsk-ant-[A-Za-z0-9_-]{20,}"),
        ("an OpenAI API key", r"\bsk-(?:proj-|svcacct-)?[A-Za-z0-9_-]{32,}"),
        ("a Google API key", r"\bAIza[0-9A-Za-z_-]{35}\b"),
        ("a Stripe secret key", r"\b[sr]k_live_[0-9A-Za-z]{20,}"),
        ("an npm token", r"\bnpm_[A-Za-z0-9]{36}\b"),
        ("a PyPI token", r"\bpypi-AgE[A-Za-z0-9_-]{50,}"),
    )
)


def kinds_in(text: str) -> list[str]:
    """The kinds of credential `text` seems to hold, in the order of SHAPES."""
    return list(_kinds(text))


@lru_cache(maxsize=256)
def _kinds(text: str) -> tuple[str, ...]:
    # Cached: the same files go with every turn; a hit costs a string compare, not a scan.
    found = []
    for kind, pattern in SHAPES:
        if kind == "an OpenAI API key" and "an Anthropic API key" in found:
            continue  # sk-ant-… matches both
        if pattern.search(text):
            found.append(kind)
    return tuple(found)


def warning(path: str, kinds: list[str]) -> str:
    named = kinds[0] if len(kinds) == 1 else ", ".join(kinds[:-1]) + " and " + kinds[-1]
    return (
        f"{path} holds what looks like {named}; it is being sent to the model provider "
        "with this message. Take it out of the selection if it should stay on this machine."
    )
