"""litellm's module-level async HTTP client, closed on each event loop that used it.

litellm's stream wrapper sends some providers' requests (Anthropic's) through
`litellm.module_level_aclient`, one client for the process, whose aiohttp session belongs
to the loop that first sent through it. When that loop ends (`acdc chat` runs each turn in
a loop of its own, a test in its own), the session and its pooled sockets were left to the
garbage collector, which cannot close them once their loop has (ResourceWarning: unclosed
socket, unclosed transport, Unclosed client session). `closes_with_this_loop` parks a
closer on the running loop, once per loop, the way `chat.llm.client` keeps its own client:
the loop's runner closes it while the loop still runs, and it closes the session if it
is this loop's. The next loop gets a fresh session from litellm's transport, which makes a
new one when it finds its session closed.
Non-goals: the clients litellm caches per provider and key (closed by litellm's own exit
hook), acdc's direct reader's client (chat.llm.client).
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import AsyncIterator
from typing import Any

_closers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, AsyncIterator[None]] = (
    weakref.WeakKeyDictionary()
)


async def closes_with_this_loop(litellm: Any) -> None:
    """Once per running loop: its end closes litellm's module-level session of that loop."""
    loop = asyncio.get_running_loop()
    if loop not in _closers:
        closer = _closed_at_loop_end(litellm)
        await anext(closer)
        _closers[loop] = closer


async def _closed_at_loop_end(litellm: Any) -> AsyncIterator[None]:
    """Parks until its loop shuts down (asyncio.run and the loop runners close a loop's
    async generators while it still runs), then closes the session on its own loop."""
    try:
        yield
    finally:
        session = _module_session(litellm)
        if session is not None and getattr(session, "_loop", None) is asyncio.get_running_loop():
            await session.close()


def _module_session(litellm: Any) -> Any:
    """The aiohttp session of litellm's module-level async client, if it made one: the
    client is made on first use (litellm's lazy attribute), its session on first send."""
    client = vars(litellm).get("module_level_aclient")
    transport = getattr(getattr(client, "client", None), "_transport", None)
    session = getattr(transport, "client", None)
    return session if hasattr(session, "closed") and not session.closed else None
