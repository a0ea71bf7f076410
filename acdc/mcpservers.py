"""`acdc mcp`: the person declares, lists and removes the MCP servers acdc may start.

`acdc mcp add NAME [--network] [--timeout S] -- ARGV…` declares a stdio server (run in the
commands' sandbox), `acdc mcp add NAME --url URL [--header 'K: V']…` a Streamable HTTP one,
`acdc mcp remove NAME` drops one and `acdc mcp list` lists them with the suggestions the
repository's `.mcp.json` makes (offered, never added or started). Declarations are acdc's
data (ACDC_DATA_DIR), not the work tree's. A bad declaration is one line on stderr, exit 2.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from django.conf import settings

from acdc.declarations import run_action
from acdc.errors import CommandError
from chat.repo.mcp import servers as declaring
from chat.repo.mcp.mcpjson import suggest


def run(args: argparse.Namespace) -> int:
    return run_action(args, Path(settings.ACDC_DATA_DIR), _add, declaring.remove, _list)


def _add(data: Path, args: argparse.Namespace) -> int:
    if args.rest:
        raise CommandError(
            "put the server's command after --, for example: "
            "acdc mcp add time -- python -m mcp_server_time"
        )
    added = declaring.add(
        data,
        args.name,
        argv=args.argv or (),
        url=args.url or "",
        headers=args.header,
        timeout_seconds=args.timeout,
        network=args.network,
    )
    print(f"declared {added.name}: {added.shown}  ({_terms(added)})")
    return 0


def _terms(server: declaring.Server) -> str:
    if server.transport == "http":
        names = ", ".join(k for k, _ in server.headers)
        return f"Streamable HTTP, timeout {server.timeout_seconds} s" + (
            f", headers {names}" if names else ""
        )
    network = "with network" if server.network else "no network"
    return f"stdio in the sandbox, timeout {server.timeout_seconds} s, {network}"


def _list(data: Path) -> int:
    servers = declaring.declared(data)
    print("MCP servers:")
    width = max((len(s.name) for s in servers), default=0)
    for server in servers:
        print(f"  {server.name:<{width}}  {server.shown}  ({_terms(server)})")
    if not servers:
        print("  none declared (acdc mcp add NAME -- ARGV…, or --url URL)")
    suggestions = suggest(Path(settings.ACDC_REPO), frozenset(s.name for s in servers))
    if suggestions:
        print("suggested by the repository (not added, not started; add one with acdc mcp add):")
        width = max(len(s.name) for s in suggestions)
        for suggestion in suggestions:
            name = f"{suggestion.name:<{width}}"
            print(f"  acdc mcp add {name} {suggestion.command}  ({suggestion.why})")
    return 0
