"""The HUD's quality advice names what fills the window: files, or the history."""

from __future__ import annotations

import pytest
from django.test import override_settings

from chat.turn.context import select_files
from chat.turn.hud import hud_data
from chat.turn.session import SessionContext
from contextcore.models import ModelFacts
from history import services

pytestmark = pytest.mark.django_db


def test_over_budget_with_a_short_history_the_advice_names_the_files(root):
    (root / "big.py").write_text("value = compute(value)\n" * 400)
    with override_settings(ACDC_REPO=root):
        session = services.session_create(repository=str(root), model="acdc/fake")
        assert select_files(session.id, add=["big.py"]) == []
        ctx = SessionContext.open(session.id, model="acdc/fake")
        small = ModelFacts(name="small", max_input_tokens=3_000, max_output_tokens=100)

        hud = hud_data(session.id, small, ctx.manager, turns=1, compactions=0)

    quality = hud["quality"]
    assert quality["action"] == "files", quality
    assert "mostly files" in quality["suggestion"] and "untick" in quality["suggestion"]
