"""The `acdc` command: serve the app, chat from a terminal, and the maintenance commands.

Every error a user can cause (a bad repository path, a bind without a token, an unknown
session or model) ends as one line on stderr and a non-zero exit, never a traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Sequence

EXIT_USAGE = 2


class CommandError(Exception):
    pass


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

    importer = commands.add_parser("import-history", help="import an AC-DC history.jsonl")
    importer.add_argument("path", help="the history.jsonl file (images/ beside it)")
    importer.add_argument("--repo", help="repository the sessions belong to (default: .)")

    export = commands.add_parser("export", help="write one session as Markdown or JSON Lines")
    export.add_argument("session", help="the session id")
    export.add_argument("--format", choices=("md", "jsonl"), default="md")
    export.add_argument("--repo", help="repository folder (default: ACDC_REPO or .)")

    bench = commands.add_parser("bench", help="run a benchmark (cache, assembly, all)")
    bench.add_argument("bench_args", nargs=argparse.REMAINDER)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _main(argv)
    except BrokenPipeError:
        # The reader (`| head`, a closed terminal) went away: stop quietly, like cat does.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


def _main(argv: Sequence[str] | None) -> int:
    args = build_parser().parse_args(argv)
    repo = getattr(args, "repo", None)
    if repo:
        os.environ["ACDC_REPO"] = repo
    if getattr(args, "bind", None):
        os.environ["ACDC_BIND"] = args.bind
    if args.command == "bench":
        from acdc.bench import main as bench_main

        return bench_main(args.bench_args)
    try:
        _setup_django()
        if args.command == "serve":
            return _serve(args)
        if args.command == "import-history":
            return _import_history(args)
        if args.command == "export":
            return _export(args)
        return _chat(args)
    except CommandError as exc:
        print(f"acdc: error: {exc}", file=sys.stderr)
        return EXIT_USAGE


def _setup_django() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "acdc.settings")
    import django
    from django.core.exceptions import ImproperlyConfigured

    try:
        django.setup()
    except ImproperlyConfigured as exc:
        raise CommandError(str(exc)) from None
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)


def _serve(args: argparse.Namespace) -> int:
    from daphne.cli import CommandLineInterface
    from django.conf import settings

    from acdc.env import is_loopback

    bind, token = settings.ACDC_BIND, settings.ACDC_TOKEN
    if not is_loopback(bind) and not token:
        raise CommandError(
            f"refusing to listen on {bind} without ACDC_TOKEN: anyone who can reach it could "
            "read the repository. Set ACDC_TOKEN to a long random string."
        )
    host = f"[{bind}]" if ":" in bind else bind
    url = f"http://{host}:{args.port}/" + (f"?token={token}" if token else "")
    from chat.llm.sdk import warm_up_in_background
    from chat.turn.context import restore_latest_session

    warm_up_in_background()
    session, notices = restore_latest_session(str(settings.ACDC_REPO))
    if session is not None:
        print(f"acdc: restored session {session.id} ({session.display_title})", flush=True)
    for notice in notices:
        print(f"acdc: {notice}", flush=True)
    print(f"acdc: serving {settings.ACDC_REPO} at {url}", flush=True)
    CommandLineInterface().run(["-b", bind, "-p", str(args.port), "acdc.asgi:application"])
    return 0


def _import_history(args: argparse.Namespace) -> int:
    from pathlib import Path

    from django.conf import settings

    from history.importer import import_history

    path = Path(args.path)
    if not path.is_file():
        raise CommandError(f"{path} is not a file")
    bar = ProgressBar("importing") if path.stat().st_size > 1_000_000 else None
    report = import_history(path, repository=str(settings.ACDC_REPO), progress=bar)
    if bar:
        bar.close()
    print(f"acdc: {report.summary()}", file=sys.stderr)
    return 0


def _export(args: argparse.Namespace) -> int:
    from history import selectors
    from history.export import session_to_jsonl, session_to_markdown

    session = selectors.session_get(session_id=args.session)
    if session is None:
        raise CommandError(f"there is no session {args.session!r}")
    messages = selectors.session_messages(session=session)
    writer = session_to_markdown if args.format == "md" else session_to_jsonl
    sys.stdout.write(writer(session, messages))
    return 0


class ProgressBar:
    """A one-line progress bar on stderr, redrawn at most every 1% of the work."""

    def __init__(self, label: str, width: int = 30) -> None:
        self.label, self.width, self.shown = label, width, -1

    def __call__(self, done: int, total: int) -> None:
        percent = 100 * done // total if total else 100
        if percent != self.shown:
            self.shown = percent
            filled = self.width * percent // 100
            bar = "#" * filled + "-" * (self.width - filled)
            print(f"\r{self.label} [{bar}] {percent:3d}%", end="", file=sys.stderr, flush=True)

    def close(self) -> None:
        print(file=sys.stderr)


def _chat(args: argparse.Namespace) -> int:
    from django.conf import settings

    from chat.llm.runtime import chat_model
    from history import selectors, services

    repository = str(settings.ACDC_REPO)
    if args.session:
        session = selectors.session_get(session_id=args.session)
        if session is None or session.repository != repository:
            raise CommandError(f"there is no session {args.session!r} for {repository}")
    else:
        session = None if args.new else selectors.session_latest(repository=repository)
        if session is None:
            session = services.session_create(repository=repository, model=chat_model(args.model))
    print(f"session: {session.id}", file=sys.stderr)
    if args.add or args.drop or args.pin or args.unpin:
        from chat.turn.context import select_files

        problems = select_files(
            session.id,
            add=args.add,
            drop=args.drop,
            pin=args.pin,
            unpin=args.unpin,
            model=args.model,
        )
        for problem in problems:
            print(f"acdc: {problem}", file=sys.stderr)
    return asyncio.run(_stream_to_terminal(session.id, args.message, args.model))


async def _stream_to_terminal(session_id: str, message: str, model: str) -> int:
    from chat.turn.events import TurnDelta, TurnFinished, TurnNotice
    from chat.turn.turns import TurnRejected, run_turn

    printed = 0

    async def emit(event) -> None:
        nonlocal printed
        if isinstance(event, TurnDelta | TurnFinished):
            sys.stdout.write(event.text[printed:])
            sys.stdout.flush()
            printed = len(event.text)
        elif isinstance(event, TurnNotice):
            print(f"acdc: {event.text}", file=sys.stderr)

    try:
        finished = await run_turn(session_id=session_id, user_text=message, model=model, emit=emit)
    except TurnRejected as exc:
        raise CommandError(str(exc)) from None
    if printed:
        sys.stdout.write("\n")
    if finished.status == "error":
        print(f"acdc: error: {finished.error}", file=sys.stderr)
        return 1
    await _after_turn(session_id)
    return 0


async def _after_turn(session_id: str) -> None:
    """As in the browser: the due checkpoint, then compaction past the trigger."""
    from channels.db import database_sync_to_async

    from chat.turn import checkpoints
    from chat.turn.compaction import CompactionRefused, compact_session, needs_compaction

    await database_sync_to_async(checkpoints.take_if_due)(session_id)
    if not await database_sync_to_async(needs_compaction)(session_id):
        return
    print("acdc: compacting the history…", file=sys.stderr)
    try:
        outcome = await compact_session(session_id)
    except CompactionRefused as exc:
        print(f"acdc: {exc}", file=sys.stderr)
        return
    print(f"acdc: {outcome.note}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
