"""A message over the frame limit, through the real server (Daphne, `acdc serve`): one the
page did not check is answered with its reason and the socket stays open for the next
message; only a frame over even Daphne's limit (FRAME_HEADROOM times acdc's) closes the
socket, with code 1009, which the page answers by connecting again (chat.js)."""

from __future__ import annotations

import json

import aiohttp
import pytest

from acdc.commands import FRAME_HEADROOM
from bench.live_server import (
    ChatSocket,
    http_client,
    make_repo,
    new_session,
    server_environ,
    start_worker,
)

LIMIT = 64 * 1024  # the server's ACDC_MAX_FRAME_BYTES here: small frames, same behaviour
TIMEOUT = 90.0


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory):
    folder = tmp_path_factory.mktemp("served")
    extra = {"ACDC_MAX_FRAME_BYTES": str(LIMIT)}
    environ = server_environ(make_repo(folder / "repo", files=1), folder / "data", extra)
    worker = start_worker(environ, folder / "serve.log")
    yield worker
    worker.stop()


async def test_a_frame_over_the_limit_gets_its_reason_and_the_socket_stays(served):
    async with http_client() as http:
        tab = await ChatSocket.open(http, served.url, await new_session(http, served.url))
        too_large = "x" * (3 * LIMIT)  # three times the limit, as the 3 MB paste

        refused = await tab.turn(too_large, TIMEOUT)
        after = await tab.turn("a short one", TIMEOUT)
        await tab.close()

    assert refused.status == "error"
    assert (
        refused.detail
        == "The message is too large (196 kB; at most 65 kB): nothing in it was used."
    )
    assert after.status == "complete"


async def test_a_frame_over_daphne_s_own_limit_closes_the_socket_with_1009(served):
    async with http_client() as http:
        tab = await ChatSocket.open(http, served.url, await new_session(http, served.url))
        await tab.ws.send_str(json.dumps({"message": "x" * (FRAME_HEADROOM + 1) * LIMIT}))

        closed = await tab.ws.receive(timeout=TIMEOUT)

    assert closed.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED)
    assert tab.ws.close_code == 1009
