from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from channels.testing import WebsocketCommunicator
from django.test import override_settings

from acdc.access import COOKIE_NAME, WebsocketTokenMiddleware
from acdc.commands import served_address

pytestmark = pytest.mark.django_db
TOKEN = "a-long-random-token"


def test_without_a_token_configured_pages_are_open(client):
    assert client.get("/").status_code == 302


@override_settings(ACDC_TOKEN=TOKEN)
def test_a_configured_token_is_required(client):
    response = client.get("/")
    assert response.status_code == 403
    assert b"access token" in response.content


@override_settings(ACDC_TOKEN=TOKEN)
def test_the_token_in_the_url_sets_a_cookie_and_redirects_to_the_clean_url(client):
    response = client.get("/?token=" + TOKEN)
    assert response.status_code == 302
    assert response["Location"] == "/"
    assert response.cookies[COOKIE_NAME].value == TOKEN
    assert response.cookies[COOKIE_NAME]["httponly"]
    assert client.get("/").status_code == 302


@override_settings(ACDC_TOKEN="a+b/c&d=%e")
def test_the_address_serve_prints_lets_in_a_token_of_any_characters(client):
    address = urlsplit(served_address("127.0.0.1", 8000, "a+b/c&d=%e"))
    response = client.get(f"{address.path}?{address.query}")
    assert response.status_code == 302
    assert response["Location"] == "/"


@override_settings(ACDC_TOKEN=TOKEN)
def test_a_wrong_token_is_refused(client):
    assert client.get("/?token=nope").status_code == 403
    client.cookies[COOKIE_NAME] = "nope"
    assert client.get("/").status_code == 403


@override_settings(ACDC_TOKEN=TOKEN)
def test_a_bearer_header_works_too(client):
    assert client.get("/", HTTP_AUTHORIZATION=f"Bearer {TOKEN}").status_code == 302


async def _echo_app(scope, receive, send):
    await receive()
    await send({"type": "websocket.accept"})


@override_settings(ACDC_TOKEN=TOKEN)
async def test_a_websocket_without_the_cookie_is_closed():
    communicator = WebsocketCommunicator(WebsocketTokenMiddleware(_echo_app), "/ws/x/")
    connected, code = await communicator.connect()
    assert not connected
    assert code == 4403


@override_settings(ACDC_TOKEN=TOKEN)
async def test_a_websocket_with_the_cookie_is_let_through():
    communicator = WebsocketCommunicator(
        WebsocketTokenMiddleware(_echo_app),
        "/ws/x/",
        headers=[(b"cookie", f"{COOKIE_NAME}={TOKEN}".encode())],
    )
    connected, _ = await communicator.connect()
    assert connected
    await communicator.disconnect()


@override_settings(ACDC_TOKEN=TOKEN)
@pytest.mark.parametrize("scheme", ["Bearer", "bearer"])
async def test_a_websocket_with_only_a_bearer_header_is_let_through(scheme):
    communicator = WebsocketCommunicator(
        WebsocketTokenMiddleware(_echo_app),
        "/ws/x/",
        headers=[(b"authorization", f"{scheme} {TOKEN}".encode())],
    )
    connected, _ = await communicator.connect()
    assert connected
    await communicator.disconnect()


@override_settings(ACDC_TOKEN=TOKEN)
@pytest.mark.parametrize(
    "authorization", [b"Bearer nope", b"Bearer", b"Basic " + TOKEN.encode(), TOKEN.encode()]
)
async def test_a_websocket_with_a_wrong_bearer_header_is_closed(authorization):
    communicator = WebsocketCommunicator(
        WebsocketTokenMiddleware(_echo_app), "/ws/x/", headers=[(b"authorization", authorization)]
    )
    assert await communicator.connect() == (False, 4403)


@override_settings(ACDC_TOKEN=TOKEN, ALLOWED_HOSTS=["acdc.example"])
@pytest.mark.django_db(transaction=True)
async def test_the_chat_socket_takes_a_bearer_header_from_the_page_s_own_origin():
    from acdc.asgi import application

    headers = [
        (b"origin", b"http://acdc.example:8000"),
        (b"host", b"acdc.example:8000"),
        (b"authorization", f"Bearer {TOKEN}".encode()),
    ]
    communicator = WebsocketCommunicator(application, "/ws/session/sess_0_000000/", headers)
    connected, _ = await communicator.connect(timeout=30)
    assert connected
    assert "no session" in await communicator.receive_from(timeout=30)
    assert (await communicator.receive_output(timeout=30))["type"] == "websocket.close"
