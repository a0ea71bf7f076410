"""A scripted OpenAI-compatible server on loopback, for the client's tests of how streams end.

`OpenAIServer` serves POST /v1/chat/completions from a queue of `Reply`s, one per request,
in a thread of its own; it records every request body. A reply is a status with headers and
a body sent in parts, an SSE answer (with or without a finish_reason and `[DONE]`), or a
hang: headers never sent until the server closes. Responses are HTTP/1.0 without a length,
so the end of the body is the server closing the connection, as a provider that stops
early would. Plain standard library; nothing here knows about litellm.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

PATH = "/v1/chat/completions"


@dataclass(frozen=True)
class Reply:
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    parts: tuple[bytes, ...] = ()
    hang: bool = False


def sse(payloads: list[Any], *, done: bool) -> tuple[bytes, ...]:
    """Server-sent events: each payload as a `data:` line (JSON unless a string)."""
    lines = [p if isinstance(p, str) else json.dumps(p) for p in payloads]
    if done:
        lines.append("[DONE]")
    return tuple(f"data: {line}\n\n".encode() for line in lines)


def chunk(content: str | None = None, finish_reason: str | None = None, **extra: Any) -> dict:
    delta: dict[str, Any] = {"role": "assistant"}
    if content is not None:
        delta["content"] = content
    return {
        "id": "chatcmpl-loopback",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": "x",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
        **extra,
    }


def usage_chunk(prompt: int = 7, completion: int = 3) -> dict:
    usage = {"prompt_tokens": prompt, "completion_tokens": completion}
    usage["total_tokens"] = prompt + completion
    return {**chunk(), "choices": [], "usage": usage}


def answer(
    pieces: list[str], *, finish_reason: str | None = "stop", done: bool = True, usage: bool = True
) -> Reply:
    """A streamed answer; `finish_reason=None` leaves the finishing chunk out entirely."""
    payloads: list[Any] = [chunk(piece) for piece in pieces]
    if finish_reason is not None:
        payloads.append(chunk(finish_reason=finish_reason))
    if usage:
        payloads.append(usage_chunk())
    headers = {"Content-Type": "text/event-stream"}
    return Reply(headers=headers, parts=sse(payloads, done=done))


def tool_call_answer(pieces: list[str], calls: list[tuple[str, str, str]]) -> Reply:
    """A streamed answer whose text (`pieces`) comes before tool calls, each an
    (id, name, JSON arguments), ending with finish_reason "tool_calls" as OpenAI does."""
    payloads: list[Any] = [chunk(piece) for piece in pieces]
    for index, (call_id, name, arguments) in enumerate(calls):
        function = {"name": name, "arguments": arguments}
        call = {"index": index, "id": call_id, "type": "function", "function": function}
        payloads.append(_with_delta(chunk(), tool_calls=[call]))
    payloads += [chunk(finish_reason="tool_calls"), usage_chunk()]
    return Reply(headers={"Content-Type": "text/event-stream"}, parts=sse(payloads, done=True))


def _with_delta(payload: dict, **delta: Any) -> dict:
    payload["choices"][0]["delta"].update(delta)
    return payload


def error(status: int, message: str, headers: dict[str, str] | None = None) -> Reply:
    body = json.dumps({"error": {"message": message, "type": "error", "code": status}})
    headers = {"Content-Type": "application/json", **(headers or {})}
    return Reply(status=status, headers=headers, parts=(body.encode(),))


def garbage(body: bytes, content_type: str = "text/event-stream") -> Reply:
    return Reply(headers={"Content-Type": content_type}, parts=(body,))


def hang() -> Reply:
    return Reply(hang=True)


class OpenAIServer:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.received = threading.Event()  # set at every request; tests may clear it
        self._replies: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._http = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._http.daemon_threads = True
        # A short poll keeps close() (which waits for the serving loop to notice) quick.
        serve = {"poll_interval": 0.05}
        self._thread = threading.Thread(target=self._http.serve_forever, kwargs=serve, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        host, port = self._http.server_address[:2]
        return f"http://{host}:{port}/v1"

    def enqueue(self, *replies: Reply) -> None:
        with self._lock:
            self._replies.extend(replies)

    def close(self) -> None:
        self._closing.set()  # releases hanging handlers
        self._http.shutdown()
        self._http.server_close()
        self._thread.join()

    def _next(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests.append(body)
            reply = self._replies.popleft() if self._replies else None
        self.received.set()
        return reply or error(500, "the loopback server has no reply scripted")


def _handler_for(server: OpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            if self.path != PATH:
                self.send_error(404)
                return
            reply = server._next(json.loads(raw or b"{}"))
            if reply.hang:
                server._closing.wait()
                return
            self.send_response(reply.status)
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.end_headers()
            for part in reply.parts:
                self.wfile.write(part)
                self.wfile.flush()

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass  # quiet: pytest shows failures without the access log

    return Handler
