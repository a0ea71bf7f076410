"""Suggested for this message, through real turns: the body of what the message names, from
a file nobody ticked; never from a ticked file; never again once removed; off per session."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async
from django.test import override_settings
from django.urls import reverse

from chat.live.served import served
from chat.repo import sessionsets
from chat.session import setchanges
from chat.turn.turns import TurnInput, TurnServices, run_turn
from history.models import Session
from tests import serving
from tests.chat.sockets import new_session

pytestmark = pytest.mark.django_db(transaction=True)
HEADER = "# Suggested for this message"
FEE_BODY = "    penalty = invoice.days_late * LATE_RATE"
BILLING = (
    "LATE_RATE = 3\n\n\n"
    "def compute_late_fee(invoice):\n"
    '    """What a late invoice costs on top."""\n'
    f"{FEE_BODY}\n"
    "    return max(penalty, 0)\n\n\n"
    "def make_invoice(order):\n"
    "    return {'order': order, 'days_late': 0}\n"
)
MAIN = (
    "from app.billing import compute_late_fee\n\n\n"
    "def run(invoice):\n"
    "    return compute_late_fee(invoice)\n\n\n"
    "def render_total(invoice):\n"
    "    return f'{invoice}'\n"
)


@pytest.fixture
def repo_files():
    return {
        "app/billing.py": BILLING,
        "app/main.py": MAIN,
        "app/report.py": "def render_total(rows):\n    return sum(rows)\n",
        # A vendored twin of the billing module: never suggested in place of it.
        "vendor/billing/billing.py": BILLING.replace("3", "4"),
    }


@pytest.fixture
def repo_is_git():
    return True


@pytest.fixture
def root(root):
    with override_settings(ACDC_REPO=root, ACDC_MAP_TOKENS=2000, ACDC_SUGGEST_TOKENS=2500):
        yield root


async def ignore(event) -> None:
    return None


async def turn(session, fake, text: str) -> str:
    await run_turn(
        TurnInput(session_id=session.id, user_text=text, model="acdc/fake"),
        TurnServices(emit=ignore, wiring=served()),
    )
    return suggested(fake.requests[-1].messages)


def suggested(messages) -> str:
    """The request's "Suggested for this message" part ("" when it carries none)."""
    for message in messages:
        content = message["content"]
        text = content if isinstance(content, str) else "".join(b.get("text", "") for b in content)
        if text.startswith(HEADER):
            return text
    return ""


async def tick(session, paths) -> None:
    await database_sync_to_async(sessionsets.set_active_files)(
        session, paths, repo=serving.repository()
    )


async def test_a_named_function_of_a_file_nobody_ticked_goes_in_with_its_body(root, fake):
    session = await new_session()

    part = await turn(session, fake, "Why does compute_late_fee charge twice?")

    assert "app/billing.py lines 4-7 (compute_late_fee); matched: compute_late_fee" in part
    assert FEE_BODY in part
    assert "vendor/" not in part
    messages = fake.requests[-1].messages
    at = [i for i, m in enumerate(messages) if suggested([m])][0]
    assert at == len(messages) - 3  # after the history, right before the message: the tail


async def test_a_ticked_file_is_never_displaced_by_a_suggestion(root, fake):
    session = await new_session()
    await tick(session, ["app/main.py", "app/billing.py"])

    part = await turn(session, fake, "Why does compute_late_fee call render_total?")

    sent = "".join(str(m["content"]) for m in fake.requests[-1].messages)
    assert "def run(invoice):" in sent and FEE_BODY in sent  # both ticked files, in full
    assert "app/main.py" not in part and "app/billing.py" not in part
    assert "app/report.py lines 1-2 (render_total)" in part  # only what nobody ticked


async def test_a_removed_suggestion_stays_out_for_the_session(root, fake, async_client):
    session = await new_session()
    assert FEE_BODY in await turn(session, fake, "Is compute_late_fee right?")

    url = reverse("chat:suggestions_choose", args=[session.id])
    key = "app/billing.py::compute_late_fee"
    answer = await async_client.post(url, {"key": key, "action": "remove"})

    assert answer.status_code == 200
    assert b"Suggested for this message" in answer.content
    assert b"compute_late_fee" not in answer.content.split(b'id="hud-suggested-title"')[1]
    for question in ("Is compute_late_fee right?", "And compute_late_fee again?"):
        assert FEE_BODY not in await turn(session, fake, question)
    other = await new_session()
    assert FEE_BODY in await turn(other, fake, "Is compute_late_fee right?")


async def test_suggestions_are_off_per_session_and_with_no_budget(root, fake, async_client):
    session = await new_session()
    url = reverse("chat:suggestions_choose", args=[session.id])
    await async_client.post(url, {"action": "switch"})  # the switch unchecked
    stored = await database_sync_to_async(Session.objects.get)(pk=session.id)
    assert stored.suggestions["off"] is True
    assert await turn(session, fake, "Is compute_late_fee right?") == ""

    other = await new_session()
    with override_settings(ACDC_SUGGEST_TOKENS=0):
        assert await turn(other, fake, "Is compute_late_fee right?") == ""


async def test_ticking_a_suggested_file_takes_its_suggestion_out_at_once(root, fake):
    session = await new_session()
    assert FEE_BODY in await turn(session, fake, "Is compute_late_fee right?")

    await tick(session, ["app/billing.py"])
    hud = await database_sync_to_async(setchanges.refresh_sets)(session.id, served())

    paths = [r["path"] for r in hud["suggested"]["regions"]]
    assert "app/billing.py" not in paths and paths  # the others stay till the next message
