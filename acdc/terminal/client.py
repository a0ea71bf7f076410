"""`acdc chat` as a client of the `acdc serve` that serves the repository, when one does.

Read before Django is set up, so a reply through the server costs no Django, litellm or
database start: this module imports the standard library, the run file and
`contextcore.controls` (plain Python) only. The server
is used when the data folder holds its run file (`acdc.terminal.runfile`) for this very
repository, its pid is alive and it answers within `CONNECT_SECONDS`; otherwise
`chat_through_server` returns None and the chat runs in this process, after a one-line
note when a server was expected (a file left by a killed server is removed once its pid is
gone). Once the message is sent there is no fallback: the server has it, and the outcome
is the server's. `--apply` and `--commit` go the same way (the server holds the provider's
key): the reply's edits apply there, and the commit is a second request once the chat ended
well, asking this terminal about a hook acdc's edits changed (`acdc.terminal.consent`).
Streams what the endpoint sends (`acdc.terminal.endpoint`): the reply on stdout as it
grows, the rest on stderr; the exit status is the in-process one. Whatever the server sends
reaches the terminal through `printable`: no control sequence but colours, whoever wrote it.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import socket
import sys
from pathlib import Path

from acdc.terminal import consent, runfile
from acdc.terminal.runfile import RunFile
from contextcore.controls import printable

CONNECT_SECONDS = 1.0  # a stale run file must not hang the command
ANSWER_SECONDS = 5.0  # the endpoint answers before any work; the reply itself may take long
EXIT_FAULT = 1
PATH = "/cli/chat/"
COMMIT_PATH = "/cli/commit/"


def chat_through_server(args: argparse.Namespace) -> int | None:
    """The exit status of the chat run by the server, or None: run it in this process."""
    if getattr(args, "allow_mcp", None):  # the server's chat endpoint does not take it
        return None
    run = _server_for(_repository())
    if run is None:
        return None
    where = _where(run)
    try:
        response = _send(run, PATH, _request(args))
    except (OSError, http.client.HTTPException) as exc:
        _note(f"no answer from {where}: {_reason(exc)}; chatting in this process")
        return None
    if response.status != 200:
        said = response.read(300).decode("utf-8", "replace").strip()
        _note(f"{where} refused the chat ({said}); chatting in this process")
        return None
    _note(f"through {where}")
    status, session = _relay(response)
    if status == 0 and args.commit is not None and session:
        status = _commit(run, session, args.commit, getattr(args, "hooks", "ask"))
    return status


def _commit(run: RunFile, session: str, message: str, hooks: str) -> int:
    """`--commit` by the server, after a chat that ended well; a changed hook is asked
    about here, at the person's terminal, and sent again with their yes."""
    while True:
        request = {"session": session, "message": message, "hooks": hooks}
        try:
            line = _answer(_send(run, COMMIT_PATH, request))
        except (OSError, http.client.HTTPException, ValueError) as exc:
            print(f"acdc: error: not committed: no answer from the server: {_reason(exc)}",
                  file=sys.stderr)  # fmt: skip
            return EXIT_FAULT
        changed = line.get("hooks")
        if not changed:
            _show(line)
            return line.get("exit", EXIT_FAULT)
        if hooks != "ask" or not consent.may_ask() or not consent.ask(changed):
            _note(consent.refusal(changed))
            return line.get("exit", EXIT_FAULT)
        hooks = "run"


def _answer(response: http.client.HTTPResponse) -> dict:
    """The line that carries the exit status (those before it shown as they come)."""
    if response.status != 200:
        raise ValueError(response.read(300).decode("utf-8", "replace").strip())
    while raw := response.readline():
        line = json.loads(raw)
        if "exit" in line:
            return line
        _show(line)
    raise ValueError("the server ended the answer early")


def _repository() -> Path | None:
    """The repository as the settings will resolve it (ACDC_REPO, else the current folder)."""
    given = os.environ.get("ACDC_REPO", "").strip()
    path = Path(given).expanduser() if given else Path.cwd()
    return path.resolve() if path.is_dir() else None  # the settings say what is wrong


def _server_for(repository: Path | None) -> RunFile | None:
    if repository is None:
        return None
    data_dir = runfile.data_dir_for(repository)
    run = runfile.read(data_dir)
    if run is None or run.repository != str(repository):
        return None
    if not runfile.alive(run.pid):
        _note(f"{_where(run)} is gone; chatting in this process")
        runfile.remove(data_dir, run)
        return None
    return run


def _request(args: argparse.Namespace) -> dict:
    return {
        "message": args.message,
        "session": args.session or "",
        "new": bool(args.new),
        "model": args.model,
        **{name: list(getattr(args, name)) for name in ("add", "drop", "pin", "unpin")},
        "allow_secret": list(args.allow_secret),
        "instructions": getattr(args, "instructions", None),
        "apply": bool(getattr(args, "apply", False)),
        "check": getattr(args, "check", None) or "",
    }


def _send(run: RunFile, path: str, request: dict) -> http.client.HTTPResponse:
    connection = http.client.HTTPConnection(run.host, run.port, timeout=CONNECT_SECONDS)
    connection.connect()
    connection.sock.settimeout(ANSWER_SECONDS)
    body = json.dumps(request).encode()
    headers = {"Authorization": f"Bearer {run.token}", "Content-Type": "application/json"}
    connection.request("POST", path, body=body, headers=headers)
    response = connection.getresponse()
    connection.sock.settimeout(None)  # the reply takes as long as the model does
    return response


def _relay(response: http.client.HTTPResponse) -> tuple[int, str]:
    """The chat's exit status and its session, once the stream says it ended."""
    session = ""
    try:
        while raw := response.readline():
            line = json.loads(raw)
            session = line.get("session", session)
            status = _show(line)
            if status is not None:
                return status, session
    except KeyboardInterrupt:  # closing the connection stops the reply (the endpoint's rule)
        response.close()
        print("\nacdc: stopped", file=sys.stderr)
        return 130, session
    except (OSError, http.client.HTTPException, ValueError) as exc:
        print(f"\nacdc: error: the connection to the server broke: {exc}", file=sys.stderr)
        return EXIT_FAULT, session
    print("acdc: error: the server ended the chat before the reply did", file=sys.stderr)
    return EXIT_FAULT, session


def _show(line: dict) -> int | None:
    said = {k: printable(v) if isinstance(v, str) else v for k, v in line.items()}
    if "session" in said:
        print(f"session: {said['session']}", file=sys.stderr)
    if "text" in said:
        sys.stdout.write(said["text"])
        sys.stdout.flush()
    if "diff" in said:
        sys.stdout.write(said["diff"])
    if "note" in said:
        _note(said["note"])
    if "check" in said:  # a check run's one line, and its cut output when it failed
        _note(said["check"])
        if said.get("output"):
            sys.stderr.write(said["output"].rstrip("\n") + "\n")
    if "error" in said:
        print(f"acdc: error: {said['error']}", file=sys.stderr)
    return said.get("exit")


def _address(run: RunFile) -> str:
    host = f"[{run.host}]" if ":" in run.host else run.host
    return f"{host}:{run.port}"


def _reason(exc: BaseException) -> str:
    if isinstance(exc, socket.timeout | TimeoutError):
        return "timed out"
    return getattr(exc, "strerror", None) or str(exc) or type(exc).__name__


def _note(text: str) -> None:
    print(f"acdc: {text}", file=sys.stderr, flush=True)


def _where(run: RunFile) -> str:
    return f"the server at {_address(run)} (pid {run.pid})"
