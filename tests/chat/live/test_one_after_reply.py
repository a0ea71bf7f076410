"""The page and the terminal end a turn through one object (`chat.turn.afterreply`).

The same script, an edit that leaves the check failing and then a fix that makes it pass
(the check a declared command, run in real bubblewrap), runs once through a tab of the page
(the turn host, Auto-apply and the session's check) and once through `acdc chat --apply
--check` in this process. Each turn's end goes through `AfterReply`, and both come to the
same check lines and the same one fix round, stored the same way.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator

import pytest
from channels.db import database_sync_to_async

from acdc import commands
from chat.llm.fake import FakeStep
from chat.turn.afterreply import AfterReply
from history.models import Message, Session
from tests.chat.live.test_check_after_apply import (
    BROKEN,
    CHECK,
    checked_session,
    checks,
    edit,
    talk,
)
from tests.chat.sockets import stored

pytestmark = pytest.mark.django_db(transaction=True)
FIXED = "def add(a, b):\n    return a + b\n"


@pytest.fixture
def repo_files() -> dict[str, str]:
    return {"calc.py": BROKEN, "check.py": CHECK}


@pytest.fixture
def idle(served) -> Iterator[dict[str, asyncio.Event]]:
    events: dict[str, asyncio.Event] = {}
    before = served.host.on_idle

    def on_idle(session_id: str) -> None:
        before(session_id)
        events.setdefault(session_id, asyncio.Event()).set()

    served.host.on_idle = on_idle
    yield events
    served.host.on_idle = before


@pytest.fixture
def ends(monkeypatch) -> list[tuple[str, str, str]]:
    """Every check an `AfterReply` ran: its surface, its line and the fix round it asked."""
    seen: list[tuple[str, str, str]] = []
    checked = AfterReply.checked

    async def noted(self, session_id: str, turn_id: str, *, apply: bool = False) -> None:
        await checked(self, session_id, turn_id, apply=apply)
        fix = self.fix.text if self.fix is not None else ""
        seen.append((type(self.surface).__name__, timeless(self.ran.line()), timeless(fix)))

    monkeypatch.setattr(AfterReply, "checked", noted)
    return seen


def timeless(text: str) -> str:
    return re.sub(r"after \d+(\.\d+)? s", "after … s", text)


def script(fake) -> None:
    fake.enqueue(
        edit("a - b", "a * b", "c1"),
        FakeStep(text="Changed the operator."),
        edit("a * b", "a + b", "c2"),
        FakeStep(text="Fixed."),
    )


def asked(rows: list[Message]) -> list[str]:
    return [timeless(m.content) for m in rows if m.role == Message.Role.USER]


async def test_the_page_and_the_terminal_end_a_turn_the_same_way(
    fake, served_root, idle, ends, capsys
):
    page = await checked_session(served_root)
    script(fake)
    page_rows = await talk(page, idle, "make add right")
    assert (served_root / "calc.py").read_text() == FIXED

    (served_root / "calc.py").write_text(BROKEN)
    terminal = await database_sync_to_async(Session.objects.create)(
        repository=str(served_root), model="acdc/fake"
    )  # no Auto-apply, no check of its own: `--apply --check test` asks for both
    script(fake)
    none = frozenset()
    status = await commands._converse(
        terminal.id, "make add right", "acdc/fake", True, "test", none
    )
    terminal_rows = await stored(terminal)

    assert status == 0 and (served_root / "calc.py").read_text() == FIXED
    surfaces = [surface for surface, _, _ in ends]
    assert surfaces == ["PageSurface", "PageSurface", "Terminal", "Terminal"]
    page_ends, terminal_ends = [end[1:] for end in ends[:2]], [end[1:] for end in ends[2:]]
    assert page_ends == terminal_ends
    (failed, fix), (passed, no_fix) = page_ends
    assert failed.startswith("check test: failed, exit status 1")
    assert fix.startswith("acdc ran the check `test` (`") and "gave 6" in fix
    assert (passed, no_fix) == ("check test: passed, exit status 0 after … s", "")
    # Stored alike: acdc's fix round is the session's second message, the check run twice.
    assert asked(page_rows) == asked(terminal_rows) == ["make add right", fix]
    assert checks(page_rows) == checks(terminal_rows) == ["fail", "ok"]
    err = capsys.readouterr().err
    assert f"acdc: {failed}\n" in timeless(err) and f"acdc: {passed}\n" in timeless(err)
    assert "acdc: asking the model to fix what test reported (once)" in err
