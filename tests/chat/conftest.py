"""Fixtures of the chat tests: the scripted fake model, no network beyond loopback, a
scripted OpenAI-compatible server on loopback (`openai_server`, with `openai_key`), a
session of the served repository (`session`) and the chat's view of `root` (`repo`).

The async `new_session` for tests that run turns or talk to the websocket lives with the
socket helpers in tests/chat/sockets.py."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
from django.conf import settings

from chat.llm.fake import FakeScript
from chat.llm.sdk import acdc_provider
from tests.chat.llm.openai_server import OpenAIServer

LOOPBACK = ("127.0.0.1", "::1", "localhost")


@pytest.fixture(autouse=True)
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any attempt to leave the machine fails the test loudly instead of hanging."""
    real_connect = socket.socket.connect
    real_getaddrinfo = socket.getaddrinfo

    def connect(sock: socket.socket, address: object) -> object:
        if isinstance(address, tuple) and address[0] not in LOOPBACK:
            raise AssertionError(f"a test tried to connect to {address}")
        return real_connect(sock, address)

    def getaddrinfo(host: object, *args: object, **kwargs: object) -> object:
        if host not in (*LOOPBACK, None):
            raise AssertionError(f"a test tried to resolve {host}")
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


@pytest.fixture
def openai_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """The API key litellm insists on for `openai/...` models."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback-test")


@pytest.fixture
def openai_server(openai_key: None) -> Iterator[OpenAIServer]:
    """Started per test and closed after it (releasing any reply still hanging)."""
    server = OpenAIServer()
    yield server
    server.close()


@pytest.fixture
def fake() -> Iterator[FakeScript]:
    """A fresh script installed into the running acdc provider, restored afterwards."""
    script = FakeScript()
    previous = acdc_provider().install(script)
    yield script
    acdc_provider().install(previous)


@pytest.fixture(autouse=True)
def no_keep_warm(settings) -> None:
    """No cache refreshes behind a test's back: a loop left sleeping after a turn would
    query a database being flushed. The keep-alive tests turn it on and drive the clock."""
    settings.ACDC_KEEP_WARM = False


@pytest.fixture(autouse=True)
def no_panel_poll(settings) -> None:
    """No poll of the session's version behind a test's back (chat.live.follower): its frames
    would come between the ones a test reads. The panel tests set their own interval."""
    settings.ACDC_PANEL_POLL_MS = 3_600_000


@pytest.fixture(autouse=True)
def own_served(served) -> None:
    """Every chat test runs with a served object of its own (tests/conftest.py): nothing
    one test counted, hosted or cached reaches the next, and its counting passes end with it."""


@pytest.fixture
def served_root(root):
    """`root` as the repository the chat serves (ACDC_REPO) for the length of the test."""
    from django.test import override_settings

    with override_settings(ACDC_REPO=root):
        yield root


@pytest.fixture
def repo(root):
    """`root` as the chat reads it, with a fixed filesystem id and a note of its own writes."""
    from chat.repo.indexing import Repository
    from chat.repo.own_writes import OwnWrites

    return Repository(root=root, filesystem_id="fs-test", own_writes=OwnWrites())


@pytest.fixture
def session():
    """A new session of the served repository (needs the database)."""
    from history import services

    return services.session_create(repository=str(settings.ACDC_REPO), model="acdc/fake")
