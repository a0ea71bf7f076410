"""A running command's output on its way to the page: the end of it, a few times a second.

`LiveOutput` is the runner's `on_output` for a page's turn. It keeps only the last
`LIVE_BYTES` of what the command printed and hands them on (`send(text, total)`) at most
once per `interval`, and once more after a quiet spell so the last line is never held
back. So a command that prints 5 MB costs the wire a few frames of at most `LIVE_BYTES`
each per second, not 5 MB of frames; the card says how much was left out. The text is
decoded with replacement; a cut start is moved past the first line break, so a split
character or colour code does not show as junk, and it is `printable` (colours kept for
the card to draw, every other control sequence removed). Non-goals: drawing it (chat.web), storing
it (the run's row keeps the whole output up to its own cap).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable

from contextcore.controls import printable

LIVE_BYTES = 16 * 1024
INTERVAL_SECONDS = 0.25
Send = Callable[[str, int], Awaitable[None]]


class LiveOutput:
    """Collects chunks; sends the last LIVE_BYTES as text, throttled (see the module)."""

    def __init__(
        self,
        send: Send,
        *,
        keep: int = LIVE_BYTES,
        interval: float = INTERVAL_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._send, self._keep, self._interval, self._clock = send, keep, interval, clock
        self._tail = bytearray()
        self.total = 0
        self.sent = 0  # how many times `send` was called
        self._last = float("-inf")
        self._dirty = False
        self._timer: asyncio.Task | None = None

    async def __call__(self, chunk: bytes) -> None:
        self.total += len(chunk)
        self._tail += chunk
        if len(self._tail) > self._keep:
            del self._tail[: len(self._tail) - self._keep]
        self._dirty = True
        wait = self._last + self._interval - self._clock()
        if wait <= 0:
            await self.flush()
        elif self._timer is None:
            self._timer = asyncio.ensure_future(self._flush_after(wait))

    def text(self) -> str:
        data = bytes(self._tail)
        if self.total > len(data):  # cut: start at a line's start when one is near
            at = data.find(b"\n")
            if 0 <= at < len(data) // 2:
                data = data[at + 1 :]
        return printable(data.decode("utf-8", errors="replace").replace("\0", "\ufffd"))

    async def flush(self) -> None:
        if not self._dirty:
            return
        self._dirty, self._last = False, self._clock()
        self.sent += 1
        await self._send(self.text(), self.total)

    async def close(self) -> None:
        """No more sends: the run ended (its finished card takes over)."""
        timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await timer
        self._dirty = False

    async def _flush_after(self, delay: float) -> None:
        await asyncio.sleep(delay)
        self._timer = None
        await self.flush()
