"""`acdc bench turn --part kill`: kill -9 the server mid-answer; is what was shown stored?

One `acdc serve` on SQLite. Each trial opens a new session's websocket and sends a message
whose scripted fake answer streams 300 numbered words (`w0000 w0001 …`, one per chunk, 40 ms
apart or slower: 12 s or more), notes when each word first reached the client, kills the
server with SIGKILL at a random moment 0.5–10 s after the first word, starts it again and
reads the stored assistant message through the ORM (`bench.turn.probe`). A word is
lost when it was shown more than `GRACE` seconds before the kill and is missing from the
stored text (goal: none). The restarted server serves the next trial; the random moments
come from a seeded generator.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from bench.live_server import (
    ChatSocket,
    Worker,
    http_client,
    new_session,
    server_environ,
    start_worker,
)
from bench.report import markdown_table
from bench.turn.probe import stored_messages

WORDS = 300
CHUNK_DELAY = 0.04  # s per word: 300 words take ~12 s
KILL_WINDOW = (0.5, 10.0)  # s after the first word reached the client
GRACE = 1.0  # s: the stream is saved at least once a second
_WORD = re.compile(r"\bw\d{4}\b")


@dataclass
class Trial:
    kill_after: float
    shown: int
    stored: int
    status: str
    lost_before_grace: int  # shown more than GRACE s before the kill, not stored
    lost_in_grace: int  # shown in the last GRACE s, not stored


def run_trials(folder: Path, repo: Path, trials: int, seed: int = 10) -> list[Trial]:
    script = folder / "fake-script.json"
    environ = server_environ(repo, folder / "data", {"ACDC_FAKE_SCRIPT": str(script)})
    log = folder / "kill-server.log"
    rng = random.Random(seed)
    worker = start_worker(environ, log)
    results = []
    try:
        for _ in range(trials):
            trial, worker = asyncio.run(_trial(worker, environ, script, log, rng))
            results.append(trial)
    finally:
        worker.stop()
    return results


async def _trial(
    worker: Worker, environ: dict[str, str], script: Path, log: Path, rng: random.Random
) -> tuple[Trial, Worker]:
    answer = " ".join(f"w{i:04d}" for i in range(WORDS))
    step = {"text": answer, "chunk_size": 6, "chunk_delay": CHUNK_DELAY}
    script.write_text(json.dumps([step]))
    first_seen: dict[str, float] = {}

    def on_frame(frame: str, at: float) -> None:
        for word in _WORD.findall(frame):  # only the answer has such words
            first_seen.setdefault(word, at)

    kill_after = rng.uniform(*KILL_WINDOW)
    async with http_client() as http:
        session_id = await new_session(http, worker.url)
        socket = await ChatSocket.open(http, worker.url, session_id)
        started = time.monotonic()
        await socket.send_message("Count slowly for me, please.")
        reader = asyncio.create_task(socket.read_turn(started, 120.0, on_frame))
        while not first_seen and not reader.done():  # a new process's first answer is slow
            await asyncio.sleep(0.01)
        first_word = min(first_seen.values(), default=time.monotonic())
        await asyncio.sleep(max(0.0, first_word + kill_after - time.monotonic()))
        killed_at = time.monotonic()
        worker.kill9()
        await reader
    restarted = await asyncio.to_thread(start_worker, environ, log)
    rows = await asyncio.to_thread(stored_messages, session_id, environ)
    replies = [row for row in rows if row["role"] == "assistant"]
    stored_text = replies[-1]["content"] if replies else ""
    status = replies[-1]["status"] if replies else "(no row)"
    stored = set(_WORD.findall(stored_text))
    old = [w for w, at in first_seen.items() if at < killed_at - GRACE and w not in stored]
    recent = [w for w, at in first_seen.items() if at >= killed_at - GRACE and w not in stored]
    trial = Trial(
        kill_after=round(killed_at - first_word, 2),
        shown=len(first_seen),
        stored=len(stored),
        status=status,
        lost_before_grace=len(old),
        lost_in_grace=len(recent),
    )
    return trial, restarted


def kill_markdown(trials: list[Trial]) -> str:
    rows = [
        [
            str(n + 1),
            f"{t.kill_after:.2f} s",
            str(t.shown),
            str(t.stored),
            t.status,
            str(t.lost_in_grace),
            f"**{t.lost_before_grace}**" if t.lost_before_grace else "0",
        ]
        for n, t in enumerate(trials)
    ]
    header = [
        "trial",
        "killed, after the first word",
        "words shown",
        "words stored",
        "stored status",
        "lost, shown in the last 1 s",
        "lost, shown earlier (goal 0)",
    ]
    lost = sum(t.lost_before_grace for t in trials)
    statuses = sorted({t.status for t in trials})
    verdict = "met" if lost == 0 else f"NOT met ({lost} words in all)"
    summary = (
        f"{len(trials)} trials: words shown more than {GRACE:.0f} s before the kill and not "
        f"stored: {lost} (goal 0: {verdict}). Stored status after the restart: "
        f"{', '.join(statuses)}."
    )
    return markdown_table(header, rows, "rrrrlrr") + "\n\n" + summary


def kill_data(trials: list[Trial]) -> dict[str, Any]:
    return {
        "words": WORDS,
        "chunk_delay_s": CHUNK_DELAY,
        "grace_s": GRACE,
        "trials": [asdict(t) for t in trials],
    }
