"""The server's side of `acdc chat` through `acdc serve`: `POST /cli/chat/` and
`POST /cli/commit/`, loopback only.

An ASGI app in front of Django's (`acdc.asgi`): it answers its paths and hands every other
request on. A request must come from a loopback address and carry the run's token
(`Authorization: Bearer`, the token of the run file `acdc serve` wrote; `acdc.terminal.runfile`),
compared in constant time; ACDC_TOKEN plays no part, the run file is the proof of being
this machine's user. The body is the chat's flags as JSON; the answer streams JSON lines:
`{"session": id}`, `{"note": text}` (stderr), `{"text": piece}` (stdout, as the reply
grows), `{"diff": text}`, then `{"exit": status}`, with `{"error": text}` before it on a
failure. The message becomes a turn of the session's `TurnHost` like a tab's: it takes the
session's lease, and every open tab sees it stream. With `"apply": true` the turn's reply
applies whole when it ends, as `acdc chat --apply` in-process (`acdc.chatedits`); a write
that fails is one error line. `/cli/commit/` is `--commit` after the chat ended well: the
same answer as in-process, or `{"hooks": [...]}` when a hook the session's edits changed
waits for the person's word. The client going away stops the reply (Ctrl-C, as in the
in-process `acdc chat`). Non-goals: images.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
from dataclasses import dataclass
from ipaddress import ip_address
from typing import Any

from channels.db import database_sync_to_async
from django.conf import settings

from acdc import chatedits
from acdc.access import bearer_token
from acdc.errors import CommandError
from acdc.terminal.prepare import ChatRequest, find_session, prepare
from acdc.terminal.printing import tool_note
from chat.live.protocol import ClientFrame, FrameError, parse_frame
from chat.live.served import served
from chat.live.turnhost import ask_stop
from chat.repo import edittools
from chat.turn import checking
from chat.turn.branches.kinds import SentMessage
from chat.turn.checking import CheckRun
from chat.turn.events import (
    CompactionEnded,
    CompactionStarted,
    ToolCallFinished,
    TurnDelta,
    TurnFinished,
    TurnNotice,
)

log = logging.getLogger(__name__)
PATH = "/cli/chat/"
COMMIT_PATH = "/cli/commit/"
_LISTS = ("add", "drop", "pin", "unpin", "allow_secret")
REPLY_TO = "acdc-chat"  # no tab's channel: refusals go to the watcher


class TerminalEndpoint:
    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> Any:
        if scope["type"] != "http" or scope["path"] not in (PATH, COMMIT_PATH):
            return await self.app(scope, receive, send)
        refusal = _refusal(scope)
        if refusal:
            return await _plain(send, *refusal)
        body = await _body(receive, 2 * settings.ACDC_MAX_FRAME_BYTES)
        if body is None:
            return await _plain(send, 413, "acdc: the request is too large")
        stream = _Stream(send)
        await stream.start()
        try:
            if scope["path"] == COMMIT_PATH:
                await _commit(stream, _json(body))
            else:
                request, frame = _parse(body)
                await _converse(stream, request, frame, receive)
        except CommandError as exc:
            await stream.line(error=str(exc), exit=2)
        except Exception:
            log.exception("acdc chat through the server failed")
            await stream.line(error="something went wrong on the server; see its log", exit=1)
        await stream.end()


def _refusal(scope: dict) -> tuple[int, str] | None:
    expected = getattr(settings, "ACDC_RUN_TOKEN", "")
    client = (scope.get("client") or ("", 0))[0]
    if not expected or not _loopback(client):
        return 403, "acdc: acdc chat talks to this server over loopback only"
    if scope["method"] != "POST":
        return 405, "acdc: POST the chat's flags as JSON"
    given = next(
        (bearer_token(v.decode("latin-1")) for k, v in scope["headers"] if k == b"authorization"),
        None,
    )
    if not given or not secrets.compare_digest(given.encode(), expected.encode()):
        return 403, "acdc: wrong or missing run token (read from the server's run file)"
    return None


def _loopback(address: str) -> bool:
    try:
        return ip_address(address).is_loopback
    except ValueError:
        return False


async def _body(receive: Any, most: int) -> bytes | None:
    parts, size = [], 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return b""
        parts.append(message.get("body", b""))
        size += len(parts[-1])
        if size > most:
            return None
        if not message.get("more_body"):
            return b"".join(parts)


def _json(body: bytes) -> dict:
    try:
        raw = json.loads(body)
    except ValueError:
        raise CommandError("the request is not JSON") from None
    if not isinstance(raw, dict) or not isinstance(raw.get("message"), str):
        raise CommandError("the request must be a JSON object with a message")
    return raw


def _parse(body: bytes) -> tuple[ChatRequest, ClientFrame]:
    raw = _json(body)
    texts = {name: raw.get(name) or "" for name in ("session", "model")}
    lists = {name: raw.get(name) or [] for name in _LISTS}
    if not all(isinstance(v, str) for v in texts.values()) or not all(
        isinstance(v, list) and all(isinstance(p, str) for p in v) for v in lists.values()
    ):
        raise CommandError("session and model are text, the paths lists of text")
    instructions = raw.get("instructions")
    if instructions is not None and not isinstance(instructions, bool):
        raise CommandError("instructions is true, false or absent")
    if not isinstance(raw.get("apply", False), bool):
        raise CommandError("apply is true or false")
    if not isinstance(raw.get("check") or "", str):
        raise CommandError("check is the name of a declared command")
    request = ChatRequest(
        message=raw["message"],
        new=bool(raw.get("new")),
        instructions=instructions,
        apply=raw.get("apply", False),
        check=raw.get("check") or "",
        **texts,
        **lists,
    )
    wire = json.dumps({"message": request.message, "model": request.model})
    try:  # the page's rules for a message (size, encodable text)
        parse_frame(wire, None, max_bytes=settings.ACDC_MAX_FRAME_BYTES)
    except FrameError as exc:
        raise CommandError(str(exc)) from None
    # Always a message: "/compact" typed here is sent as written, as in-process.
    return request, ClientFrame(action="send", message=request.message, model=request.model)


async def _converse(stream: _Stream, request: ChatRequest, frame: ClientFrame, receive) -> None:
    prepared = await database_sync_to_async(_prepare)(request)
    await stream.line(session=prepared.session_id)
    for problem in prepared.problems:
        await stream.line(note=problem)
    status, ran, fix = await _round(stream, request, frame, prepared.session_id, receive)
    if ran is not None and fix is not None and status != 2:
        # The one fix round (`chat.turn.afterreply`; --check, or the session's setting):
        # acdc's message, its edits applied, the check run again; with --check the exit
        # status is the last run's.
        await stream.line(note=f"asking the model to fix what {ran.name} reported (once)")
        status, ran, _ = await _round(stream, request, fix, prepared.session_id, receive, 0)
    if request.check and status != 2:
        status = 0 if status == 0 and ran is not None and ran.passed else 1
    await stream.line(exit=status)


def _prepare(request: ChatRequest):
    if request.check:  # before anything is sent: a name that cannot run is a usage error
        if not request.apply:
            raise CommandError("--check needs --apply: the check runs once the edits are written")
        reason = checking.refusal(str(settings.ACDC_REPO), request.check, served().commands)
        if reason:
            raise CommandError(reason)
    return prepare(request, find_session(request), served())


async def _round(stream, request, frame, session_id, receive, fixes: int = 1) -> tuple:
    """One turn of the chat (a message frame, or the fix round's message), relayed; its
    exit status, the check run after it, and the fix round it asks for."""
    watcher = _Watcher(apply_edits=request.apply, check=request.check, fixes=fixes)
    gone = asyncio.create_task(_stop_when_gone(receive, session_id, watcher))
    try:
        await served().host.submit(session_id, frame, REPLY_TO, watcher)
        status = await _relay(stream, watcher, session_id, request.apply)
    finally:
        gone.cancel()
    for ran in watcher.checks:
        await stream.line(check=ran.line(), output="" if ran.passed else ran.printed)
    return status, (watcher.checks[-1] if watcher.checks else None), watcher.fix


async def _stop_when_gone(receive: Any, session_id: str, watcher: _Watcher) -> None:
    """The client went away (Ctrl-C) before the reply ended: stop it, as in-process."""
    while (await receive())["type"] != "http.disconnect":
        pass
    if not watcher.ended:
        await ask_stop(session_id)


async def _relay(stream: _Stream, watcher: _Watcher, session_id: str, apply: bool) -> int:
    printed, finished, refused = 0, None, ""
    while (event := await watcher.queue.get()) is not None:
        if isinstance(event, _Refused):
            refused = event.text
        elif isinstance(event, CheckRun):
            watcher.checks.append(event)
        elif isinstance(event, SentMessage):  # the fix round, sent once this turn ended
            watcher.fix = event
        elif isinstance(event, TurnDelta | TurnFinished):
            if len(event.text) > printed:
                await stream.line(text=event.text[printed:])
            printed = max(printed, len(event.text))
            if isinstance(event, TurnFinished):
                finished = event
                if printed:
                    await stream.line(text="\n")
        elif isinstance(event, TurnNotice):
            await stream.line(note=event.text)
        elif isinstance(event, ToolCallFinished):
            await stream.line(note=tool_note(event))
        elif isinstance(event, CompactionStarted):
            await stream.line(note="compacting the history…")
        elif isinstance(event, CompactionEnded) and event.text:
            await stream.line(note=event.text)
    if finished is None:
        await stream.line(error=refused or "the server stopped before the reply")
        return 2
    if finished.status == "error":
        await stream.line(error=finished.error)
        return 1
    if finished.status == "interrupted":
        return 1
    return await _edits(stream, session_id, finished.turn_id, apply)


async def _edits(stream: _Stream, session_id: str, turn_id: str, apply: bool) -> int:
    """The turn's proposed edits, as `chatedits.show` prints them in-process; the status."""
    if not edittools.enabled():
        return 0
    turn_edits = database_sync_to_async(chatedits.turn_edits)
    try:
        found = await turn_edits(session_id, turn_id, apply=apply)
    except OSError as exc:  # the apply code says why in a notice; this is what it did not
        await stream.line(error=chatedits.write_failure(exc))
        return 1
    for diff in found.diffs:
        await stream.line(diff=diff)
    for note in found.notes:
        await stream.line(note=note)
    return 0 if found.all_applied else 1


async def _commit(stream: _Stream, raw: dict) -> None:
    """`--commit` after the chat: the files acdc changed in the session, or why not."""
    session, hooks = raw.get("session"), raw.get("hooks", "ask")
    if not isinstance(session, str) or not session or hooks not in ("ask", "run", "skip"):
        raise CommandError("a commit names its session, and hooks is ask, run or skip")
    find = database_sync_to_async(find_session)
    await find(ChatRequest(message="", session=session))  # this repository's, or a refusal
    commit = database_sync_to_async(chatedits.commit_answer)
    answer = await commit(session, raw["message"], hooks)
    if answer.hooks:
        await stream.line(hooks=answer.hooks, exit=answer.status)
    else:
        await stream.line(note=answer.line, exit=answer.status)


@dataclass(frozen=True)
class _Refused:
    text: str


class _Watcher:
    """The `TurnWatcher` of one request: what the turn tells it, queued for the stream."""

    def __init__(self, *, apply_edits: bool = False, check: str = "", fixes: int = 1) -> None:
        self.queue: asyncio.Queue = asyncio.Queue()
        self.ended = False
        self.apply_edits = apply_edits  # read by the turn host for this turn alone
        self.check = check  # --check NAME: run after the edits applied (the turn host)
        self.fixes = fixes  # fix rounds left: `acdc chat` counts its own
        self.checks: list[CheckRun] = []
        self.fix: SentMessage | None = None

    async def event(self, event) -> None:
        self.queue.put_nowait(event)

    async def refused(self, text: str) -> None:
        self.queue.put_nowait(_Refused(text))

    def done(self) -> None:
        self.ended = True
        self.queue.put_nowait(None)


class _Stream:
    def __init__(self, send: Any) -> None:
        self.send = send

    async def start(self) -> None:
        headers = [(b"content-type", b"application/x-ndjson"), (b"cache-control", b"no-store")]
        await self.send({"type": "http.response.start", "status": 200, "headers": headers})

    async def line(self, **fields: Any) -> None:
        body = (json.dumps(fields) + "\n").encode()
        await self.send({"type": "http.response.body", "body": body, "more_body": True})

    async def end(self) -> None:
        await self.send({"type": "http.response.body", "body": b""})


async def _plain(send: Any, status: int, text: str) -> None:
    headers = [(b"content-type", b"text/plain; charset=utf-8")]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": text.encode()})
