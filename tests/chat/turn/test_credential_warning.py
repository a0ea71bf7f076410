"""A file about to be sent that seems to hold a credential is said in the chat first."""

from __future__ import annotations

from pathlib import Path

import pytest
from asgiref.sync import async_to_sync

from chat.live.served import served
from chat.repo import credentials, sessionsets
from chat.turn.events import TurnNotice, TurnStarted
from chat.turn.turns import TurnInput, TurnServices, run_turn
from history import services
from history.models import Message
from tests import serving

pytestmark = pytest.mark.django_db(transaction=True)
# Built from parts so that no scanner takes this test for a leak of its own.
PRIVATE_KEY = "-----BEGIN OPENSSH " + "PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA\n"
GITHUB_TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


@pytest.fixture
def deploy_script(settings):
    path = Path(settings.ACDC_REPO) / "deploy_notes.txt"
    path.write_text(f"ssh in with this key:\n{PRIVATE_KEY}\ntoken: {GITHUB_TOKEN}\n")
    yield "deploy_notes.txt"
    path.unlink()


def turn(session_id: str, text: str) -> list:
    events = []

    async def emit(event) -> None:
        events.append(event)

    async_to_sync(run_turn)(
        TurnInput(session_id=session_id, user_text=text, model="acdc/fake"),
        TurnServices(emit=emit, wiring=served()),
    )
    return events


def test_a_credential_in_a_selected_file_is_warned_of_before_the_request_once(
    fake, settings, deploy_script
):
    session = services.session_create(repository=str(settings.ACDC_REPO), model="acdc/fake")
    sessionsets.activate(session, deploy_script, repo=serving.repository())

    events = turn(session.id, "how do I deploy?")
    notices = [e for e in events if isinstance(e, TurnNotice) and e.level == "warning"]
    assert len(notices) == 1
    text = notices[0].text
    assert text.startswith(f"{deploy_script} holds what looks like a private key and a GitHub")
    assert GITHUB_TOKEN not in text and "PRIVATE KEY-----" not in text
    # Said before the request left: the notice comes before the model's first word.
    started = next(i for i, e in enumerate(events) if isinstance(e, TurnStarted))
    assert started < events.index(notices[0]) < len(events) - 1
    assert Message.objects.filter(session=session, content=text).count() == 1

    again = turn(session.id, "and to roll back?")
    assert not [e for e in again if isinstance(e, TurnNotice) and e.level == "warning"]


def test_an_ordinary_file_brings_no_warning(fake, settings):
    session = services.session_create(repository=str(settings.ACDC_REPO), model="acdc/fake")
    sessionsets.activate(session, "src/app.py", repo=serving.repository())
    events = turn(session.id, "what does greet do?")
    assert not [e for e in events if isinstance(e, TurnNotice)]


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("-----BEGIN RSA " + "PRIVATE KEY-----", "a private key"),
        ("-----BEGIN " + "PRIVATE KEY-----", "a private key"),
        ("key = AKIA" + "ABCDEFGHIJKLMNOP", "an AWS access key"),
        ("sk-ant-" + "api03-" + "x" * 40, "an Anthropic API key"),
        ("OPENAI=sk-proj-" + "Ab3" * 15, "an OpenAI API key"),
        ("xoxb-" + "1234567890-abcdef", "a Slack token"),
    ],
)
def test_credential_shapes(text, kind):
    assert credentials.kinds_in(text) == [kind]


def test_prose_about_keys_is_not_a_credential():
    prose = "Set OPENAI_API_KEY to your key (it starts with sk-). Never commit a private key."
    assert credentials.kinds_in(prose) == []
