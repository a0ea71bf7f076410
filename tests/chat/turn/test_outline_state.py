"""Files sent as their outline (the picker's third state), through real turns: the prompt
holds the labelled signatures, not the bodies; switching back sends the whole file."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async

from chat.live.protocol import parse_frame
from chat.live.served import served
from chat.repo import outlines, sessionsets
from chat.turn.turns import TurnInput, TurnServices, run_turn
from tests import serving
from tests.chat.sockets import new_session
from tests.current_files import read_current_files

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("served_root")]

SHOP = (
    "class Cart:\n"
    "    def add(self, item: str, qty: int = 1) -> None:\n"
    "        self.items.append((item, qty))  # BODY LINE\n"
    "\n"
    "def total(cart: Cart) -> int:\n"
    "    return sum(q for _, q in cart.items)  # BODY LINE\n"
)


@pytest.fixture
def repo_files():
    return {"shop.py": SHOP, "README.md": "# Shop\n", "secrets.py": "def key():\n    return 1\n"}


@pytest.fixture
def repo_is_git():
    return True


async def ignore(event) -> None:
    return None


async def current(session, fake, text: str) -> dict[str, str]:
    await run_turn(
        TurnInput(session_id=session.id, user_text=text, model="acdc/fake"),
        TurnServices(emit=ignore, wiring=served()),
    )
    return read_current_files(fake.requests[-1].messages)


def select(session, paths, outline=()):
    return sessionsets.set_active_files(session, paths, outlines=outline, repo=serving.repository())


async def test_an_outline_goes_to_the_prompt_and_back_to_the_whole_file(root, fake):
    session = await new_session()
    assert await database_sync_to_async(select)(session, ["shop.py"], ["shop.py"]) == []

    files = await current(session, fake, "what is in the shop?")
    sent = files["shop.py"]
    assert sent.startswith(outlines.LABEL)
    assert "def add(self, item: str, qty: int = 1) -> None" in sent
    assert "def total(cart: Cart) -> int" in sent
    assert "BODY LINE" not in sent
    assert await database_sync_to_async(sessionsets.outline_paths)(
        session, repo=serving.repository()
    ) == ["shop.py"]

    await database_sync_to_async(select)(session, ["shop.py"])
    files = await current(session, fake, "now the whole file")
    assert files["shop.py"] == SHOP
    assert (
        await database_sync_to_async(sessionsets.outline_paths)(session, repo=serving.repository())
        == []
    )


async def test_a_file_without_grammar_has_no_outline_and_a_secret_none_either(root, fake, served):
    session = await new_session()
    problems = await database_sync_to_async(select)(session, ["README.md"], ["README.md"])
    assert problems == ["README.md: no outline, acdc has no grammar for this kind of file"]
    assert (
        await database_sync_to_async(sessionsets.active_paths)(session, repo=serving.repository())
        == []
    )
    # The counts leave out what has no outline: no grammar, or shaped like a secret.
    counts = served.outlines.counts(root, ["shop.py", "README.md", "secrets.py"])
    assert list(counts) == ["shop.py"]


def test_outline_counts_are_smaller_than_the_file_and_remembered(root, served):
    counted = served.outlines
    counts = counted.counts(root, ["shop.py"])
    labelled = outlines.text(root, "shop.py", served.maps)
    assert counts["shop.py"] == counted.counter.count_text(labelled)
    assert "BODY LINE" not in labelled
    assert counted.known(root, ["shop.py", "README.md"]) == counts
    (root / "shop.py").write_text(SHOP + "\ndef more() -> None:\n    pass\n")
    assert counted.known(root, ["shop.py"]) == {}  # changed since: counted again
    assert counted.counts(root, ["shop.py"])["shop.py"] > counts["shop.py"]


def test_the_select_frame_carries_the_outline_paths():
    frame = parse_frame(
        '{"action": "select", "path": ["a.py", "b.md"], "outline": "a.py"}', None, max_bytes=10_000
    )
    assert frame.paths == ("a.py", "b.md") and frame.outline == ("a.py",)
