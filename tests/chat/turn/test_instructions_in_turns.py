"""Project instructions through real turns: in the system part of what the model receives,
the same bytes turn after turn, redacted like everything sent, and off when switched off."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import async_to_sync

from chat.live.served import served
from chat.turn.turns import TurnInput, TurnServices, run_turn
from history import services
from history.models import Message, Session

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("served_root")]
RULES = "".join(f"Rule {i}: run the tests before you answer.\n" for i in range(120))
# Built from parts so that no scanner takes this test for a leak of its own.
GITHUB_TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


@pytest.fixture
def repo_files() -> dict[str, str | bytes]:
    return {"AGENTS.md": RULES, "src/app.py": "def greet(name):\n    return name\n"}


async def ignore(event) -> None:
    return None


def turn(session: Session, fake, text: str) -> list[dict]:
    async_to_sync(run_turn)(
        TurnInput(session_id=session.id, user_text=text, model="acdc/fake"),
        TurnServices(emit=ignore, wiring=served()),
    )
    return fake.requests[-1].messages


def system_text(messages: list[dict]) -> str:
    return texts(messages[0])


def texts(message: dict) -> str:
    content = message["content"]
    return content if isinstance(content, str) else "".join(b["text"] for b in content)


def new_session(root) -> Session:
    return services.session_create(repository=str(root), model="acdc/fake")


def test_the_system_part_holds_them_and_two_turns_share_the_prefix(fake, served_root):
    session = new_session(served_root)

    first = turn(session, fake, "first question")
    second = turn(session, fake, "second question")

    assert first[0]["role"] == "system"
    assert "# Project instructions" in system_text(first)
    assert "## AGENTS.md\n\nRule 0: run the tests" in system_text(first)
    # The first request's cached prefix is sent again, byte for byte (its last breakpoint
    # moves on to the end of the longer prefix; the text there is the same).
    marks = [i for i, m in enumerate(first) if "cache_control" in json.dumps(m)]
    assert marks and marks[0] == 0, "the system part is cached"
    assert json.dumps(second[: marks[-1]]) == json.dumps(first[: marks[-1]])
    assert texts(second[marks[-1]]) == texts(first[marks[-1]])


def test_switched_off_for_the_session_they_are_not_sent(fake, served_root):
    session = new_session(served_root)
    Session.objects.filter(pk=session.pk).update(instructions=False)

    sent = turn(session, fake, "question")

    assert "Project instructions" not in json.dumps(sent)
    assert "Rule 0" not in json.dumps(sent)


def test_a_credential_in_them_leaves_as_a_marker(fake, served_root):
    (served_root / "AGENTS.md").write_text(f"Deploy with token {GITHUB_TOKEN}\n")
    session = new_session(served_root)

    sent = json.dumps(turn(session, fake, "how do I deploy?"))

    assert GITHUB_TOKEN not in sent
    assert "[redacted: a GitHub token]" in sent
    said = Message.objects.filter(session=session, system_event=True).values_list(
        "content", flat=True
    )
    assert any(t.startswith("The project instructions hold what looks like") for t in said)


def test_a_change_on_disk_reaches_the_next_request(fake, served_root):
    session = new_session(served_root)
    turn(session, fake, "one")
    (served_root / "AGENTS.md").write_text(RULES + "Never use print.\n")

    changed = turn(session, fake, "two")
    again = turn(session, fake, "three")

    assert "Never use print." in system_text(changed)
    assert system_text(again) == system_text(changed)


def test_the_dry_run_report_names_the_instructions_files_with_their_tokens(served_root):
    session = services.session_create(repository=str(served_root), model="acdc/dry-run")
    finished = async_to_sync(run_turn)(
        TurnInput(session_id=session.id, user_text="hi", model="acdc/dry-run"),
        TurnServices(emit=ignore, wiring=served()),
    )
    assert finished.status == "complete"
    listed = [line for line in finished.text.splitlines() if "Project instructions" in line]
    assert len(listed) == 1
    assert listed[0].startswith("- Project instructions: `AGENTS.md` (")
    assert listed[0].endswith(" tokens)") and "(0 tokens)" not in listed[0]
