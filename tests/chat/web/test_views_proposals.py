"""Answering a command the model proposed, from its card: Run once, Always allow, Deny.

Real processes in real bubblewrap (the served object's `CommandRuns`), real SQLite, the
in-memory channel layer the tabs listen on. A proposal comes from a real turn of
`acdc/fake` calling `propose_command`; its card shows the exact argv (a shell named as
one, a character a reader cannot see as a marked escape), the reason and three buttons;
each answer does what it says, once, and only for the argv the card showed.
"""

from __future__ import annotations

import shlex

import pytest
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from django.utils.html import escape

from chat.live.served import served
from chat.llm.fake import FakeStep
from chat.repo.commands import answering, declaring
from chat.turn.events import ToolCallFinished
from chat.turn.turns import TurnInput, TurnServices, run_turn
from chat.web import proposals
from chat.web.broadcast import session_group
from chat.web.conversation import conversation_items
from chat.web.fragments import card
from chat.web.proposals import render
from history.models import CommandProposal, CommandRun
from tests.chat.sockets import new_session

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def here(served, served_root):
    return served_root


async def proposed(fake, argv: list[str], reason: str = "to see it work") -> tuple:
    """A real turn in which the model proposes `argv`: the session, the proposal's row and
    the finished card's event."""
    session = await new_session()
    call = {"id": "c1", "name": "propose_command", "arguments": {"argv": argv, "reason": reason}}
    fake.enqueue(FakeStep(text="I would like to run it.", tool_calls=[call]), FakeStep(text="Ok."))
    events: list = []

    async def emit(event) -> None:
        events.append(event)

    await run_turn(
        TurnInput(session_id=session.id, user_text="Check it", model="acdc/fake"),
        TurnServices(emit=emit, wiring=served()),
    )
    row = await database_sync_to_async(CommandProposal.objects.get)(session=session)
    [finished] = [e for e in events if isinstance(e, ToolCallFinished)]
    return session, row, finished


def marker_argv(root) -> list[str]:
    return ["sh", "-c", f"echo made > {root}/marker; echo 'all <b>good</b>'"]


async def answer(async_client, proposal_id, decision: str, digest: str | None = None):
    """The card's button, with the digest of the argv the card shows (as its form sends)."""
    if digest is None:
        fields = await database_sync_to_async(proposals.of_id)(proposal_id)
        digest = fields["digest"] if fields else ""
    url = f"/proposals/{proposal_id}/answer/"
    return await async_client.post(url, {"decision": decision, "argv": digest})


async def test_the_card_shows_the_exact_argv_flagged_as_a_shell_the_reason_and_three_buttons(
    fake, here
):
    argv = marker_argv(here)
    _, row, finished = await proposed(fake, argv, reason="to check <the> build")

    html = render(card(finished)["proposal"])

    assert f'aria-label="Proposed command">{escape(shlex.join(argv))}</code>' in html
    assert "it runs a shell" in html
    assert "to check &lt;the&gt; build" in html
    for label in ("Run once", "Always allow this exact command", "Deny"):
        assert f">{label}</button>" in html
    assert f'hx-post="/proposals/{row.pk}/answer/"' in html
    assert not (here / "marker").exists()


async def test_run_once_runs_the_exact_argv_in_the_sandbox_and_every_tab_sees_the_result(
    fake, here, async_client
):
    session, row, _ = await proposed(fake, marker_argv(here))
    layer = get_channel_layer()
    tab = await layer.new_channel()
    await layer.group_add(session_group(session.id), tab)

    response = await answer(async_client, row.pk, "once")

    assert response.status_code == 200
    assert (here / "marker").read_text() == "made\n"
    html = response.content.decode()
    assert "Ran once" in html and "exit 0 after" in html
    assert "all &lt;b&gt;good&lt;/b&gt;" in html  # what it printed, as text
    run = await database_sync_to_async(CommandRun.objects.get)(session=session)
    assert (run.argv, run.exit_code, run.sandboxed, run.name) == (row.argv, 0, True, "")
    stored = await database_sync_to_async(CommandProposal.objects.get)(pk=row.pk)
    assert (stored.status, stored.run_id) == ("approved", run.pk)
    running = await layer.receive(tab)
    assert "Approved: running…" in running["html"] and 'hx-swap-oob="outerHTML"' in running["html"]
    ended = await layer.receive(tab)
    assert "exit 0 after" in ended["html"]


async def test_always_allow_declares_the_exact_argv_under_a_name_it_shows_and_runs_it(
    fake, here, async_client
):
    argv = marker_argv(here)
    _, row, _ = await proposed(fake, argv)

    response = await answer(async_client, row.pk, "always")

    declared = await database_sync_to_async(declaring.declared)(str(here))
    assert [(d.name, d.argv) for d in declared] == [("sh-c-echo", tuple(argv))]
    assert "Always allowed as the declared command <code>sh-c-echo</code>" in (
        response.content.decode()
    )
    assert (here / "marker").exists()
    run = await database_sync_to_async(CommandRun.objects.get)()
    assert run.name == "sh-c-echo"


async def test_deny_runs_nothing_and_says_so(fake, here, async_client):
    session, row, _ = await proposed(fake, marker_argv(here))

    response = await answer(async_client, row.pk, "deny")

    assert response.status_code == 200
    assert "Denied: nothing ran." in response.content.decode()
    assert not (here / "marker").exists()
    assert not await database_sync_to_async(CommandRun.objects.exists)()
    stored = await database_sync_to_async(CommandProposal.objects.get)(pk=row.pk)
    assert stored.status == "denied"


async def test_a_second_answer_is_told_who_was_first_and_nothing_runs_again(
    fake, here, async_client
):
    _, row, _ = await proposed(fake, ["sh", "-c", f"echo x >> {here}/marker"])
    await answer(async_client, row.pk, "once")

    again = await answer(async_client, row.pk, "once")
    denied_late = await answer(async_client, row.pk, "deny")

    assert again.status_code == denied_late.status_code == 409
    assert "It was already approved (in another tab, or by an earlier click)" in (
        again.content.decode()
    )
    assert (here / "marker").read_text() == "x\n"  # one run
    assert await database_sync_to_async(CommandRun.objects.count)() == 1
    stored = await database_sync_to_async(CommandProposal.objects.get)(pk=row.pk)
    assert stored.status == "approved"


@pytest.mark.parametrize(
    ("proposal_id", "decision", "status", "said"),
    [
        ("999999", "once", 404, "This proposal is no longer there"),
        ("abc", "once", 400, "The proposal must be a whole number"),
        ("9" * 40, "deny", 400, "The proposal must be from 1"),
        ("1", "maybe", 400, "The answer is one of: Run once"),
    ],
)
async def test_a_bad_or_unknown_proposal_gets_a_plain_message(
    here, async_client, proposal_id, decision, status, said
):
    response = await answer(async_client, proposal_id, decision)

    assert response.status_code == status
    assert said in response.content.decode()


async def test_a_proposal_gone_with_its_session_is_a_message_not_a_500(fake, here, async_client):
    session, row, _ = await proposed(fake, marker_argv(here))
    await database_sync_to_async(session.delete)()

    response = await answer(async_client, row.pk, "once")

    assert response.status_code == 404
    assert "no longer there" in response.content.decode()
    assert not (here / "marker").exists()


async def test_the_page_drawn_from_the_store_shows_the_answer_and_the_run(fake, here, async_client):
    session, row, _ = await proposed(fake, marker_argv(here))
    pending = await database_sync_to_async(_page)(session)
    await answer(async_client, row.pk, "once")

    answered = await database_sync_to_async(_page)(session)

    assert f'id="proposal-{row.pk}"' in pending and ">Run once</button>" in pending
    assert f'id="proposal-{row.pk}"' in answered and ">Run once</button>" not in answered
    assert "Ran once" in answered and "exit 0 after" in answered


async def test_a_character_a_reader_cannot_see_is_a_marked_escape_and_no_item_spans_lines(
    fake, here
):
    argv = ["python3", "\u202eyp.tset_clac", "one\ntwo"]  # raw: it reads `calc_test.py`
    _, _, finished = await proposed(fake, argv, reason="runs \u202eyp.tset_clac")

    html = render(card(finished)["proposal"])

    argv_html = html.split('aria-label="Proposed command">')[1].split("</code>")[0]
    rlo, line_break = (f'<span class="proposal-escape">{e}</span>' for e in ("\\u202e", "⏎"))
    quoted = f"'{rlo}yp.tset_clac' 'one{line_break}two'"
    assert argv_html == "python3 " + quoted.replace("'", "&#x27;")
    assert "\u202e" not in html and "\n" not in argv_html
    assert 'Why:</span> runs <span class="proposal-escape">\\u202e</span>yp.tset_clac' in html


async def test_an_argv_changed_after_its_card_was_drawn_runs_nothing_and_is_shown_again(
    fake, here, async_client
):
    _, row, finished = await proposed(fake, marker_argv(here))
    shown = card(finished)["proposal"]["digest"]  # what the page's form carries
    changed = ["sh", "-c", f"echo changed > {here}/marker"]
    await database_sync_to_async(CommandProposal.objects.filter(pk=row.pk).update)(argv=changed)

    response = await answer(async_client, row.pk, "once", shown)

    assert response.status_code == 409
    html = response.content.decode()
    assert "The command changed after this card was drawn: nothing ran." in html
    assert escape(shlex.join(changed)) in html and ">Run once</button>" in html
    assert not (here / "marker").exists()
    assert not await database_sync_to_async(CommandRun.objects.exists)()
    stored = await database_sync_to_async(CommandProposal.objects.get)(pk=row.pk)
    assert stored.status == "pending"


async def test_an_argv_changed_after_the_approval_runs_nothing(fake, here):
    _, row, _ = await proposed(fake, marker_argv(here))
    digest = (await database_sync_to_async(proposals.of_id)(row.pk))["digest"]
    claimed = await database_sync_to_async(answering.claim)(row.pk, answering.ONCE, digest)
    update = CommandProposal.objects.filter(pk=row.pk).update
    await database_sync_to_async(update)(argv=["sh", "-c", f"echo changed > {here}/marker"])

    run = await answering.run_approved(claimed, served().commands, root=here)

    assert (run.ending, run.output) == ("failed", answering.CHANGED_AFTER)
    assert not (here / "marker").exists()
    stored = await database_sync_to_async(CommandProposal.objects.get)(pk=row.pk)
    assert stored.run_id == run.pk  # settled: a waiting turn is told it did not run


async def test_always_allow_matches_the_exact_argv_only(fake, here, async_client):
    allowed = [*marker_argv(here), "a\\u202e"]  # a backslash, then u202e: six characters
    _, row, _ = await proposed(fake, allowed)
    await answer(async_client, row.pk, "always")
    (here / "marker").unlink()

    # Its prefix, and an argv whose line reads the same (a real U+202E, shown escaped).
    for near in (allowed[:-1], [*allowed[:-1], "a\u202e"]):
        _, row, finished = await proposed(fake, near)
        assert (row.status, row.argv) == ("pending", near)
        assert finished.output.startswith("waiting for the person: proposed")

    declared = await database_sync_to_async(declaring.declared)(str(here))
    assert [d.argv for d in declared] == [tuple(allowed)]
    assert not (here / "marker").exists()
    assert await database_sync_to_async(CommandRun.objects.count)() == 1


def _page(session) -> str:
    return "".join(item.get("html") or "" for item in conversation_items(session))


def test_a_declared_name_comes_from_the_argv_and_never_repeats_one():
    name = answering.declared_name
    assert name(["python3", "-m", "pytest", "-q"], set()) == "python3-m-pytest"
    assert name(["/usr/bin/make", "check"], {"make-check"}) == "make-check-2"
    assert name(["/usr/bin/make", "check"], {"make-check", "make-check-2"}) == "make-check-3"
    assert name(["!!!"], set()) == "command"
    assert declaring.check_name(name(["x" * 80], set()))
