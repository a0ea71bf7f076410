"""The switcher's endpoint: another version in view (the conversation and HUD drawn again
through the session's socket, back to the page without htmx), and a refusal said in words,
never a server error."""

from __future__ import annotations

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.conf import settings
from django.test import Client

from chat.web.broadcast import session_group
from history import services
from history.models import Message

pytestmark = pytest.mark.django_db(transaction=True)


def two_versions():
    session = services.session_create(repository=str(settings.ACDC_REPO), model="acdc/fake")
    first = services.message_append(session=session, role="user", content="Explain the parser")
    reply = services.message_append(session=session, role="assistant", content="First answer.")
    Message.objects.filter(session=session).update(rolled_back=True)
    Message.objects.filter(pk=first.pk).update(branch_path=[first.id, reply.id])
    services.message_append(
        session=session, role="user", content="Explain the parser", alt_of=first.id
    )
    services.message_append(session=session, role="assistant", content="Second answer.")
    return session, first


def in_view(session) -> list[str]:
    return [m.content for m in session.messages.filter(rolled_back=False).order_by("seq")]


def test_an_htmx_switch_draws_the_conversation_and_the_hud_again_in_every_tab():
    session, first = two_versions()
    layer = get_channel_layer()
    tab = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(session_group(session.id), tab)
    response = Client().post(f"/m/{first.id}/show/", headers={"HX-Request": "true"})
    # The tab that clicked is one of the session's tabs: the frame draws it, and the answer
    # carries nothing to swap (its form is gone by then, and htmx would find no target).
    assert response.status_code == 204 and not response.content
    html = async_to_sync(layer.receive)(tab)["html"]
    assert "Version 1 of 2" in html and 'id="hud"' in html and "First answer." in html
    assert in_view(session) == ["Explain the parser", "First answer."]


def test_without_htmx_the_switch_goes_back_to_the_page():
    session, first = two_versions()
    response = Client().post(f"/m/{first.id}/show/")
    assert response.status_code == 302 and response["Location"] == f"/s/{session.id}/"
    assert in_view(session) == ["Explain the parser", "First answer."]


def test_a_message_without_versions_is_refused_in_words():
    session, first = two_versions()
    reply = session.messages.get(content="Second answer.")
    response = Client().post(f"/m/{reply.id}/show/", headers={"HX-Request": "true"})
    assert response.status_code == 200 and "There is no such version" in response.content.decode()
    assert response["HX-Reswap"] == "none"  # the error frame places itself
    assert in_view(session) == ["Explain the parser", "Second answer."]
    assert Client().post("/m/no-such-message/show/").status_code == 404
