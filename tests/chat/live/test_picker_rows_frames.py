"""The Files panel's rows asked for on the socket (a `rows` frame): drawn for that tab alone,
after every choice the socket carried before the ask, and refused when the ask names the
sets the session holds (the follower's news asked for them, and the tab shows them)."""

from __future__ import annotations

import re

import pytest

from tests.chat.sockets import connect, frames_until, new_session, send

pytestmark = pytest.mark.django_db(transaction=True)
TREE = 'id="file-tree-root" hx-swap-oob="innerHTML"'


def _box(frame: str, path: str) -> str:
    return re.search(rf'<input type="checkbox" aria-label="{re.escape(path)}"[^>]*>', frame)[0]


async def test_rows_asked_after_a_choice_are_drawn_with_it(fake):
    session = await new_session()
    ws = await connect(session.id)
    await send(ws, action="select", choose="file", path="README.md", on="1")
    await send(ws, action="rows", view="list", found=["README.md", "src/app.py"], matched="2")
    rows = (await frames_until(ws, TREE))[-1]
    assert "checked" in _box(rows, "README.md") and "checked" not in _box(rows, "src/app.py")
    assert "data-list" in rows and 'data-folder-row="src"' not in rows
    assert re.search(r'id="picker-total"[^>]*hx-swap-oob="true"[^>]*>1 selected', rows)
    await ws.disconnect()


async def test_an_ask_naming_the_sets_the_session_holds_is_refused(fake):
    session = await new_session()
    ws = await connect(session.id)
    await send(ws, action="select", choose="file", path="README.md", on="1")
    answer = (await frames_until(ws, "data-sets="))[-1]
    held = re.search(r'data-sets="(\w+)"', answer).group(1)
    await send(ws, action="rows", view="list", found="README.md", matched="1", shown=held)
    await send(ws, action="rows", view="tree", open="src", shown="0" * 16)  # other sets
    rows = (await frames_until(ws, TREE))[-1]  # the first rows drawn: the second ask's
    assert "data-list" not in rows and 'data-folder-row="src"' in rows
    assert 'aria-expanded="true" data-folder-row="src"' in rows
    await ws.disconnect()
