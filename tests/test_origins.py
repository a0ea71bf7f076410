"""Who may open the chat websocket: only a page of this very server (scheme, host, port)
that carries the access token, bound to loopback or not; and ALLOWED_HOSTS, built from the
bind address."""

from __future__ import annotations

import pytest
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.test import override_settings

from acdc.access import cookie_name
from acdc.asgi import application
from acdc.env import LOOPBACK_HOSTS, env_allowed_hosts

TOKEN = "a-long-random-token"
# The token as the settings make it: the data folder's (ACDC_TOKEN is unset in tests).
LOOPBACK = override_settings(ALLOWED_HOSTS=["127.0.0.1", "localhost", "[::1]"])
PUBLIC_BIND = override_settings(ACDC_TOKEN=TOKEN, ALLOWED_HOSTS=["0.0.0.0", "acdc.example"])
PATH = "/ws/session/sess_0_000000/"  # no such session: accepted, told so, closed

REFUSED = {
    "another port": [(b"origin", b"http://127.0.0.1:3000"), (b"host", b"127.0.0.1:8000")],
    "localhost on another port": [(b"origin", b"http://localhost:3000"), (b"host", b"localhost")],
    "another host": [(b"origin", b"http://evil.example"), (b"host", b"127.0.0.1:8000")],
    "null": [(b"origin", b"null"), (b"host", b"127.0.0.1:8000")],
    "no origin": [(b"host", b"127.0.0.1:8000")],
    "no host": [(b"origin", b"http://127.0.0.1:8000")],
    "https for http": [(b"origin", b"https://127.0.0.1:8000"), (b"host", b"127.0.0.1:8000")],
    "a path": [(b"origin", b"http://127.0.0.1:8000/x"), (b"host", b"127.0.0.1:8000")],
    "a rebound name": [(b"origin", b"http://evil.example:8000"), (b"host", b"evil.example:8000")],
}
TOKEN_REFUSED = {
    **{
        name: [(k, v.replace(b"127.0.0.1", b"acdc.example")) for k, v in headers]
        for name, headers in REFUSED.items()
    },
    "another host": [(b"origin", b"http://evil.example"), (b"host", b"acdc.example")],
    "plain http behind a TLS proxy": [
        (b"origin", b"http://acdc.example"),
        (b"host", b"acdc.example"),
        (b"x-forwarded-proto", b"https"),
    ],
}


def with_cookie(headers: list[tuple[bytes, bytes]], host: str = "") -> list[tuple[bytes, bytes]]:
    """The headers and the cookie the page was given for the host they name (or `host`)."""
    host = host or next((v.decode() for k, v in headers if k == b"host"), "")
    return [*headers, (b"cookie", f"{cookie_name(host)}={settings.ACDC_TOKEN}".encode())]


async def handshake(headers: list[tuple[bytes, bytes]]) -> tuple[bool, int | None]:
    communicator = WebsocketCommunicator(application, PATH, headers)
    connected, code = await communicator.connect(timeout=30)
    if connected:
        assert "no session" in await communicator.receive_from(timeout=30)
        assert (await communicator.receive_output(timeout=30))["type"] == "websocket.close"
    return connected, code


@LOOPBACK
@pytest.mark.parametrize("headers", REFUSED.values(), ids=REFUSED.keys())
async def test_a_loopback_bind_refuses_any_other_origin_before_accepting(headers):
    assert await handshake(with_cookie(headers)) == (False, 4403)


@PUBLIC_BIND
@pytest.mark.parametrize("headers", TOKEN_REFUSED.values(), ids=TOKEN_REFUSED.keys())
async def test_a_public_bind_refuses_any_other_origin_even_with_the_cookie(headers):
    assert await handshake(with_cookie(headers)) == (False, 4403)


@LOOPBACK
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "origin, host",
    [
        (b"http://127.0.0.1:8000", b"127.0.0.1:8000"),
        (b"http://localhost:8000", b"LOCALHOST:8000"),
        (b"http://[::1]:8000", b"[::1]:8000"),
        (b"http://127.0.0.1", b"127.0.0.1:80"),
    ],
)
async def test_a_loopback_bind_accepts_the_page_s_own_origin(origin, host):
    assert (await handshake(with_cookie([(b"origin", origin), (b"host", host)])))[0]


@LOOPBACK
@pytest.mark.parametrize("cookie", ["none", "wrong", "another port's"])
async def test_a_loopback_bind_refuses_the_page_s_own_origin_without_the_token(cookie):
    """A local process (a run of a declared command with --network) can send any Origin."""
    headers = [(b"origin", b"http://127.0.0.1:8000"), (b"host", b"127.0.0.1:8000")]
    if cookie == "wrong":
        headers.append((b"cookie", f"acdc_token_8000={settings.ACDC_TOKEN}x".encode()))
    elif cookie == "another port's":
        headers = with_cookie(headers, host="127.0.0.1:8001")
    assert await handshake(headers) == (False, 4403)


@PUBLIC_BIND
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "headers",
    [
        [(b"origin", b"http://acdc.example:8000"), (b"host", b"acdc.example:8000")],
        [(b"origin", b"https://acdc.example"), (b"host", b"acdc.example")],
    ],
    ids=["direct", "behind a TLS proxy"],
)
async def test_a_public_bind_accepts_the_page_s_own_origin_with_the_cookie(headers):
    if headers[0][1].startswith(b"https"):
        headers = [*headers, (b"x-forwarded-proto", b"https")]
    assert (await handshake(with_cookie(headers)))[0]


@PUBLIC_BIND
async def test_a_public_bind_still_wants_the_cookie_from_the_right_origin():
    headers = [(b"origin", b"http://acdc.example:8000"), (b"host", b"acdc.example:8000")]
    assert await handshake(headers) == (False, 4403)


def test_a_loopback_bind_allows_the_loopback_names_only(monkeypatch):
    monkeypatch.delenv("ACDC_ALLOWED_HOSTS", raising=False)
    assert env_allowed_hosts("ACDC_ALLOWED_HOSTS", "127.0.0.1") == list(LOOPBACK_HOSTS)


def test_a_public_bind_allows_its_address_and_the_named_hosts_never_any_host(monkeypatch):
    monkeypatch.setenv("ACDC_ALLOWED_HOSTS", " acdc.example , .lan,[fd00::1]")
    assert env_allowed_hosts("ACDC_ALLOWED_HOSTS", "192.168.1.5") == [
        "192.168.1.5",
        "acdc.example",
        ".lan",
        "[fd00::1]",
    ]
    hosts = env_allowed_hosts("ACDC_ALLOWED_HOSTS", "::")
    assert hosts[:4] == ["127.0.0.1", "localhost", "[::1]", "[::]"] and "*" not in hosts


@pytest.mark.parametrize("given", ["acdc.example:8000", "https://acdc.example", "[::1]:80"])
def test_a_host_with_a_scheme_or_port_is_a_configuration_error(monkeypatch, given):
    monkeypatch.setenv("ACDC_ALLOWED_HOSTS", given)
    with pytest.raises(ImproperlyConfigured, match="ACDC_ALLOWED_HOSTS"):
        env_allowed_hosts("ACDC_ALLOWED_HOSTS", "0.0.0.0")
