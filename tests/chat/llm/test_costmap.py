"""The page's model facts come from litellm's bundled map file: the page never imports
litellm, and the facts are the ones litellm itself gives."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from chat.llm import costmap, sdk
from chat.llm.facts import model_facts

MODELS = (
    "anthropic/claude-sonnet-4-5",
    "claude-sonnet-4-5",
    "openai/gpt-4o",
    "gpt-4o-mini",
    "gemini/gemini-2.5-pro",
)
PAGE = textwrap.dedent(
    """
    import json, re, sys, threading
    import django
    django.setup()
    from django.core.management import call_command
    from django.test import Client
    from django.urls import reverse
    call_command("migrate", verbosity=0)
    import acdc.asgi, acdc.commands  # what `acdc serve` loads before it serves
    from chat.live.served import served
    from chat.session.hud import request_facts
    from django.conf import settings
    from acdc.access import cookie_name
    client = Client(HTTP_HOST="127.0.0.1")  # with the access cookie, as a browser has it
    client.cookies[cookie_name("127.0.0.1")] = settings.ACDC_TOKEN
    page = client.get("/", follow=True)
    session = page.redirect_chain[-1][0].strip("/").split("/")[-1]
    loads = re.findall(r'hx-get="([^"]+)" hx-trigger="load"', page.content.decode())
    loads.append(reverse("chat:files_json", args=[session]))
    statuses = [page.status_code, *(client.get(url).status_code for url in loads)]
    for thread in threading.enumerate():  # the model chooser lists the cost map in one
        if thread.name == "acdc-model-list":
            thread.join()
    facts, _ = request_facts("anthropic/claude-sonnet-4-5", served().runtime)
    print(json.dumps({
        "statuses": sorted(set(statuses)),
        "fragments": len(loads),
        "window": facts.max_input_tokens,
        "priced": facts.input_cost_per_token > 0,
        "litellm": sorted(m for m in sys.modules if m.split(".")[0] == "litellm"),
    }))
    """
)


def test_the_first_page_shows_a_real_models_window_without_importing_litellm(root, tmp_path):
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ACDC_")}
    environ.pop("DATABASE_URL", None)
    environ.update(
        DJANGO_SETTINGS_MODULE="acdc.settings",
        ACDC_REPO=str(root),
        ACDC_DATA_DIR=str(tmp_path / "data"),
        ACDC_MODEL="anthropic/claude-sonnet-4-5",
        ANTHROPIC_API_KEY="not-used-no-request-is-sent",
    )
    result = subprocess.run(
        [sys.executable, "-c", PAGE], env=environ, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
    seen = json.loads(result.stdout.strip().splitlines()[-1])

    assert seen == {
        "statuses": [200],
        "fragments": 4,
        "window": 200_000,
        "priced": True,
        "litellm": [],
    }


@pytest.mark.parametrize("model", MODELS)
def test_the_bundled_facts_are_litellms(model):
    assert model_facts(model, costmap.model_info) == model_facts(model, sdk.model_info)


def test_a_name_the_file_does_not_hold_is_asked_of_litellm():
    facts, warning = model_facts("nosuchprovider/no-such-model-7", costmap.model_info)

    assert costmap.bundled("nosuchprovider/no-such-model-7") is None
    assert warning and "no entry for 'nosuchprovider/no-such-model-7'" in warning
    assert facts.input_cost_per_token == 0.0


def test_a_name_of_another_provider_is_not_taken_from_the_file():
    assert costmap.bundled("openai/claude-sonnet-4-5") is None
