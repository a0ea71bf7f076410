"""What streaming one answer costs the server: CPU, frames and bytes on the wire (issue 10).

`stream_figures` builds a deterministic code-heavy answer of each size (prose paragraphs
between Python fences of 20 to 40 lines), feeds it to `DeltaCoalescer` as `TurnDelta`s of
~20 characters, then `TurnFinished`. Frames fall every 4 deltas (~80 characters): at 20
frames a second that is a fast model, and the pace the issue measured (15 KB in ~200
frames); the coalescer's own timer is taken out of play by flushing at each boundary, so
the count is the same on every run. "before" is the old way for comparison: the whole
answer rendered again at every frame boundary. It runs only up to `before_up_to_kb`: at
60 KB it takes minutes. CPU is `time.process_time`, which counts the render threads too.
Non-goals: the socket and the browser; a timed assertion (this is a benchmark).
"""

from __future__ import annotations

import asyncio
import random
import tempfile
import time
from pathlib import Path
from typing import Any

from django.conf import settings

from bench.django_env import close_database, setup_django

DELTA_CHARS = 20
DELTAS_PER_FRAME = 4
TURN_ID = "t0123456789ab"  # as long as a real turn id: frames carry it
# The frame that carried the whole answer before issue 10, less the answer itself.
OLD_FRAME = (
    f'<div class="body" id="msg-{TURN_ID}-body" data-turn="{TURN_ID}" '
    'hx-swap-oob="outerHTML"></div>\n'
)

_PROSE = (
    "the context manager keeps each file's tokens in a tier and only the `active` set "
    "reaches the model while **pinned** files stay cached between turns so a long "
    "session costs little [see the docs](https://example.org/docs) and every answer "
    "streams to the browser as it is written"
)


def code_heavy_answer(size_kb: float, seed: int = 10) -> str:
    """Prose paragraphs and Python fences of 20 to 40 lines, about `size_kb` KB long."""
    rng = random.Random(seed)
    parts: list[str] = []
    while sum(map(len, parts)) < size_kb * 1024:
        words = rng.choices(_PROSE.split(), k=rng.randint(40, 90))
        parts.append(" ".join(words).capitalize() + ".\n\n")
        lines = [_code_line(rng, n) for n in range(rng.randint(20, 40))]
        parts.append("```python\n" + "\n".join(lines) + "\n```\n\n")
    parts.append("That is the whole change.")
    return "".join(parts)


def _code_line(rng: random.Random, n: int) -> str:
    indent = "    " * rng.randint(0, 2)
    kind = rng.randrange(4)
    if kind == 0:
        return f"{indent}def step_{n}(tokens: int, tier: str = 'L{n % 4}') -> int:"
    if kind == 1:
        return f"{indent}total += count_tokens(path, model='gpt-4o')  # file {n}"
    if kind == 2:
        return f'{indent}log.info("tier %s holds %d files", tier, len(files[{n}]))'
    return f"{indent}return {{'path': path, 'tokens': tokens * {n}, 'cached': True}}"


def stream_figures(
    sizes_kb: tuple[float, ...] = (2, 15, 60), before_up_to_kb: float = 15
) -> list[dict[str, Any]]:
    """For each size, the figures of streaming it now ("after") and the old way ("before")."""
    if settings.configured:
        return _figures(sizes_kb, before_up_to_kb)
    with tempfile.TemporaryDirectory(prefix="acdc-bench-stream-") as tmp:
        repo = Path(tmp) / "repo"
        repo.mkdir()
        setup_django(repo, Path(tmp) / "data")
        try:
            return _figures(sizes_kb, before_up_to_kb)
        finally:
            close_database()


def _figures(sizes_kb: tuple[float, ...], before_up_to_kb: float) -> list[dict[str, Any]]:
    from history.markup.render import render_markdown  # once Django is set up

    _measure(_stream_now, code_heavy_answer(1))  # imports, templates and lexers load once
    _measure(_stream_before, code_heavy_answer(1))
    rows = []
    for size in sizes_kb:
        text = code_heavy_answer(size)
        rendered = len(render_markdown(text).encode())
        rows.append(_row(size, "after", text, rendered, *_measure(_stream_now, text)))
        if size <= before_up_to_kb:
            rows.append(_row(size, "before", text, rendered, *_measure(_stream_before, text)))
        else:
            note = (
                f"not run above {before_up_to_kb:g} KB: it renders the whole answer again "
                "for every frame, minutes at this size"
            )
            rows.append({"size_kb": size, "way": "before", "skipped": note})
    return rows


def _row(size, way, text, rendered, cpu, frames, wire) -> dict[str, Any]:
    return {
        "size_kb": size,
        "way": way,
        "answer_bytes": len(text.encode()),
        "cpu_s": round(cpu, 3),
        "cpu_ms_per_kb": round(1000 * cpu / size, 1),
        "frames": frames,
        "wire_bytes": wire,
        "rendered_bytes": rendered,
        "wire_ratio": round(wire / rendered, 2),
    }


def _measure(way, text: str) -> tuple[float, int, int]:
    """CPU seconds of the whole process (every thread), frames and bytes sent."""
    sent: list[str] = []
    started = time.process_time()
    asyncio.run(way(text, sent))
    cpu = time.process_time() - started
    return cpu, len(sent), sum(len(message.encode()) for message in sent)


def _boundaries(text: str) -> list[list[str]]:
    """The cumulative texts of the deltas, grouped by the frame that carries them."""
    ends = [*range(DELTA_CHARS, len(text), DELTA_CHARS), len(text)]
    deltas = [text[:end] for end in ends]
    return [deltas[i : i + DELTAS_PER_FRAME] for i in range(0, len(deltas), DELTAS_PER_FRAME)]


async def _stream_now(text: str, sent: list[str]) -> None:
    from chat.live.frames import DeltaCoalescer
    from chat.live.served import served
    from chat.turn.events import TurnDelta, TurnFinished

    async def send(message: str) -> None:
        sent.append(message)

    coalescer = DeltaCoalescer(send, served().files, interval=0.05, clock=lambda: 0.0)
    for frame in _boundaries(text):
        for cumulative in frame:
            await coalescer.emit(TurnDelta(TURN_ID, cumulative))
        await coalescer.flush()
    await coalescer.emit(TurnFinished(TURN_ID, "complete", text, "m1"))


async def _stream_before(text: str, sent: list[str]) -> None:
    from chat.live.frames import render_event
    from chat.live.served import served
    from chat.turn.events import TurnFinished
    from history.markup.render import render_markdown

    for frame in _boundaries(text):
        sent.append(OLD_FRAME + render_markdown(frame[-1]))  # on the event loop, as it was
    sent.extend(render_event(TurnFinished(TURN_ID, "complete", text, "m1"), served().files))


def main() -> None:
    from bench.report import markdown_table

    rows = stream_figures()
    header = ["size", "way", "CPU s", "ms/KB", "frames", "wire KB", "rendered KB", "wire/rendered"]
    cells = []
    for r in rows:
        if "skipped" in r:
            cells.append([f"{r['size_kb']:g} KB", r["way"], r["skipped"], "", "", "", "", ""])
            continue
        cells.append(
            [
                f"{r['size_kb']:g} KB",
                r["way"],
                f"{r['cpu_s']:.2f}",
                f"{r['cpu_ms_per_kb']:.0f}",
                str(r["frames"]),
                f"{r['wire_bytes'] / 1024:.0f}",
                f"{r['rendered_bytes'] / 1024:.0f}",
                f"{r['wire_ratio']:.2f}",
            ]
        )
    print(markdown_table(header, cells, "llrrrrrr"))


if __name__ == "__main__":
    main()
