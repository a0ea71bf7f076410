"""litellm's module-level async HTTP client, closed on each event loop that used it.

litellm's stream wrapper sends some providers' requests (Anthropic's) through its
module-level async client, one for the process, whose aiohttp session belongs to the loop
that first sent through it. When that loop ended (`acdc chat` runs each turn in a loop of
its own, a test in its own), the session and its pooled sockets were left to the garbage
collector, which cannot close them once their loop has (ResourceWarning: unclosed socket,
unclosed transport, Unclosed client session). `LiteLLMClient` (chat.llm.client) parks
`closed_at_loop_end` on each loop that sends through the wrapper, as it does for its own
client: the loop's runner closes it while the loop still runs, and it closes the session
if it is that loop's. The next loop gets a fresh session from litellm's transport, which
makes a new one when it finds its session closed.
Non-goals: the clients litellm caches per provider and key, acdc's direct reader's client.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any


async def closed_at_loop_end(module_client: Callable[[], Any]) -> AsyncIterator[None]:
    """Parks until its loop shuts down (asyncio.run and the loop runners close a loop's
    async generators while it still runs), then closes on it the session of the client
    `module_client()` returns (None when litellm has not made it), if it is this loop's."""
    try:
        yield
    finally:
        session = module_session(module_client())
        if session is not None and getattr(session, "_loop", None) is asyncio.get_running_loop():
            await session.close()


def module_session(client: Any) -> Any:
    """The open aiohttp session of litellm's async client `client`, if it made one (on its
    first send, through its httpx client's transport)."""
    transport = getattr(getattr(client, "client", None), "_transport", None)
    session = getattr(transport, "client", None)
    return session if hasattr(session, "closed") and not session.closed else None
