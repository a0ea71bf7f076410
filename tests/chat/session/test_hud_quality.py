"""The HUD's quality advice names what fills the window: files, or the history."""

from __future__ import annotations

import pytest
from django.test import override_settings

from chat.live.served import served
from chat.session import SessionContext
from chat.session.hud import hud_data
from chat.session.setchanges import select_files
from contextcore.models import ModelFacts
from history import services

pytestmark = pytest.mark.django_db


def test_over_budget_with_a_short_history_the_advice_names_the_files(root):
    (root / "big.py").write_text("value = compute(value)\n" * 400)
    with override_settings(ACDC_REPO=root):
        session = services.session_create(repository=str(root), model="acdc/fake")
        assert select_files(session.id, wiring=served(), add=["big.py"]) == []
        ctx = SessionContext.open(session.id, served(), model="acdc/fake")
        small = ModelFacts(name="small", max_input_tokens=3_000, max_output_tokens=100)

        hud = hud_data(session.id, small, ctx.manager, usage=[], turns=1, compactions=0)

    quality = hud["quality"]
    assert quality["action"] == "files", quality
    assert "mostly files" in quality["suggestion"] and "untick" in quality["suggestion"]


def test_the_figures_are_drawn_from_the_rows_handed_in_without_a_query(
    root, django_assert_num_queries
):
    with override_settings(ACDC_REPO=root):
        session = services.session_create(repository=str(root), model="acdc/fake")
        ctx = SessionContext.open(session.id, served(), model="acdc/fake")
        usage = [[1000, 800, 0.01], [2000, 1500, 0.02]]
        with django_assert_num_queries(0):
            hud = hud_data(
                session.id, ctx.manager.facts, ctx.manager, usage=usage, turns=2, compactions=0
            )
    assert hud["turns"] == 2 and hud["last_hit_share"] == 75
    assert hud["session_cost"] == pytest.approx(0.03)
