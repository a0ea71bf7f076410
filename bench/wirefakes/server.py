"""`WireFake`: one loopback HTTP server that answers as Anthropic and as OpenAI would.

POST .../messages is the Anthropic Messages API (`AnthropicCache`), POST
.../chat/completions the OpenAI Chat Completions API (`PrefixCache` under the rules given),
each streamed or not as the request asks. Answers come from a queue of `Reply`s, else from
`responder(request)` when one is set, else "ok". Every request is kept in `requests` with
the usage it was billed. The harness moves the clock directly (`clock.advance`) or over
HTTP: POST /_clock with {"advance": s} or {"set": t}; GET /_clock reads it. Served by the
standard library on 127.0.0.1 and a free port, in a thread of its own.
Non-goals: authentication (any key is accepted), rate limits, errors other than the 400s
the cache rules call for.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any

from bench.wirefakes import replies
from bench.wirefakes.anthropic import AnthropicCache, CacheRequestError
from bench.wirefakes.loopback import Loopback
from bench.wirefakes.openai import AUTOMATIC_RULES, AutomaticRules, PrefixCache
from bench.wirefakes.replies import Clock, Reply


@dataclass(frozen=True)
class Received:
    """One request as the fake saw and billed it. `usage` is in the provider's own fields."""

    api: str  # "anthropic" or "openai"
    body: dict[str, Any]
    at: float
    usage: dict[str, Any]
    reply: Reply


class WireFake(Loopback):
    def __init__(
        self,
        *,
        clock: Clock | None = None,
        automatic: AutomaticRules = AUTOMATIC_RULES["openai"],
        responder: Callable[[dict[str, Any]], Reply] | None = None,
    ) -> None:
        self.clock = clock or Clock()
        self.anthropic = AnthropicCache()
        self.openai = PrefixCache(automatic)
        self.responder = responder
        self.requests: list[Received] = []
        self._replies: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._in_flight = 0
        self._last_activity = time.monotonic()
        self._serve(_handler_for(self))

    def enqueue(self, *items: Reply | str) -> None:
        with self._lock:
            self._replies.extend(Reply(i) if isinstance(i, str) else i for i in items)

    def answer(self, api: str, body: dict[str, Any]) -> tuple[int, str, list[bytes]]:
        """(status, content type, body parts) for one API request."""
        now = self.clock.now()
        model = str(body.get("model", ""))
        ids = f"{next(self._ids):06d}"
        try:
            if api == "anthropic":
                cache = self.anthropic.process(body, now)
        except CacheRequestError as error:
            message = {"type": "invalid_request_error", "message": str(error)}
            return (
                400,
                "application/json",
                [json.dumps({"type": "error", "error": message}).encode()],
            )
        reply = self._next_reply(body)
        stream = bool(body.get("stream"))
        if api == "anthropic":
            usage = cache.as_usage(reply.output_tokens)
            parts = (
                replies.anthropic_events(reply, model, usage, ids)
                if stream
                else [json.dumps(replies.anthropic_message(reply, model, usage, ids)).encode()]
            )
        else:
            prompt, cached = self.openai.process(body, now)
            usage = replies.openai_usage(prompt, cached, reply.output_tokens)
            wants_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            parts = (
                replies.openai_chunks(reply, model, usage if wants_usage else None, ids)
                if stream
                else [json.dumps(replies.openai_completion(reply, model, usage, ids)).encode()]
            )
        with self._lock:
            self.requests.append(Received(api, body, now, usage, reply))
        return 200, "text/event-stream" if stream else "application/json", parts

    def quiet_for(self) -> float:
        """Real seconds since the last request began or ended; 0 while one is being served."""
        with self._lock:
            return 0.0 if self._in_flight else time.monotonic() - self._last_activity

    def _activity(self, step: int) -> None:
        with self._lock:
            self._in_flight += step
            self._last_activity = time.monotonic()

    def _next_reply(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            if self._replies:
                return self._replies.popleft()
        return self.responder(body) if self.responder else Reply()

    def clock_command(self, command: dict[str, Any]) -> dict[str, float]:
        if "advance" in command:
            self.clock.advance(float(command["advance"]))
        if "set" in command:
            self.clock.set(float(command["set"]))
        return {"now": self.clock.now()}


def _api_of(path: str) -> str | None:
    path = path.split("?", 1)[0].rstrip("/")
    if path.endswith("/messages"):
        return "anthropic"
    if path.endswith("/chat/completions"):
        return "openai"
    return None


def _handler_for(fake: WireFake) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
            if self.path.rstrip("/") == "/_clock":
                self._send(200, "application/json", [json.dumps(fake.clock_command({})).encode()])
            else:
                self._send(404, "text/plain", [b"not found"])

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            if self.path.rstrip("/") == "/_clock":
                answer = json.dumps(fake.clock_command(body)).encode()
                self._send(200, "application/json", [answer])
                return
            api = _api_of(self.path)
            if api is None:
                self._send(404, "text/plain", [b"not found"])
                return
            fake._activity(+1)
            try:
                self._send(*fake.answer(api, body))
            finally:
                fake._activity(-1)

        def _send(self, status: int, content_type: str, parts: list[bytes]) -> None:
            payload = b"".join(parts)
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
            self.wfile.flush()

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass  # quiet: the record of requests is the log

    return Handler
