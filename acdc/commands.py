"""What the `acdc` subcommands do, once Django is set up (`acdc.cli` parses and sets up).

serve, chat, import-history, export and url. `chat` runs the same turn and the same after-turn
tasks as the browser (`chat.turn`), printing the events instead of rendering them. `serve`
says why it cannot start (a port in use) in one line before any "serving" line, and on
SIGINT or SIGTERM ends the hosted turns as interrupted and stops the file watchers before
Daphne's event loop stops, so the process exits instead of waiting on their threads.
`serve` prints its address with the access token (`?token=…`, acdc.access), on every bind;
`url` prints it again for the server running for the repository.
"""

from __future__ import annotations

import argparse
import asyncio
import errno
import gc
import logging
import socket
import sys
from dataclasses import replace
from pathlib import Path
from urllib.parse import urlencode

from daphne import server as daphne_server
from daphne.cli import CommandLineInterface
from django.conf import settings

# After daphne, which installs Twisted's asyncio reactor on import.
from twisted.internet import defer, reactor

from acdc import chatedits
from acdc.errors import CommandError
from acdc.sockets import ClosingWebSocketFactory
from acdc.terminal import runfile
from acdc.terminal.prepare import ChatRequest, find_session, prepare
from acdc.terminal.printing import log_once_beside_daphne, tool_note
from chat.live.served import served
from chat.llm.runtime import chat_model, unreachable
from chat.repo.edits import journal as edit_journal
from chat.repo.git import is_work_tree
from chat.repo.repomap import engine as repomap_engine
from chat.session import end_dead_turns
from chat.session.setchanges import restore_latest_session
from chat.turn import checking
from chat.turn.afterreply import AfterReply
from chat.turn.events import TurnDelta, TurnFinished, TurnNotice
from chat.turn.turns import TurnInput, TurnRejected, TurnServices, run_turn
from contextcore.controls import printable
from history import selectors
from history.ids import new_turn_id
from history.interchange.bundle import export_text, images_note
from history.interchange.importer import import_history
from history.models import Session

log = logging.getLogger(__name__)
SHUTDOWN_SECONDS = 3.0  # for the turns to store their text; the process then exits anyway


def run(args: argparse.Namespace) -> int:
    if args.command == "serve":
        return _serve(args)
    if args.command == "import-history":
        return _import_history(args)
    if args.command == "export":
        return _export(args)
    if args.command == "url":
        return _url()
    return _chat(args)


def _serve(args: argparse.Namespace) -> int:
    bind = settings.ACDC_BIND
    url = served_address(bind, args.port, settings.ACDC_TOKEN)
    _check_port(bind, args.port)
    warning = _not_git_warning(Path(settings.ACDC_REPO))
    if warning:
        print(f"acdc: warning: {warning}", flush=True)
    # First: with its symbols on disk a restart's map is mostly graph building, which can
    # run while the database is read below; a turn that comes sooner waits for it.
    repomap_engine.warm(served().maps, served().repository.root)
    ended = end_dead_turns()
    if ended:
        print(
            f"acdc: {ended} reply(s) cut off by a stop of the server marked interrupted", flush=True
        )
    for line in edit_journal.recover(served().repository.indexed()):
        print(f"acdc: {line}", flush=True)
    session, notices = restore_latest_session(str(settings.ACDC_REPO), served())
    if session is not None:
        print(f"acdc: restored session {session.id} ({session.display_title})", flush=True)
    for notice in notices:
        print(f"acdc: {notice}", flush=True)
    print(f"acdc: serving {settings.ACDC_REPO} at {url}", flush=True)
    reactor.addSystemEventTrigger("before", "shutdown", _before_shutdown)
    run = _write_run_file(bind, args.port)
    daphne_server.WebSocketFactory = ClosingWebSocketFactory
    log_once_beside_daphne()
    try:
        CommandLineInterface().run(daphne_arguments(bind, args.port))
    finally:
        if run is not None:
            runfile.remove(settings.ACDC_DATA_DIR, run)
    # The heap is dropped whole at exit: collecting it first (litellm's modules make it
    # large) would add a second or more to every stop.
    gc.freeze()
    return 0


def _write_run_file(bind: str, port: int) -> runfile.RunFile | None:
    """Say where this server listens, for `acdc chat` (`acdc.terminal`); the endpoint then
    takes the run file's token, from loopback only."""
    host = runfile.connect_host(bind)
    if host is None:
        return None
    try:
        run = runfile.write(
            settings.ACDC_DATA_DIR, host=host, port=port, repository=str(settings.ACDC_REPO)
        )
    except OSError as exc:
        print(f"acdc: warning: acdc chat will not use this server: {exc}", flush=True)
        return None
    settings.ACDC_RUN_TOKEN = run.token
    return run


def _check_port(bind: str, port: int) -> None:
    """Bind the address as Daphne will (Twisted sets SO_REUSEADDR too) and let it go, so
    a port in use is one line here rather than a log line after "serving"."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            bind, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(address)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            reason = f"port {port} on {bind} is in use (another acdc serve, or another program)"
            raise CommandError(f"{reason}; stop it or choose another port with --port") from None
        if exc.errno == errno.EACCES:
            raise CommandError(f"no permission to listen on port {port} on {bind}") from None
        detail = exc.strerror or str(exc)
        raise CommandError(f"cannot listen on port {port} on {bind}: {detail}") from None


def _not_git_warning(root: Path) -> str:
    """Why the folder will be served without git, or "" (chat.repo.git says what that
    means for the file list)."""
    found = is_work_tree(root)
    if found is None:
        return f"git is not available; serving {root} as a plain folder ({_PLAIN})"
    if not found:
        return f"{root} is not a git repository; serving it as a plain folder ({_PLAIN})"
    return ""


_PLAIN = "no git status; every file in it is listed, .gitignore not applied"


def _before_shutdown() -> defer.Deferred:
    """Twisted's "before shutdown" trigger, run on SIGINT and SIGTERM while the event loop
    still runs: Twisted stops the loop once the Deferred fires."""
    return defer.Deferred.fromFuture(asyncio.ensure_future(_close_hosted_work()))


async def _close_hosted_work() -> None:
    try:
        async with asyncio.timeout(SHUTDOWN_SECONDS):
            await served().close()
    except TimeoutError:
        log.warning("shutdown: hosted turns, file watchers or cache refreshes did not end in time")


FRAME_HEADROOM = 4  # Daphne's frame limit, in multiples of acdc's: a 3 MB paste is answered


def served_address(bind: str, port: int, token: str) -> str:
    """The address `serve` prints, the one way in for a browser (acdc.access); its token
    is escaped, as the page reads it decoded."""
    host = f"[{bind}]" if ":" in bind else bind
    return f"http://{host}:{port}/?{urlencode({'token': token})}"


def _url() -> int:
    """`acdc url`: the address of the `acdc serve` running for the repository, token and
    all, for a person who lost the line it printed."""
    run = runfile.read(settings.ACDC_DATA_DIR)
    if run is None or not runfile.alive(run.pid):
        raise CommandError(f"no acdc serve runs for {settings.ACDC_REPO}; start one: acdc serve")
    print(served_address(run.host, run.port, settings.ACDC_TOKEN))
    return 0


def daphne_arguments(bind: str, port: int) -> list[str]:
    """Daphne's command line. Its own websocket size limit (1 MiB by default) is set well
    above acdc's, so a frame over ACDC_MAX_FRAME_BYTES that the page did not check (a tab
    drawn before a restart with smaller limits, another client) reaches the consumer, which
    answers why it is refused and keeps the socket; Daphne closes the socket (code 1009) on
    a frame over its own limit, and the page then puts the message back in the box and
    connects again (chat.js)."""
    most = str(FRAME_HEADROOM * settings.ACDC_MAX_FRAME_BYTES + 64 * 1024)
    return [
        *("-b", bind, "-p", str(port)),
        *("--websocket-max-message-size", most, "--websocket-max-frame-size", most),
        "acdc.asgi:application",
    ]


def _import_history(args: argparse.Namespace) -> int:
    path = Path(args.path)
    if not path.is_file():
        raise CommandError(f"{path} is not a file")
    bar = ProgressBar("importing") if path.stat().st_size > 1_000_000 else None
    repository, decodes = str(settings.ACDC_REPO), served().decodes
    report = import_history(path, repository=repository, decodes=decodes, progress=bar)
    if bar:
        bar.close()
    print(f"acdc: {report.summary()}", file=sys.stderr)
    return 0


def _export(args: argparse.Namespace) -> int:
    detail = selectors.get_session(session_id=args.session)
    if detail is None:
        raise CommandError(f"there is no session {args.session!r}")
    if note := images_note(detail, args.format, args.images):  # Markdown holds them inline
        print(f"acdc: {note}", file=sys.stderr)
    sys.stdout.write(export_text(detail, args.format))
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
    # One message and out: no tab stays open to keep the cache warm, so lifetimes are
    # chosen without counting on refreshes.
    settings.ACDC_KEEP_WARM = False
    request = chat_request(args)
    session = find_session(request)
    apply, message = getattr(args, "apply", False), getattr(args, "commit", None)
    if apply or message is not None:
        _check_model(args, session)
    if getattr(args, "check", None):  # before anything is sent, as through the server
        reason = checking.refusal(str(settings.ACDC_REPO), args.check, served().commands)
        if reason:
            raise CommandError(reason)
    prepared = prepare(request, session, served())
    print(f"session: {prepared.session_id}", file=sys.stderr)
    for problem in prepared.problems:
        print(f"acdc: {problem}", file=sys.stderr)
    check, allowed = getattr(args, "check", None) or "", frozenset(args.allow_mcp)
    chatting = _converse(prepared.session_id, args.message, args.model, apply, check, allowed)
    status = asyncio.run(chatting)
    if message is not None and status == 0:
        status = chatedits.commit_files(prepared.session_id, message, getattr(args, "hooks", "ask"))
    return status


def _check_model(args: argparse.Namespace, session: Session | None) -> None:
    """--apply and --commit in this process (no `acdc serve` runs for the repository)
    need a model this environment reaches: never a dry run that pretends to have applied
    nothing, nor a provider call bound to fail on its key."""
    model = chat_model(args.model or (session.model if session else ""))
    reason = unreachable(model, chosen=bool(args.model))
    if reason:
        flag = "--apply" if args.apply else "--commit"
        raise CommandError(
            f"{flag}: {reason}, and no acdc serve runs for {settings.ACDC_REPO}; start "
            "`acdc serve` there (the chat then goes through it), or set the key, or "
            "choose a model with --model"
        )


def chat_request(args: argparse.Namespace) -> ChatRequest:
    return ChatRequest(
        message=args.message,
        session=args.session or "",
        new=bool(args.new),
        model=args.model,
        add=list(args.add),
        drop=list(args.drop),
        pin=list(args.pin),
        unpin=list(args.unpin),
        allow_secret=list(getattr(args, "allow_secret", [])),
        instructions=getattr(args, "instructions", None),
    )


async def _converse(
    session_id: str, message: str, model: str, apply: bool, check: str, allow_mcp: frozenset[str]
) -> int:
    """`acdc chat` in this process: the turn; with `--apply --check NAME` the check after it
    and at most one round to fix it (`chat.turn.afterreply`), 0 only when the last run
    passed."""
    sent = TurnInput(session_id, message, model=model, apply_now=apply, allow_mcp=allow_mcp)
    status, after = await _stream_to_terminal(sent, check or None)
    if after.fix is not None:
        print(f"acdc: asking the model to fix what {check} reported (once)", file=sys.stderr)
        sent = replace(sent, user_text=after.fix.text, apply_now=after.fix.apply)
        status, after = await _stream_to_terminal(sent, check, fixes=0)
    if not check:
        return status
    return 0 if status == 0 and after.ran is not None and after.ran.passed else 1


async def _stream_to_terminal(
    sent: TurnInput, check: str | None, fixes: int = 1
) -> tuple[int, AfterReply]:
    """One turn, printed, and its end (`AfterReply`, with the terminal's `check`)."""
    printed = 0

    async def emit(event) -> None:
        nonlocal printed
        if isinstance(event, TurnDelta | TurnFinished):
            sys.stdout.write(printable(event.text[printed:]))  # no terminal is the model's
            printed = len(event.text)
            if isinstance(event, TurnFinished) and printed:
                sys.stdout.write("\n")
            sys.stdout.flush()
        elif isinstance(event, TurnNotice):
            print(f"acdc: {printable(event.text)}", file=sys.stderr)
        elif note := tool_note(event):
            print(f"acdc: {note}", file=sys.stderr)

    # As in the browser: the due checkpoint, then compaction (or automatic rollback), from
    # the turn's own context; then the edits and the check.
    terminal = chatedits.Terminal(apply=sent.apply_now)
    sent = replace(sent, turn_id=sent.turn_id or new_turn_id())
    runs, repository = served().commands, served().repository
    after = AfterReply(terminal, sent.turn_id, runs, repository, sent.model, check, fixes, 0)
    try:
        finished = await run_turn(sent, TurnServices(emit, wiring=served(), after=after))
    except TurnRejected as exc:
        raise CommandError(str(exc)) from None
    finally:
        if served().repository.mcp is not None:  # its servers stop before the loop does
            await served().repository.mcp.close()
    if finished.status == "error":
        print(f"acdc: error: {finished.error}", file=sys.stderr)
        return 1, after
    return (1 if finished.status == "interrupted" else terminal.status), after
