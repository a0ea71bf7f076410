"""`ReplayFake`: a loopback provider that answers every POST with bytes it was given.

What a provider once sent (its status, its headers, its raw SSE body) is replayed as it
came: the body in parts, each written and flushed on its own with `delay` seconds between
them (0 for recorded streams in tests; the pace of a provider for the stream benchmark),
as HTTP/1.1 chunked transfer, so a reader meets the bytes split wherever the parts end.
Answers are taken from a queue of `Recording`s, else from `choose(request)` when it is
set, else the `default` one. Every request is
kept in `requests` (path, headers, JSON body). Standard library only; a thread per server.
Non-goals: knowing what the bytes mean (`replies` writes answers; this only replays them).
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from bench.wirefakes.loopback import Loopback


@dataclass(frozen=True)
class Recording:
    parts: tuple[bytes, ...]
    status: int = 200
    content_type: str = "text/event-stream"
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0

    @classmethod
    def split(cls, body: bytes, size: int, **kwargs: Any) -> Recording:
        """`body` in parts of `size` bytes (cutting lines and characters anywhere)."""
        parts = tuple(body[i : i + size] for i in range(0, len(body), size))
        return cls(parts, **kwargs)


@dataclass(frozen=True)
class Request:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


class ReplayFake(Loopback):
    def __init__(self, default: Recording | None = None) -> None:
        self.default = default
        self.choose: Callable[[Request], Recording] | None = None
        self.requests: list[Request] = []
        self._queue: deque[Recording] = deque()
        self._lock = threading.Lock()
        self._serve(_handler_for(self))

    def enqueue(self, *recordings: Recording) -> None:
        with self._lock:
            self._queue.extend(recordings)

    def _next(self, request: Request) -> Recording:
        with self._lock:
            self.requests.append(request)
            if self._queue:
                return self._queue.popleft()
        if self.choose is not None:
            return self.choose(request)
        if self.default is None:
            return Recording((b'{"error": "nothing to replay"}',), 500, "application/json")
        return self.default


def _handler_for(fake: ReplayFake) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def handle(self) -> None:
            with contextlib.suppress(
                ConnectionResetError
            ):  # a client closing a kept-alive connection
                super().handle()

        def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) or b"{}"
            headers = {k.lower(): v for k, v in self.headers.items()}
            recording = fake._next(Request(self.path, headers, json.loads(raw)))
            self.send_response(recording.status)
            self.send_header("Content-Type", recording.content_type)
            self.send_header("Transfer-Encoding", "chunked")
            for name, value in recording.headers.items():
                self.send_header(name, value)
            self.end_headers()
            try:
                for n, part in enumerate(recording.parts):
                    if n and recording.delay:
                        time.sleep(recording.delay)
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                pass  # the reader stopped early: nothing left to replay

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass  # quiet: `requests` is the log

    return Handler
