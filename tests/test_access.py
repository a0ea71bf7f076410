"""The access token on every request, on loopback too (acdc.access): without it nothing is
read or changed; the printed address lets a browser in once and for all; the token is kept
in the data folder, owner-only, unless ACDC_TOKEN names one."""

from __future__ import annotations

import os
import stat
from argparse import Namespace
from urllib.parse import quote_plus, urlsplit

import pytest
from channels.testing import WebsocketCommunicator
from django.test import Client, override_settings

from acdc.access import WebsocketTokenMiddleware, cookie_name
from acdc.commands import run, served_address
from acdc.datadir import access_token
from acdc.errors import CommandError
from acdc.terminal import runfile
from chat.repo.commands import declaring
from history import services

pytestmark = pytest.mark.django_db
TOKEN = "a-long-random-token"
COOKIE = cookie_name("")  # the test client's: it sends no Host header


def anonymous() -> Client:
    """A client as any local process is: no cookie, no bearer header."""
    client = Client()
    client.cookies.clear()
    return client


def test_a_request_without_the_token_is_refused_and_changes_nothing(settings, root, served):
    settings.ACDC_REPO, settings.ACDC_EDITS = root, True
    session = services.session_create(repository=str(root), model="acdc/fake")
    declare = {"name": "net", "command": "sh -c 'curl x'", "timeout": "600", "network": "on"}
    for client in (anonymous(), Client(HTTP_AUTHORIZATION="Bearer nope")):
        client.cookies.clear()
        assert client.post(f"/s/{session.id}/commands/add/", declare).status_code == 403
        assert client.post(f"/s/{session.id}/auto-apply/", {"enabled": "on"}).status_code == 403
        assert client.get(f"/s/{session.id}/").status_code == 403
    session.refresh_from_db()
    assert not session.auto_apply and declaring.declared(str(root)) == []
    # The very requests with the page's cookie do change them: the token was what refused.
    person = Client()
    assert person.post(f"/s/{session.id}/commands/add/", declare).status_code == 200
    assert person.post(f"/s/{session.id}/auto-apply/", {"enabled": "on"}).status_code == 204
    session.refresh_from_db()
    assert session.auto_apply and [c.name for c in declaring.declared(str(root))] == ["net"]


def test_a_plain_get_of_the_front_page_hands_out_no_cookie_that_lets_in():
    client = anonymous()
    response = client.get("/", HTTP_ACCEPT="text/html")
    assert response.status_code == 403
    assert not response.cookies
    assert "acdc url" in response.content.decode() and "?token=" in response.content.decode()
    assert client.get("/history/").status_code == 403  # with whatever it was handed


def test_htmx_and_api_requests_get_one_line_not_a_page():
    response = anonymous().get("/history/", HTTP_ACCEPT="text/html", HTTP_HX_REQUEST="true")
    assert response.status_code == 403
    assert response["Content-Type"].startswith("text/plain")
    assert b"access token" in response.content


@override_settings(ACDC_TOKEN=TOKEN)
def test_the_token_in_the_url_sets_a_cookie_and_redirects_to_the_clean_url():
    client = anonymous()
    response = client.get("/history/?token=" + TOKEN + "&q=x")
    assert response.status_code == 302
    assert response["Location"] == "/history/?q=x"
    cookie = response.cookies[COOKIE]
    assert cookie.value == TOKEN and cookie["httponly"] and cookie["samesite"] == "Strict"
    assert client.get("/history/").status_code == 200


@override_settings(ACDC_TOKEN=TOKEN)
def test_the_cookie_is_named_for_the_port_so_two_servers_keep_theirs():
    response = anonymous().get("/?token=" + TOKEN, HTTP_HOST="127.0.0.1:8765")
    assert list(response.cookies) == ["acdc_token_8765"]
    other = Client(HTTP_HOST="127.0.0.1:8766")
    other.cookies.clear()
    other.cookies["acdc_token_8765"] = TOKEN
    assert other.get("/history/").status_code == 403


@override_settings(ACDC_TOKEN="a+b/c&d=%e")
def test_the_address_serve_prints_lets_in_a_token_of_any_characters():
    address = urlsplit(served_address("127.0.0.1", 8000, "a+b/c&d=%e"))
    assert address.netloc == "127.0.0.1:8000"
    response = anonymous().get(f"{address.path}?{address.query}")
    assert response.status_code == 302
    assert response["Location"] == "/"


@override_settings(ACDC_TOKEN=TOKEN)
def test_a_wrong_token_is_refused():
    client = anonymous()
    response = client.get("/?token=nope", HTTP_ACCEPT="text/html")
    assert response.status_code == 403 and "not this server" in response.content.decode()
    assert not response.cookies
    client.cookies[COOKIE] = "nope"
    assert client.get("/").status_code == 403


@override_settings(ACDC_TOKEN=TOKEN)
def test_a_bearer_header_works_too():
    assert anonymous().get("/history/", HTTP_AUTHORIZATION=f"Bearer {TOKEN}").status_code == 200


def test_the_token_is_made_once_owner_only_and_a_given_one_wins(tmp_path):
    previous = os.umask(0)
    try:
        made = access_token(tmp_path, "")
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "token").stat().st_mode) == 0o600 and len(made) > 40
    assert access_token(tmp_path, "") == made  # a restart: the page's cookie still fits
    assert access_token(tmp_path, "from-the-environment") == "from-the-environment"


def test_acdc_url_prints_the_running_server_s_address_again(settings, tmp_path, capsys):
    settings.ACDC_DATA_DIR, settings.ACDC_TOKEN = tmp_path, "a+b"
    with pytest.raises(CommandError, match="no acdc serve runs"):
        run(Namespace(command="url"))
    runfile.write(tmp_path, host="127.0.0.1", port=8765, repository="repo")  # this pid: alive
    assert run(Namespace(command="url")) == 0
    assert capsys.readouterr().out == f"http://127.0.0.1:8765/?token={quote_plus('a+b')}\n"


async def _echo_app(scope, receive, send):
    await receive()
    await send({"type": "websocket.accept"})


def _socket(*headers: tuple[bytes, bytes]) -> WebsocketCommunicator:
    return WebsocketCommunicator(WebsocketTokenMiddleware(_echo_app), "/ws/x/", list(headers))


@override_settings(ACDC_TOKEN=TOKEN)
@pytest.mark.parametrize(
    "headers",
    [
        [],
        [(b"cookie", f"{COOKIE}=nope".encode())],
        [(b"host", b"127.0.0.1:8001"), (b"cookie", f"acdc_token_8000={TOKEN}".encode())],
        [(b"authorization", b"Bearer nope")],
        [(b"authorization", b"Bearer")],
        [(b"authorization", b"Basic " + TOKEN.encode())],
        [(b"authorization", TOKEN.encode())],
    ],
    ids=["nothing", "wrong cookie", "another port's cookie", "wrong", "empty", "basic", "bare"],
)
async def test_a_websocket_without_the_token_is_closed(headers):
    assert await _socket(*headers).connect() == (False, 4403)


@override_settings(ACDC_TOKEN=TOKEN)
@pytest.mark.parametrize(
    "headers",
    [
        [(b"host", b"127.0.0.1:8000"), (b"cookie", f"acdc_token_8000={TOKEN}".encode())],
        [(b"authorization", f"Bearer {TOKEN}".encode())],
        [(b"authorization", f"bearer {TOKEN}".encode())],
    ],
    ids=["cookie", "bearer", "lowercase bearer"],
)
async def test_a_websocket_with_the_cookie_or_a_bearer_header_is_let_through(headers):
    communicator = _socket(*headers)
    connected, _ = await communicator.connect()
    assert connected
    await communicator.disconnect()


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
