"""When calibration against the provider's usage moved the budget, the HUD says so and by
how much (issue 30, item 7)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from django.template.loader import render_to_string

from chat.live.served import served
from chat.session import SessionContext
from chat.session.hud import hud_data
from contextcore.calibration import shift
from contextcore.models import ModelFacts
from history import services

pytestmark = pytest.mark.django_db

WINDOW_32K = ModelFacts(name="openai/someone-new", max_input_tokens=32_000, max_output_tokens=4_096)


def _hud(facts: ModelFacts) -> dict:
    session = services.session_create(repository="", model="acdc/fake")
    ctx = SessionContext.open(session.id, served(), model="acdc/fake")
    return hud_data(session.id, facts, ctx.manager, turns=0, compactions=0, usage=[])


def test_a_provider_counting_less_raises_the_budget_and_the_hud_says_why():
    hud = _hud(replace(WINDOW_32K, token_factor=0.5))
    assert hud["window"] == 55_808
    assert hud["calibration"] == {
        "factor": 0.5,
        "budget": 55_808,
        "uncorrected": 27_904,
        "delta": 27_904,
    }
    html = render_to_string("chat/_hud.html", {"hud": hud})
    assert "Budget calibrated from the provider's usage (×0.50 of acdc's count)" in html
    assert "55,808 instead of 27,904 tokens (+27,904)" in html


def test_a_provider_counting_more_lowers_it_and_the_hud_says_by_how_much():
    hud = _hud(replace(WINDOW_32K, token_factor=1.2))
    html = render_to_string("chat/_hud.html", {"hud": hud})
    assert "(×1.20 of acdc's count): 23,253 instead of 27,904 tokens (-4,651)" in html


def test_without_calibration_the_hud_says_nothing_of_it():
    hud = _hud(WINDOW_32K)
    assert hud["calibration"] is None
    assert "calibrated" not in render_to_string("chat/_hud.html", {"hud": hud})
    assert shift(1.0, 100, 100) is None


def test_the_hud_names_the_tool_definitions_every_request_carries():
    # The window has them taken off; without this line the HUD's total reads ~1,400
    # tokens less than the request the person pays for.
    html = render_to_string("chat/_hud.html", {"hud": _hud(replace(WINDOW_32K, tool_tokens=1_234))})
    assert "+ 1,234 tokens of tool definitions in every request" in html
    assert "tool definitions in every" not in render_to_string(
        "chat/_hud.html", {"hud": _hud(WINDOW_32K)}
    )
