"""A provider's pace, and what that pace costs the machine: the stream benchmark's constants.

A provider streams about 330 characters a second: 40-character events 0.12 s apart
(`CHUNK`, `DELAY`). The same code costs more CPU when its work comes in such small pieces
with the core idle in between (caches and branch predictors go cold, more so when other
guests share the host), and how much more changes by the hour on these machines: one
commit's 15 KB figure read 0.85 s and 2.3 s an hour apart. `pace_penalty` names it at a
given moment: a fixed piece of Python work timed back to back and with DELAY between
pieces. `bench.stream.sidebyside` measures acdc's stream at this pace beside bare relays.
"""

from __future__ import annotations

import asyncio
import json
import re
import time

CHUNK = 40
DELAY = 0.12


def pace_penalty(pieces: int = 100) -> str:
    """CPU per piece of fixed work when the pieces come DELAY apart, against back to back."""
    text = "def step(tokens: int) -> int:\n    return tokens * 2  # doubled\n" * 20
    pattern = re.compile(r"(\w+)\(([^)]*)\)")

    def piece() -> None:
        for _ in range(5):
            data = json.loads(json.dumps({"delta": text, "n": [1, 2, 3]}))
            pattern.findall(data["delta"])

    async def timed(delay: float) -> float:
        start = time.process_time()
        for _ in range(pieces):
            piece()
            if delay:
                await asyncio.sleep(delay)
        return (time.process_time() - start) / pieces

    back_to_back = asyncio.run(timed(0))
    paced = asyncio.run(timed(DELAY))
    return f"{paced / back_to_back:.1f}x ({paced * 1e3:.2f} / {back_to_back * 1e3:.2f} ms)"
