"""`acdc commands`: the person declares, lists and removes the commands the model may run.

`acdc commands add NAME [--timeout SECONDS] [--network] [--read PATH]… -- ARGV…` stores a
declaration for the served repository (`--read`: a path outside the work tree its runs may
read), `acdc commands remove NAME` drops it, and `acdc commands` lists the declared ones,
the suggestions its files make (offered, never added) and whether runs are sandboxed here.
A bad name, an empty argv, a duplicate or an unknown name is one line on stderr and exit
status 2 (`CommandError`).
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from django.conf import settings

from acdc.errors import CommandError
from chat.repo.commands import declaring
from chat.repo.commands.declaring import DeclarationError
from chat.repo.commands.sandbox import Sandbox
from chat.repo.commands.suggestions import suggest


def run(args: argparse.Namespace) -> int:
    return run_action(args, str(settings.ACDC_REPO), _add, declaring.remove, _list)


def run_action(args: argparse.Namespace, place: Any, add, remove, show) -> int:
    """One of `acdc commands` or `acdc mcp`: add, remove or list what `place` declares; a
    refused declaration is one line (`CommandError`)."""
    try:
        if args.action == "add":
            return add(place, args)
        if args.action == "remove":
            remove(place, args.name)
            print(f"removed {args.name}")
            return 0
    except DeclarationError as exc:
        raise CommandError(str(exc)) from None
    return show(place)


def _add(repository: str, args: argparse.Namespace) -> int:
    if args.argv is None:
        raise CommandError(
            "put the command after --, for example: acdc commands add test -- python -m pytest"
        )
    added = declaring.add(
        repository,
        args.name,
        args.argv,
        timeout_seconds=args.timeout,
        network=args.network,
        read_paths=[os.path.abspath(os.path.expanduser(p)) for p in args.read],
    )
    print(f"declared {added.name}: {added.shown}  ({_terms(added)})")
    return 0


def _terms(command: declaring.Declared) -> str:
    network = "with network" if command.network else "no network"
    reads = "".join(f", reads {path}" for path in command.read_paths)
    return f"timeout {command.timeout_seconds} s, {network}{reads}"


def _list(repository: str) -> int:
    commands = declaring.declared(repository)
    print(f"commands for {repository}:")
    width = max((len(c.name) for c in commands), default=0)
    for command in commands:
        print(f"  {command.name:<{width}}  {command.shown}  ({_terms(command)})")
    if not commands:
        print("  none declared (acdc commands add NAME -- ARGV…)")
    suggestions = suggest(settings.ACDC_REPO, tuple(c.argv for c in commands))
    if suggestions:
        print("suggested (not added; add one with acdc commands add NAME -- ARGV…):")
        width = max(len(s.name) for s in suggestions)
        for suggestion in suggestions:
            shown = declaring.shown(suggestion.argv)
            print(f"  {suggestion.name:<{width}}  {shown}  ({suggestion.why})")
    sandbox = Sandbox.probe()
    if sandbox.available:
        print(f"sandbox: {sandbox.version or sandbox.bwrap}")
    else:
        print(f"sandbox: none ({sandbox.reason}); every run the model starts needs approval")
    return 0
