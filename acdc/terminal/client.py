"""`acdc chat` as a client of the `acdc serve` that serves the repository, when one does.

Read before Django is set up, so a reply through the server costs no Django, litellm or
database start: this module imports the standard library and the run file only. The server
is used when the data folder holds its run file (`acdc.terminal.runfile`) for this very
repository, its pid is alive and it answers within `CONNECT_SECONDS`; otherwise
`chat_through_server` returns None and the chat runs in this process, after a one-line
note when a server was expected (a file left by a killed server is removed once its pid is
gone). Once the message is sent there is no fallback: the server has it, and the outcome
is the server's. Streams what the endpoint sends (`acdc.terminal.endpoint`): the reply on
stdout as it grows, the rest on stderr; the exit status is the in-process one.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import socket
import sys
from pathlib import Path

from acdc.terminal import runfile
from acdc.terminal.runfile import RunFile

CONNECT_SECONDS = 1.0  # a stale run file must not hang the command
ANSWER_SECONDS = 5.0  # the endpoint answers before any work; the reply itself may take long
EXIT_FAULT = 1
PATH = "/cli/chat/"


def chat_through_server(args: argparse.Namespace) -> int | None:
    """The exit status of the chat run by the server, or None: run it in this process."""
    run = _server_for(_repository())
    if run is None:
        return None
    where = _where(run)
    if args.apply or args.commit is not None:
        _note(f"--apply and --commit run in this process, not through {where}")
        return None
    try:
        response = _send(run, _request(args))
    except (OSError, http.client.HTTPException) as exc:
        _note(f"no answer from {where}: {_reason(exc)}; chatting in this process")
        return None
    if response.status != 200:
        said = response.read(300).decode("utf-8", "replace").strip()
        _note(f"{where} refused the chat ({said}); chatting in this process")
        return None
    _note(f"through {where}")
    return _relay(response)


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
    }


def _send(run: RunFile, request: dict) -> http.client.HTTPResponse:
    connection = http.client.HTTPConnection(run.host, run.port, timeout=CONNECT_SECONDS)
    connection.connect()
    connection.sock.settimeout(ANSWER_SECONDS)
    body = json.dumps(request).encode()
    headers = {"Authorization": f"Bearer {run.token}", "Content-Type": "application/json"}
    connection.request("POST", PATH, body=body, headers=headers)
    response = connection.getresponse()
    connection.sock.settimeout(None)  # the reply takes as long as the model does
    return response


def _relay(response: http.client.HTTPResponse) -> int:
    try:
        while line := response.readline():
            status = _show(json.loads(line))
            if status is not None:
                return status
    except KeyboardInterrupt:  # closing the connection stops the reply (the endpoint's rule)
        response.close()
        print("\nacdc: stopped", file=sys.stderr)
        return 130
    except (OSError, http.client.HTTPException, ValueError) as exc:
        print(f"\nacdc: error: the connection to the server broke: {exc}", file=sys.stderr)
        return EXIT_FAULT
    print("acdc: error: the server ended the chat before the reply did", file=sys.stderr)
    return EXIT_FAULT


def _show(line: dict) -> int | None:
    if "session" in line:
        print(f"session: {line['session']}", file=sys.stderr)
    if "text" in line:
        sys.stdout.write(line["text"])
        sys.stdout.flush()
    if "diff" in line:
        sys.stdout.write(line["diff"])
    if "note" in line:
        _note(line["note"])
    if "error" in line:
        print(f"acdc: error: {line['error']}", file=sys.stderr)
    return line.get("exit")


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
