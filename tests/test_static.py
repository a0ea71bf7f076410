"""Static files come from WhiteNoise's middleware; nothing outside the static files leaks out.

Each test builds its own Client, so WhiteNoise is set up under that test's settings: with
DEBUG off it serves from the index it makes at start-up, with DEBUG on it looks files up per
request (autorefresh), which is the path where a `..` could reach a finder.
"""

from __future__ import annotations

import pytest
from channels.testing import ApplicationCommunicator
from django.conf import settings
from django.test import AsyncClient, Client, override_settings

pytestmark = pytest.mark.django_db

ESCAPES = [
    "/static/../../etc/passwd",
    "/static/../../../../../../etc/passwd",
    "/static/..%2f..%2f..%2fetc%2fpasswd",
    "/static/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
    "/static/acdc/../../acdc/settings.py",
    "/static/acdc/..%5c..%5cacdc%5csettings.py",
    "/static//etc/passwd",
    "/static/acdc/%00.css",
    "/static/",
    "/static/acdc/",
    "/static/acdc/no-such-file.css",
]


def _client() -> Client:
    return Client(raise_request_exception=False)


@pytest.mark.parametrize("debug", [False, True], ids=["indexed", "autorefresh"])
def test_a_static_file_is_served(debug):
    with override_settings(DEBUG=debug):
        response = _client().get("/static/acdc/acdc.css")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/css")
    assert b"".join(response.streaming_content)
    response.close()  # the file's handle, as the server closes it after sending


def test_a_static_file_of_an_installed_app_is_served_without_collectstatic():
    response = _client().get("/static/admin/css/base.css")
    assert response.status_code == 200
    response.close()


@pytest.mark.parametrize("debug", [False, True], ids=["indexed", "autorefresh"])
@pytest.mark.parametrize("path", ESCAPES)
def test_paths_outside_the_static_files_answer_404(debug, path):
    with override_settings(DEBUG=debug):
        response = _client().get(path)
    assert response.status_code == 404, (path, response.status_code)


def test_static_files_need_no_access_token():
    client = _client()
    client.cookies.clear()
    served = client.get("/static/acdc/acdc.css")
    assert served.status_code == 200
    served.close()
    assert client.get("/").status_code == 403


async def _asgi_get(application, path: str) -> tuple[int, bytes]:
    """One GET straight through an ASGI application: (status, body)."""
    token = settings.ACDC_TOKEN
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        # with the page's cookie: what is no static file reaches Django and its 404
        "headers": [(b"host", b"127.0.0.1"), (b"cookie", f"acdc_token={token}".encode())],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }
    communicator = ApplicationCommunicator(application, scope)
    await communicator.send_input({"type": "http.request", "body": b""})
    start = await communicator.receive_output(10)
    body = b""
    while True:
        message = await communicator.receive_output(10)
        body += message.get("body", b"")
        if not message.get("more_body", False):
            break
    await communicator.wait(10)
    return start["status"], body


@pytest.mark.filterwarnings("ignore:StreamingHttpResponse must consume synchronous iterators")
async def test_the_asgi_application_serves_static_files_itself():
    from acdc.asgi import application

    status, body = await _asgi_get(application, "/static/acdc/chat.js")
    assert status == 200
    assert body
    status, _ = await _asgi_get(application, "/static/../../etc/passwd")
    assert status == 404


async def test_the_async_client_path_refuses_escapes_too():
    client = AsyncClient(raise_request_exception=False)
    served = await client.get("/static/acdc/chat.js")
    assert served.status_code == 200
    served.close()
    assert (await client.get("/static/../../etc/passwd")).status_code == 404
