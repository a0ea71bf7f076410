"""The header's model chooser: it saves the session's model, refuses malformed names, and
the next turn goes to the model chosen."""

from __future__ import annotations

import pytest
from asgiref.sync import async_to_sync
from django.conf import settings

from chat.live.served import served
from chat.llm import costmap
from chat.llm.costmap import ModelListings, cost_map_models
from chat.turn.turns import TurnInput, TurnServices, run_turn
from chat.web import views_model
from chat.web.views_model import SWITCH_NOTICE, model_suggestions
from history import services
from history.models import Message, Session


def _session(model: str) -> Session:
    return services.session_create(repository=str(settings.ACDC_REPO), model=model)


async def _ignore(event) -> None:
    return None


@pytest.mark.django_db
def test_it_shows_the_sessions_own_model_and_the_default_for_new_sessions(client, settings):
    settings.ACDC_MODEL = "acdc/fake"
    session = _session("acdc/dry-run")
    html = client.get(f"/s/{session.id}/model/").content.decode()
    assert 'id="model-input"' in html and ">Model</label>" in html
    assert 'value="acdc/dry-run"' in html
    assert "New sessions start with acdc/fake." in html
    assert '<option value="acdc/fake">' in html and 'list="model-suggestions"' in html
    assert "model.css" in html


@pytest.mark.django_db
def test_it_saves_the_model_and_says_what_the_switch_does(client):
    session = _session("acdc/dry-run")
    response = client.post(
        f"/s/{session.id}/model/", {"model": "  acdc/fake ", "shown": "acdc/dry-run"}
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert 'value="acdc/fake"' in html and 'role="status"' in html
    assert SWITCH_NOTICE.replace("'", "&#x27;") in html
    assert Session.objects.get(pk=session.pk).model == "acdc/fake"


@pytest.mark.django_db
def test_it_accepts_a_model_litellm_may_know_that_acdc_does_not(client):
    session = _session("acdc/dry-run")
    client.post(f"/s/{session.id}/model/", {"model": "someprovider/some-model:v2@latest"})
    assert Session.objects.get(pk=session.pk).model == "someprovider/some-model:v2@latest"


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("typed", "said"),
    [
        ("", "Name a model"),
        ("   ", "Name a model"),
        ("acdc fake", "no spaces"),
        ("acdc/\x00fake", "control characters"),
        ("x" * 201, "at most 200 characters; this one has 201"),
    ],
)
def test_it_refuses_a_malformed_name_with_a_clear_message(client, typed, said):
    session = _session("acdc/dry-run")
    response = client.post(f"/s/{session.id}/model/", {"model": typed, "shown": "acdc/dry-run"})
    html = response.content.decode()
    assert response.status_code == 200  # a refusal is a message in the fragment htmx swaps
    assert said in html and 'role="alert"' in html and 'aria-invalid="true"' in html
    assert 'value="acdc/dry-run"' in html
    assert Session.objects.get(pk=session.pk).model == "acdc/dry-run"


@pytest.mark.django_db
def test_it_rejects_other_methods_and_unknown_sessions(client):
    assert client.put(f"/s/{_session('acdc/fake').id}/model/").status_code == 405
    assert client.post("/s/sess_0_000000/model/", {"model": "acdc/fake"}).status_code == 404


@pytest.mark.django_db(transaction=True)
def test_the_next_turn_uses_the_model_chosen(client, fake):
    session = _session("acdc/dry-run")
    async_to_sync(run_turn)(
        TurnInput(session_id=session.id, user_text="first"),
        TurnServices(emit=_ignore, wiring=served()),
    )
    client.post(f"/s/{session.id}/model/", {"model": "acdc/fake", "shown": "acdc/dry-run"})
    async_to_sync(run_turn)(
        TurnInput(session_id=session.id, user_text="second"),
        TurnServices(emit=_ignore, wiring=served()),
    )

    replies = Message.objects.filter(session=session, role="assistant").order_by("seq")
    first, second = [reply.content for reply in replies]
    assert not first.startswith("Fake reply to:")  # the dry-run's report
    assert second == "Fake reply to: second"
    assert [request.model for request in fake.requests] == ["acdc/fake"]
    assert Session.objects.get(pk=session.pk).model == "acdc/fake"


def test_suggestions_are_the_offline_models_without_provider_keys(settings):
    settings.ACDC_MODEL = "acdc/fake"
    assert model_suggestions({}, ModelListings()) == ["acdc/fake", "acdc/dry-run"]


def test_suggestions_add_the_keyed_providers_models_once_listed(settings, monkeypatch):
    settings.ACDC_MODEL = "acdc/fake"
    monkeypatch.setattr(costmap.threading, "Thread", _NoThread)
    listings, env = ModelListings(), {"ANTHROPIC_API_KEY": "sk-test"}
    first = model_suggestions(env, listings)
    assert first == ["acdc/fake", "acdc/dry-run", "anthropic/claude-sonnet-4-5"]

    listings.list(("anthropic",))  # what the thread does: litellm's own map
    listed = model_suggestions(env, listings)
    assert 3 < len(listed) <= 200
    assert listed[:3] == ["acdc/fake", "acdc/dry-run", "anthropic/claude-sonnet-4-5"]
    assert all(name.startswith("anthropic/") for name in listed[2:])


def test_the_cost_map_gives_chat_models_of_the_keyed_providers_with_their_prefix():
    cost_map = {
        "sample_spec": {"mode": "chat"},
        "gpt-4o": {"litellm_provider": "openai", "mode": "chat"},
        "ft:gpt-4o": {"litellm_provider": "openai", "mode": "chat"},
        "text-embedding-3-small": {"litellm_provider": "openai", "mode": "embedding"},
        "gemini/gemini-2.5-pro": {"litellm_provider": "gemini", "mode": "chat"},
        "mistral/mistral-large": {"litellm_provider": "mistral", "mode": "chat"},
    }
    listed = cost_map_models(cost_map, ("openai", "gemini"))
    assert listed == ("openai/gpt-4o", "gemini/gemini-2.5-pro")
    many = {f"m{n:04}": {"litellm_provider": "openrouter", "mode": "chat"} for n in range(900)}
    assert len(cost_map_models(many, ("openrouter",))) <= 200


class _NoThread:
    """Stands in for threading.Thread: the test lists the models itself."""

    def __init__(self, **kwargs) -> None:
        pass

    def start(self) -> None:
        pass


def test_it_says_a_name_litellm_lacks_and_offers_the_nearest_known_one():
    said, nearest = views_model.model_check("nonexistent/model-xyz")
    assert said == (
        "litellm does not know nonexistent/model-xyz: it will be sent as is; "
        "window and prices unknown."
    )
    assert nearest == ""
    assert views_model.model_check("openai/gpt-4.1-mni")[1] == "openai/gpt-4.1-mini"
    assert views_model.model_check("acdc/fak")[1] == "acdc/fake"
    assert views_model.model_check("openai/gpt-4.1") == ("", "")
    assert views_model.model_check("acdc/dry-run") == ("", "")
