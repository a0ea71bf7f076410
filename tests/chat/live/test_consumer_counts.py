"""The Files panel's background counts through the websocket: one pass per repository,
however many tabs connect, and every tab gets every count."""

from __future__ import annotations

import asyncio
import re
import threading
from collections import Counter

import pytest

from chat.repo.outlines import OutlineCounts
from chat.web.panels.fileupdates import row_key
from tests.chat.sockets import WAIT, connect, new_session
from tests.serving import install

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("served_root")]

FILES = 201  # one batch of outline counts and one more file (the batch is 200)


@pytest.fixture
def repo_files():
    return {f"src/m{n:03}.py": f"def f{n}(x: int) -> int:\n    return x\n" for n in range(FILES)}


@pytest.fixture
def repo_is_git():
    return True


class GatedCounts(OutlineCounts):
    """The real outline counts, recording which paths each call counts; every call after
    the first waits for `release` (so a pass is caught in the middle)."""

    def __init__(self, *parts) -> None:
        super().__init__(*parts)
        self.counted: Counter[str] = Counter()
        self.lock = threading.Lock()
        self.gated = threading.Event()  # a call waits at the gate
        self.again = threading.Event()  # a path is being counted a second time
        self.release = threading.Event()

    def counts(self, root, paths):
        paths = list(paths)
        with self.lock:
            first = not self.counted
            if any(self.counted[p] for p in paths):
                self.again.set()
            self.counted.update(paths)
        if not first:
            self.gated.set()
            self.release.wait(WAIT)
        return super().counts(root, paths)


async def outline_counts(ws, wanted: set[str], seen: dict | None = None) -> dict[str, int]:
    """Outline counts from the tab's frames until every `wanted` path has one."""
    seen = {} if seen is None else seen
    paths = {row_key(f"src/m{n:03}.py"): f"src/m{n:03}.py" for n in range(FILES)}
    while not wanted <= seen.keys():
        frame = await ws.receive_from()
        for key, shown in re.findall(r'id="o([0-9A-Za-z_-]{11})"[^>]*>([^<]*)<', frame):
            seen[paths[key]] = int(shown.replace(",", ""))
    return seen


async def test_two_tabs_share_one_outline_count_and_both_get_every_count(root, monkeypatch):
    gate = install(monkeypatch, outline_counts=GatedCounts).outlines  # counts through the gate
    paths = {f"src/m{n:03}.py" for n in range(FILES)}
    session = await new_session()

    first = await connect(session.id)
    assert await asyncio.to_thread(gate.gated.wait, WAIT)  # the first batch is counted
    second = await connect(session.id)
    # The second tab either joins the running pass (and gets the first batch from it) or,
    # as it used to, starts a pass of its own that counts the same files again.
    seen: dict[str, int] = {}
    caught_up = asyncio.ensure_future(outline_counts(second, {"src/m000.py"}, seen))
    recount = asyncio.ensure_future(asyncio.to_thread(gate.again.wait, WAIT))
    try:
        await asyncio.wait({caught_up, recount}, return_when=asyncio.FIRST_COMPLETED)
        assert not gate.again.is_set(), "the second tab counted the same outlines again"
        await caught_up
    finally:
        gate.again.set()  # ends the watch for a recount
        gate.release.set()
        caught_up.cancel()
        await recount

    assert (await outline_counts(second, paths, seen)).keys() == paths
    assert (await outline_counts(first, paths)).keys() == paths
    assert set(gate.counted) == paths and set(gate.counted.values()) == {1}
    await first.disconnect()
    await second.disconnect()
