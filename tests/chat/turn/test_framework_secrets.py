"""A Django project's settings never reach the provider: through real turns with
`acdc/fake` (which records every request), `SECRET_KEY = "django-insecure-…"` and the
passwords beside it go out as markers whichever way the model or the person reads the
file: the map, read_file, grep, outline, an @-mention of the file and of a symbol's body."""

from __future__ import annotations

import json

import pytest
from django.test import override_settings

from chat.live.served import served
from chat.llm.fake import FakeStep
from chat.repo.mentions import Mention
from chat.turn.turns import TurnInput, TurnServices, run_turn
from tests.chat.repo.test_credentials import DJANGO_KEY, PRODUCTION_KEY
from tests.chat.sockets import new_session

pytestmark = pytest.mark.django_db(transaction=True)

DB_PASSWORD = "S3cr$t%" + "pass9"
SETTINGS = (
    "import os\n\n"
    f'SECRET_KEY = "{DJANGO_KEY}"\n'
    "DEBUG = True\n"
    f"DATABASES = {{'default': {{'NAME': 'app', 'PASSWORD': '{DB_PASSWORD}'}}}}\n\n\n"
    "def signing_key():\n"
    f"    fallback_key = '{PRODUCTION_KEY}'\n"
    "    return os.environ.get('SIGNING_KEY', fallback_key)\n"
)
LEAKS = ("k8$#v)q2", DB_PASSWORD)  # the start both keys share, and the password


@pytest.fixture
def repo_files():
    return {"mysite/settings.py": SETTINGS, "manage.py": "import mysite.settings\n"}


@pytest.fixture
def repo_is_git():
    return True


@pytest.fixture
def root(root):
    with override_settings(ACDC_REPO=root, ACDC_MAP_TOKENS=2000):
        yield root


def sent(fake, since: int) -> str:
    return "\n".join(json.dumps(r.messages, ensure_ascii=False) for r in fake.requests[since:])


async def turn(session, text: str, **kwargs) -> None:
    async def emit(event) -> None:
        pass

    sent = TurnInput(session.id, text, model="acdc/fake", **kwargs)
    await run_turn(sent, TurnServices(emit=emit, wiring=served()))


@pytest.mark.parametrize(
    ("tool", "arguments", "seen"),
    [
        ("read_file", {"path": "mysite/settings.py"}, "DEBUG = True"),
        ("grep", {"pattern": "KEY|PASSWORD"}, "mysite/settings.py:3:SECRET_KEY"),
        ("outline", {"path": "mysite/settings.py"}, "def signing_key"),
    ],
)
async def test_a_tool_that_reads_the_settings_sends_no_key(root, fake, tool, arguments, seen):
    session = await new_session()
    fake.enqueue(FakeStep(tool_calls=[{"name": tool, "arguments": arguments}]), FakeStep(text="ok"))
    before = len(fake.requests)

    await turn(session, "look at the settings")

    wire = sent(fake, before)
    assert len(fake.requests) - before == 2 and seen in wire  # the tool's answer went out
    assert "SECRET_KEY" in wire and not any(leak in wire for leak in LEAKS)


@pytest.mark.parametrize(
    "mention",
    [Mention("mysite/settings.py"), Mention("mysite/settings.py", "signing_key", 9, body=True)],
)
async def test_a_mention_of_the_settings_sends_no_key(root, fake, mention):
    session = await new_session()
    before = len(fake.requests)

    await turn(session, "what is in @settings?", mentions=(mention,))

    wire = sent(fake, before)
    assert "signing_key" in wire and not any(leak in wire for leak in LEAKS)
