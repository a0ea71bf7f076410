"""`acdc serve` in subprocesses and a websocket client that talks to it like the page does.

`start_worker` runs `python -m acdc serve` on a free port with the offline `acdc/fake`
model (scripted by the JSON file ACDC_FAKE_SCRIPT names, else it echoes), waits until it
answers, and returns a `Worker` whose CPU time is read from /proc. Several workers may share
one repository, data folder, DATABASE_URL and REDIS_URL (scale-out). `ChatSocket` opens a
session's websocket with aiohttp, sends the composer's frame (htmx form JSON) and reads
frames until the turn's finished frame, an error frame, a timeout or a close. Frames are
recognised by the ids and attributes the templates under `templates/chat/` give them.
Every request carries the access token (acdc.access): `server_environ` gives its servers
this process's `TOKEN` and `http_client` sends it; a worker started otherwise is known by
the token in the address it printed (`Worker.token`). Non-goals: TLS, what a browser does
with the frames.
"""

from __future__ import annotations

import html
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp

from bench import CHECKOUT
from bench.sessions import make_file

START_TIMEOUT = 120.0
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
_STATUS = re.compile(r'data-status="(\w+)"')
_TURN = re.compile(r'data-turn="([^"]+)"')
_TAG = re.compile(r"<[^>]+>")
_CSRF = re.compile(r'"X-CSRFToken": "([^"]+)"')
# The access token of the servers `server_environ` describes: this process's own.
TOKEN = secrets.token_urlsafe(24)


def make_repo(root: Path, files: int = 3, functions: int = 8) -> Path:
    """A git repository of `files` code-shaped files (~450 bytes per function), committed."""
    root.mkdir(parents=True, exist_ok=True)
    for n in range(files):
        write_text(root / "src" / f"module_{n:03}.py", make_file(n, functions=functions))
    git = ["git", "-C", str(root), "-c", "user.email=bench@acdc", "-c", "user.name=bench"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "bench", "--allow-empty"], check=True)
    return root


def write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def proc_cpu_seconds(pid: int, children: bool = False) -> float:
    """utime + stime of one process (all its threads), from /proc/<pid>/stat; with
    `children`, also that of its children that have ended."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    ticks = int(fields[11]) + int(fields[12])
    if children:
        ticks += int(fields[13]) + int(fields[14])
    return ticks / _CLOCK_TICKS


def service_cpu_seconds(command: str) -> float:
    """CPU of every process whose command name is `command` (postgres, redis-server),
    including the ended children of each: PostgreSQL's backends for closed connections."""
    total = 0.0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            name = (entry / "comm").read_text().strip()
        except OSError:
            continue
        if name == command:
            total += proc_cpu_seconds(int(entry.name), children=True)
    return total


@dataclass
class Worker:
    process: subprocess.Popen
    port: int
    log: Path
    token: str = ""  # as it printed it (`acdc: serving … at http://…/?token=…`)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def cpu_seconds(self) -> float:
        return proc_cpu_seconds(self.process.pid)

    def kill9(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.kill9()


def server_environ(repo: Path, data_dir: Path, extra: dict[str, str]) -> dict[str, str]:
    """The environment of a bench server: the fake model, the access token `TOKEN`, no
    proxy; DATABASE_URL and REDIS_URL only when `extra` names them."""
    environ = {
        **os.environ,
        "ACDC_REPO": str(repo),
        "ACDC_DATA_DIR": str(data_dir),
        "ACDC_MODEL": "acdc/fake",
        "SECRET_KEY": "acdc-bench-turn-secret",
        "NO_PROXY": "127.0.0.1,localhost",
        "PYTHONUNBUFFERED": "1",
    }
    for name in ("ACDC_BIND", "DATABASE_URL", "REDIS_URL", "ACDC_FAKE_SCRIPT"):
        environ.pop(name, None)
    environ["ACDC_TOKEN"] = TOKEN
    environ.update(extra)
    return environ


def interruptible() -> None:
    """For `Popen(preexec_fn=...)`: the server hears SIGINT even when the run that starts it
    ignores it (a shell's background job without job control, `nohup`), as a person's
    terminal would deliver Ctrl+C; an ignored SIGINT is inherited and twisted keeps it."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start_worker(environ: dict[str, str], log: Path, port: int | None = None) -> Worker:
    port = port or free_port()
    with log.open("a") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "acdc", "serve", environ["ACDC_REPO"], "--port", str(port)],
            env=environ,
            cwd=CHECKOUT,
            stdout=out,
            stderr=subprocess.STDOUT,
            preexec_fn=interruptible,
        )
    worker = Worker(process, port, log)
    try:
        _wait_until_serving(worker)
    except BaseException:
        worker.stop()
        raise
    return worker


def _wait_until_serving(worker: Worker) -> None:
    """Until the worker has printed its address and answers with the token in it."""
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if worker.process.poll() is not None:
            raise RuntimeError(f"acdc serve exited early:\n{worker.log.read_text()[-3000:]}")
        worker.token = worker.token or printed_token(worker.log.read_text(), worker.port)
        if worker.token and _answers(worker):
            return
        time.sleep(0.2)
    raise RuntimeError(f"acdc serve did not answer in time:\n{worker.log.read_text()[-3000:]}")


def printed_token(log: str, port: int) -> str:
    """The token in the last address `acdc serve` printed for `port`, or ""."""
    found = re.findall(rf"acdc: serving .* at http://\S+:{port}/\?token=(\S+)", log)
    return urllib.parse.unquote_plus(found[-1]) if found else ""


def _answers(worker: Worker) -> bool:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    opener.addheaders = [("Authorization", f"Bearer {worker.token}")]
    try:  # the history page makes no session, unlike the front page
        with opener.open(worker.url + "history/", timeout=5):
            return True
    except OSError:
        return False


async def new_session(http: aiohttp.ClientSession, url: str) -> str:
    """A new chat session, made as the page's New session button does; returns its id."""
    async with http.get(url + "history/") as response:
        token = _CSRF.search(await response.text())
    if token is None:
        raise RuntimeError("no CSRF token on the history page")
    headers = {"X-CSRFToken": token.group(1)}
    async with http.post(url + "s/new/", headers=headers, allow_redirects=False) as response:
        location = response.headers.get("Location", "")
    found = re.search(r"/s/([^/]+)/$", location)
    if response.status != 302 or found is None:
        raise RuntimeError(f"session not made: HTTP {response.status} {location!r}")
    return found.group(1)


def http_client(token: str = TOKEN, connections: int = 100) -> aiohttp.ClientSession:
    """Cookies for 127.0.0.1 too (aiohttp keeps none for IP addresses unless told), and the
    access token on every request and websocket handshake; `connections` 0: no limit."""
    return aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=connections),
        cookie_jar=aiohttp.CookieJar(unsafe=True),
        trust_env=False,
        headers={"Authorization": f"Bearer {token}"},
    )


def frame_text(frame: str) -> str:
    """What a frame shows, without its markup."""
    return html.unescape(_TAG.sub(" ", frame))


@dataclass
class TurnOutcome:
    """One turn as the client saw it: `status` is the finished frame's status, or
    "error" (an error frame), "timeout" or "closed"."""

    status: str
    seconds: float
    turn_id: str = ""
    detail: str = ""
    frames: int = 0
    wire_bytes: int = 0


@dataclass
class ChatSocket:
    """One session's websocket. `on_frame(text, at)` sees every frame of a turn."""

    ws: aiohttp.ClientWebSocketResponse
    http: aiohttp.ClientSession
    seen: list[tuple[float, str]] = field(default_factory=list)

    @classmethod
    async def open(cls, http: aiohttp.ClientSession, url: str, session_id: str) -> ChatSocket:
        address = url.replace("http://", "ws://") + f"ws/session/{session_id}/"
        ws = await http.ws_connect(
            address, origin=url.rstrip("/"), max_msg_size=0, heartbeat=None, autoping=True
        )
        return cls(ws, http)

    async def send_message(self, text: str) -> None:
        await self.ws.send_str(json.dumps({"message": text, "HEADERS": {"HX-Request": "true"}}))

    async def turn(self, text: str, timeout: float, on_frame=None) -> TurnOutcome:
        """Send `text` and read until its turn is finished (or fails)."""
        started = time.monotonic()
        await self.send_message(text)
        return await self.read_turn(started, timeout, on_frame)

    async def read_turn(self, started: float, timeout: float, on_frame=None) -> TurnOutcome:
        outcome = TurnOutcome("timeout", 0.0)
        deadline = started + timeout
        while True:
            left = deadline - time.monotonic()
            try:
                message = await self.ws.receive(timeout=max(0.001, left))
            except TimeoutError:
                break
            if message.type != aiohttp.WSMsgType.TEXT:
                outcome.status, outcome.detail = "closed", f"{message.type.name} {message.data}"
                break
            frame = message.data
            outcome.frames += 1
            outcome.wire_bytes += len(frame.encode())
            if on_frame is not None:
                on_frame(frame, time.monotonic())
            if frame.startswith('{"type":"picker"'):
                continue
            if 'class="notice error"' in frame:
                outcome.status, outcome.detail = "error", frame_text(frame).strip()[:200]
                break
            if not outcome.turn_id and 'aria-label="Your message"' in frame:
                outcome.turn_id = _TURN.search(frame).group(1)
            elif outcome.turn_id and _finishes(frame, outcome.turn_id):
                outcome.status = _STATUS.search(frame).group(1)
                break
        outcome.seconds = time.monotonic() - started
        return outcome

    async def close(self) -> None:
        await self.ws.close()


def _finishes(frame: str, turn_id: str) -> bool:
    """The finished frame: the reply's article drawn again, with its final status."""
    return f'id="msg-{turn_id}" data-turn' in frame and _STATUS.search(frame) is not None
