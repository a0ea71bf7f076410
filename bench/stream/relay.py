"""The bare relays acdc's stream is measured against: a Channels consumer, nothing else.

Served by daphne as `bench.stream.relay:application` (as `acdc serve` is), with Django set
up bare (no apps, no database). A websocket at /ws/relay/ takes one text frame, asks the
provider for a reply and sends each piece of text as a frame of its own as it comes, then
"[done]". How it reads the provider is RELAY_MODE's:
- `litellm`: `litellm.acompletion(stream=True)` with litellm's defaults, each delta's content;
- `httpx`: httpx reads the SSE and json parses each event, the least any Python relay can do.
The provider is RELAY_MODEL at RELAY_API_BASE (an OpenAI-format or Anthropic model name).
Non-goals: storing, rendering, anything a chat does beyond relaying.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator

import django
from django.conf import settings

if not settings.configured:
    settings.configure(DEBUG=False, INSTALLED_APPS=["channels"], ALLOWED_HOSTS=["*"])
    django.setup()

import httpx  # noqa: E402 (after Django is set up, as Channels needs)
from channels.generic.websocket import AsyncWebsocketConsumer  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.urls import path  # noqa: E402

MODE = os.environ.get("RELAY_MODE", "httpx")
MODEL = os.environ.get("RELAY_MODEL", "openai/gpt-4.1")
API_BASE = os.environ.get("RELAY_API_BASE", "http://127.0.0.1:9")
MESSAGES = [{"role": "user", "content": "Show me the whole change."}]


async def litellm_pieces() -> AsyncIterator[str]:
    import litellm  # noqa: PLC0415 (the relay that measures litellm pays for it here)

    response = await litellm.acompletion(
        model=MODEL, messages=MESSAGES, api_base=API_BASE, stream=True, max_tokens=32000
    )
    async for chunk in response:
        for choice in chunk.choices:
            if choice.delta.content:
                yield choice.delta.content


async def httpx_pieces(client: httpx.AsyncClient) -> AsyncIterator[str]:
    anthropic = MODEL.startswith("anthropic/")
    name = MODEL.split("/", 1)[1]
    body = {"model": name, "messages": MESSAGES, "stream": True, "max_tokens": 32000}
    url = API_BASE + ("/v1/messages" if anthropic else "/chat/completions")
    headers = {"x-api-key": "sk-relay", "anthropic-version": "2023-06-01"}
    async with client.stream("POST", url, json=body, headers=headers) as response:
        async for line in response.aiter_lines():
            if not line.startswith("data:") or line.endswith("[DONE]"):
                continue
            event = json.loads(line[5:])
            if anthropic:
                delta = event.get("delta") if event["type"] == "content_block_delta" else None
                text = (delta or {}).get("text")
            else:
                text = next((c["delta"].get("content") for c in event.get("choices") or []), None)
            if text:
                yield text


class RelayConsumer(AsyncWebsocketConsumer):
    client: httpx.AsyncClient | None = None

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        if MODE == "litellm":
            pieces = litellm_pieces()
        else:
            RelayConsumer.client = RelayConsumer.client or httpx.AsyncClient(timeout=None)
            pieces = httpx_pieces(RelayConsumer.client)
        async for piece in pieces:
            await self.send(text_data=piece)
        await self.send(text_data="[done]")


application = ProtocolTypeRouter(
    {"websocket": URLRouter([path("ws/relay/", RelayConsumer.as_asgi())])}
)
