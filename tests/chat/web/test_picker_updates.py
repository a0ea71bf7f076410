"""The Files panel's live updates go as fragments on the rows' stable ids: a progress
message or a watcher change carries the files it is about and the folders that hold
them, never the whole tree."""

from __future__ import annotations

import asyncio
import base64
import re

import pytest

from chat.live.consumers import files_changed
from chat.repo.watcher import Change
from chat.web.panels.fileupdates import picker_update, row_key
from tests.chat.sockets import WAIT, connect, in_files_group, new_session

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("served_root")]

FOLDERS, PER_FOLDER = 30, 10


@pytest.fixture
def repo_files():
    return {
        f"pkg{f:02}/mod{n}.py": f"def f{f}_{n}(x):\n    return x + {n}\n"
        for f in range(FOLDERS)
        for n in range(PER_FOLDER)
    }


@pytest.fixture
def repo_is_git():
    return True


def ids(frame: str, prefix: str) -> set[str]:
    return set(re.findall(rf'id="{prefix}([0-9A-Za-z_-]{{11}})"', frame))


def is_update(frame: str) -> bool:
    return frame.startswith('<div id="picker-update"')


def test_the_row_key_is_a_pair_of_fnv_hashes():
    # Worked by hand from the FNV-1a definition (offset bases 0x811c9dc5 and 0x050c5d1f).
    # The two 32-bit hashes, big-endian, as unpadded base64url.
    key = base64.urlsafe_b64encode(bytes.fromhex("811c9dc5050c5d1f")).rstrip(b"=").decode()
    assert row_key("") == key and len(key) == 11
    second = ((0x050C5D1F ^ 0x61) * 0x01000193) & 0xFFFFFFFF
    raw = bytes.fromhex("e40c292c") + second.to_bytes(4, "big")
    assert row_key("a") == base64.urlsafe_b64encode(raw).rstrip(b"=").decode()
    assert len({row_key(f"pkg{f:02}/mod{n}.py") for f in range(30) for n in range(10)}) == 300


def test_an_update_names_only_the_files_counted_and_their_folders(root, served):
    update = picker_update(
        served.files, root, counts={"pkg03/mod1.py": 12, "pkg07/mod2.py": [None, "binary"]}
    )
    assert is_update(update)
    assert ids(update, "t") == {row_key("pkg03/mod1.py"), row_key("pkg07/mod2.py")}
    assert ids(update, "d") == {row_key("pkg03"), row_key("pkg07")}
    assert 'data-why="binary"' in update and ">binary<" in update
    assert "pkg05" not in update and "mod3" not in update  # no other row, no path at all


async def test_a_counting_pass_sends_each_count_once_and_never_the_tree(root):
    paths = {f"pkg{f:02}/mod{n}.py" for f in range(FOLDERS) for n in range(PER_FOLDER)}
    wanted = {row_key(p) for p in paths}
    # A cold start: the test's own served object has counted nothing (tests/conftest.py).
    tab = await connect((await new_session()).id)
    sent: list[str] = []
    try:
        while True:
            frame = await tab.receive_from(timeout=WAIT)
            if is_update(frame) and ids(frame, "t"):
                sent.append(frame)
                if set().union(*(ids(f, "t") for f in sent)) >= wanted:
                    break
    finally:
        await tab.disconnect()
    per_frame = [ids(f, "t") for f in sent]
    assert sum(len(found) for found in per_frame) == len(wanted)  # each count once
    for frame, found in zip(sent, per_frame, strict=True):
        folders = {row_key(p.rsplit("/", 1)[0]) for p in paths if row_key(p) in found}
        assert ids(frame, "d") == folders  # the folders of those files, no others
    assert any('id="picker-progress"' in f for f in sent)


async def test_a_watcher_change_sends_the_changed_row_alone(root, served):
    (root / "pkg04" / "mod0.py").write_text("def changed():\n    return 1\n")
    await asyncio.to_thread(served.files.listings.of, root)  # a page drew the tree: its rows
    tab = await connect((await new_session()).id)
    try:
        await in_files_group(tab)
        await files_changed(served, [Change("pkg04/mod0.py", "updated", "", ())])
        frame = await _next_update(tab, row_key("pkg04/mod0.py"))
    finally:
        await tab.disconnect()
    key = row_key("pkg04/mod0.py")
    assert ids(frame, "e") == {key}  # marked edited
    assert ids(frame, "t") == {key} and ids(frame, "o") == {key}
    assert ids(frame, "d") == {row_key("pkg04")}
    assert ids(frame, "n") == set()  # listed before: the pages have its row
    assert 'data-added="[&quot;pkg04/mod0.py&quot;]"' in frame
    assert len(frame) < 1500


async def test_a_new_file_on_disk_comes_with_its_path_and_its_folders_new_total(root, served):
    tab = await connect((await new_session()).id)
    try:
        await in_files_group(tab)
        await asyncio.to_thread(served.passes.wait)  # every file of the folder counted
        picker_update(served.files, root, counts={"pkg09/mod0.py": 1})  # the listing as it was
        (root / "pkg09" / "fresh.py").write_text("NEW = 1\n")
        await files_changed(served, [Change("pkg09/fresh.py", "updated", "", ())])
        frame = await _next_update(tab, row_key("pkg09/fresh.py"))
    finally:
        await tab.disconnect()
    assert 'data-path="pkg09/fresh.py"' in frame and ids(frame, "n") == {row_key("pkg09/fresh.py")}
    assert ids(frame, "d") == {row_key("pkg09")}
    total = re.search(rf'id="d{row_key("pkg09")}"[^>]*>([^<]*)<', frame).group(1)
    named = [f"pkg09/mod{n}.py" for n in range(10)] + ["pkg09/fresh.py"]
    counted = served.counts.peek(root, named)
    assert total.replace(",", "") == str(sum(c.tokens for c in counted.values()))


async def _next_update(tab, key: str) -> str:
    """The next Files-panel update about the row `key` that the watcher's news sends."""
    while True:
        frame = await tab.receive_from(timeout=WAIT)
        if is_update(frame) and f'id="t{key}"' in frame and "picker-progress" not in frame:
            return frame
