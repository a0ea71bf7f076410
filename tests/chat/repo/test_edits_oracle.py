"""The edit tools are no oracle for a redacted secret: the model is shown a marker, and an
edit that reaches for what is behind it gets one answer whatever it guesses."""

from __future__ import annotations

import json
import string

import pytest

from chat.repo import edittools, sessionsets
from chat.repo.tools.calls import ToolCall
from history import services
from history.models import PendingEdit
from tests import serving

pytestmark = pytest.mark.django_db
TOKEN = "ghp_" + "aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xY2zA4"
CONFIG = f"name: demo\nGITHUB_TOKEN: {TOKEN}\nretries: 3\n"


@pytest.fixture
def repo_files():
    return {"ci.yml": CONFIG}


@pytest.fixture
def edits_on(settings, served_root):
    settings.ACDC_EDITS = True
    return served_root


def edit(session, old: str, new: str, n: int) -> str:
    args = json.dumps({"path": "ci.yml", "old_text": old, "new_text": new})
    call = ToolCall(f"c{n}", "edit_file", args)
    return edittools.run_edit_tool(session, call, turn_id=f"t{n}", repo=serving.repository()).output


def test_every_guess_of_the_next_character_gets_the_same_answer(edits_on):
    session = services.session_create(repository="", model="acdc/fake")
    sessionsets.activate(
        session, "ci.yml", repo=serving.repository()
    )  # the model read it: the token as a marker
    known = "GITHUB_TOKEN: ghp_"
    answers = {
        edit(session, known + guess, "GITHUB_TOKEN: x", n)
        for n, guess in enumerate(string.ascii_letters[:20] + string.digits)
    }
    assert len(answers) == 1, answers
    assert TOKEN not in answers.pop()
    wrong = TOKEN[:-1] + ("B" if TOKEN[-1] != "B" else "C")
    whole = {
        edit(session, f"GITHUB_TOKEN: {t}", "GITHUB_TOKEN: x", 90 + n)
        for n, t in enumerate((TOKEN, wrong))
    }
    assert len(whole) == 1, whole  # the whole token, right or wrong by one character
    assert (edits_on / "ci.yml").read_text() == CONFIG


def test_an_edit_beside_the_secret_still_applies_and_keeps_its_bytes(edits_on):
    session = services.session_create(repository="", model="acdc/fake")
    sessionsets.activate(session, "ci.yml", repo=serving.repository())
    said = edit(session, "retries: 3", "retries: 5", 1)
    assert said.startswith("pending review: ci.yml, +1 −1"), said
    ids = list(PendingEdit.objects.values_list("pk", flat=True))
    from chat.repo.edits.applying import accept

    assert accept(session, ids, repo=serving.repository()).applied
    assert (edits_on / "ci.yml").read_text() == CONFIG.replace("retries: 3", "retries: 5")
