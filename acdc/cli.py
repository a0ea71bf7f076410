"""The `acdc` command: serve the app, chat from a terminal, and the maintenance commands.

Every error a user can cause (a bad repository path, an unknown session or model) ends as
one line on stderr and exit status 2, never a traceback; a fault of the database or the
data folder (damaged, not writable, locked by another program) is one line saying what to
do (`history.dbfaults`) and exit status 1.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
from collections.abc import Callable, Sequence

import django
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command
from django.db import DatabaseError

from acdc import bench
from acdc.errors import CommandError
from acdc.terminal.client import chat_through_server
from history import dbfaults
from history.dbfaults import DatabaseFault

EXIT_FAULT = 1
EXIT_USAGE = 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="acdc", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)

    serve = commands.add_parser("serve", help="serve the browser app for a repository")
    serve.add_argument("repo", nargs="?", help="repository folder (default: ACDC_REPO or .)")
    serve.add_argument("--bind", help="address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=int(os.environ.get("PORT") or 8000))

    chat = commands.add_parser("chat", help="send one message and stream the reply")
    chat.add_argument("message", help="the message to send")
    chat.add_argument("--repo", help="repository folder (default: ACDC_REPO or .)")
    which = chat.add_mutually_exclusive_group()
    which.add_argument("--session", help="continue this session id")
    which.add_argument("--new", action="store_true", help="start a new session")
    chat.add_argument("--model", default="", help="any litellm model string")
    chat.add_argument(
        "--add",
        action="append",
        default=[],
        metavar="PATH",
        help="select a file into the context before sending (repeatable)",
    )
    chat.add_argument(
        "--drop",
        action="append",
        default=[],
        metavar="PATH",
        help="drop a file from the context before sending (repeatable)",
    )
    chat.add_argument(
        "--pin",
        action="append",
        default=[],
        metavar="PATH",
        help="pin a file: never shed to fit the window (repeatable)",
    )
    chat.add_argument(
        "--unpin", action="append", default=[], metavar="PATH", help="remove a pin (repeatable)"
    )
    chat.add_argument(
        "--allow-secret",
        action="append",
        default=[],
        metavar="PATH",
        help="confirm that a secret-shaped file given to --add or --pin may be sent (repeatable)",
    )
    chat.add_argument(
        "--instructions",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="send the project instructions (AGENTS.md, CLAUDE.md …) in this session, or not "
        "(--no-instructions); kept for the session, as the page's switch",
    )
    chat.add_argument(
        "--allow-mcp",
        action="append",
        default=[],
        metavar="SERVER",
        help="let the model call this MCP server's tools that are not read-only, without "
        "asking (repeatable; runs the chat in this process)",
    )
    chat.add_argument("--apply", action="store_true", help="apply the reply's edits (ACDC_EDITS)")
    chat.add_argument(
        "--check",
        metavar="NAME",
        help="with --apply: then run the declared command NAME; when it fails, give the model "
        "one round to fix it, apply that and run NAME again (exit 0 only when it passed)",
    )
    chat.add_argument(
        "--commit",
        metavar="MESSAGE",
        help="then git-commit exactly the files acdc changed in the session (ACDC_EDITS)",
    )
    hooks = chat.add_mutually_exclusive_group()
    hooks.add_argument(
        "--run-changed-hooks",
        dest="hooks",
        action="store_const",
        const="run",
        default="ask",
        help="with --commit: let git run a hook that acdc's edits changed (else a terminal "
        "is asked, and a script commits nothing)",
    )
    hooks.add_argument(
        "--no-hooks",
        dest="hooks",
        action="store_const",
        const="skip",
        help="with --commit: run no git hook at all for this commit",
    )

    importer = commands.add_parser(
        "import-history",
        help="import an AC-DC history.jsonl (lines that cannot be stored are skipped, "
        "counted and named by reason)",
    )
    importer.add_argument("path", help="the history.jsonl file (images/ beside it)")
    importer.add_argument("--repo", help="repository the sessions belong to (default: .)")

    export = commands.add_parser("export", help="write one session as Markdown or JSON Lines")
    export.add_argument("session", help="the session id")
    export.add_argument("--format", choices=("md", "jsonl"), default="md")
    export.add_argument("--images", metavar="DIR", help="write the session's images into DIR")
    export.add_argument("--repo", help="repository folder (default: ACDC_REPO or .)")

    url = commands.add_parser(
        "url", help="print the address of the running acdc serve, with its access token"
    )
    url.add_argument("--repo", help="repository folder (default: ACDC_REPO or .)")

    _add_commands_parser(commands.add_parser)
    _add_mcp_parser(commands.add_parser)

    bench = commands.add_parser("bench", help="run a benchmark (cache, assembly, all)")
    bench.add_argument("bench_args", nargs=argparse.REMAINDER)
    return parser


def _add_commands_parser(add_parser: Callable[..., argparse.ArgumentParser]) -> None:
    declared = add_parser("commands", help="the commands the model may run (list, add, remove)")
    declared.add_argument("--repo", help="repository folder (default: ACDC_REPO or .)")
    actions = declared.add_subparsers(dest="action")
    add = actions.add_parser(
        "add",
        help="declare a command: acdc commands add NAME [--timeout S] [--network] "
        "[--read PATH]… -- ARGV…",
    )
    add.add_argument("name", help="what the model calls it (test, lint …)")
    add.add_argument("--timeout", type=int, metavar="SECONDS", help="default 120")
    add.add_argument("--network", action="store_true", help="let it reach the network")
    add.add_argument(
        "--read",
        action="append",
        default=[],
        metavar="PATH",
        help="a folder or file outside the work tree its runs may read (repeatable)",
    )
    add.add_argument("rest", nargs="*", help=argparse.SUPPRESS)  # an argv given without --
    remove = actions.add_parser("remove", help="remove a declared command")
    remove.add_argument("name")


def _add_mcp_parser(add_parser: Callable[..., argparse.ArgumentParser]) -> None:
    mcp = add_parser("mcp", help="the MCP servers acdc may start (list, add, remove)")
    mcp.add_argument("--repo", help="repository folder (default: ACDC_REPO or .)")
    actions = mcp.add_subparsers(dest="action")
    add = actions.add_parser(
        "add",
        help="declare a server: acdc mcp add NAME [--network] [--timeout S] -- ARGV…, "
        "or acdc mcp add NAME --url URL [--header 'K: V']…",
    )
    add.add_argument("name", help="its name; its tools reach the model as mcp__NAME__TOOL")
    add.add_argument("--url", help="a Streamable HTTP endpoint (instead of -- ARGV…)")
    add.add_argument(
        "--header", action="append", default=[], metavar="'K: V'", help="sent to --url"
    )
    add.add_argument("--timeout", type=int, metavar="SECONDS", help="per call, default 60")
    add.add_argument("--network", action="store_true", help="let a stdio server reach the net")
    add.add_argument("rest", nargs="*", help=argparse.SUPPRESS)  # an argv given without --
    actions.add_parser("list", help="list the declared servers and the repository's suggestions")
    remove = actions.add_parser("remove", help="remove a declared server")
    remove.add_argument("name")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line; `acdc commands add`'s ARGV is everything after its `--`, taken
    apart before argparse sees it (argparse would read the argv's own options)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    command_argv = None
    if argv[:1] in (["commands"], ["mcp"]) and "add" in argv and "--" in argv:
        at = argv.index("--")
        argv, command_argv = argv[:at], argv[at + 1 :]
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "chat" and args.check and not args.apply:
        parser.error("--check needs --apply: the check runs once the reply's edits are written")
    if args.command in ("commands", "mcp"):
        args.argv = command_argv
    return args


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _main(argv)
    except BrokenPipeError:
        # The reader (`| head`, a closed terminal) went away: stop quietly, like cat does.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


def _main(argv: Sequence[str] | None) -> int:
    args = parse_args(argv)
    repo = getattr(args, "repo", None)
    if repo:
        os.environ["ACDC_REPO"] = repo
    if getattr(args, "bind", None):
        os.environ["ACDC_BIND"] = args.bind
    if args.command == "bench":
        return bench.main(args.bench_args)
    if args.command == "chat":
        # Before Django: through a running server, the reply needs none of it here.
        status = chat_through_server(args)
        if status is not None:
            return status
    try:
        _setup_django()
        # Only now: the commands import Django models, which need django.setup() first.
        from acdc import commands, declarations, mcpservers

        if args.command == "commands":
            return declarations.run(args)
        if args.command == "mcp":
            return mcpservers.run(args)
        return commands.run(args)
    except CommandError as exc:
        print(f"acdc: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except DatabaseFault as exc:
        print(f"acdc: error: {exc}", file=sys.stderr)
        return EXIT_FAULT
    except (DatabaseError, sqlite3.DatabaseError) as exc:
        line = dbfaults.start_fault(exc)
        if line is None:
            raise  # not a fault of the database itself: a bug, with its traceback
        print(f"acdc: error: {line}", file=sys.stderr)
        return EXIT_FAULT


def _setup_django() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "acdc.settings")
    try:
        django.setup()
    except ImproperlyConfigured as exc:
        raise CommandError(str(exc)) from None
    except OSError as exc:  # the settings make the data folder and its secret key
        line = dbfaults.start_fault(exc)
        if line is None:
            raise
        raise DatabaseFault(line) from None
    warning = dbfaults.check_empty_database()
    if warning:
        print(f"acdc: warning: {warning}", file=sys.stderr)
    dbfaults.check_integrity()
    call_command("migrate", verbosity=0, interactive=False)
    from history.search import pending  # needs the apps loaded

    pending.caught_up()  # what the search indexes took on read (0028) before a stop


if __name__ == "__main__":
    sys.exit(main())
