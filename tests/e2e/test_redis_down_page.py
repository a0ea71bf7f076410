"""A chat page opened while Redis is down, in Chromium, with a redis-server the test starts
and kills (SIGKILL): the socket is refused, and the status line says in the server's one
line that the live channel (Redis) is unreachable and that the page reconnects when it is
back, not just "Connection lost". Once Redis is started again on the same port the page
reconnects by itself and the next message is answered; Redis killed under the open page
is said the same way, and the page comes back again. The server's log has no traceback.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import pytest_asyncio
from playwright.async_api import expect

from tests.e2e.conftest import SLOW, screenshot, signed_in_page, start_server
from tests.test_serve_redis_killed import Redis

pytestmark = pytest.mark.asyncio(loop_scope="session")
SHOTS = Path("/tmp/scale/shots")  # a copy for the person looking, beside test-artifacts/


@pytest.fixture
def on_redis(tmp_path_factory):
    redis = Redis(tmp_path_factory.mktemp("redis") / "data")
    redis.start()
    running = start_server(tmp_path_factory.mktemp("acdc-server"), {"REDIS_URL": redis.url})
    try:
        yield redis, running
    finally:
        running.stop()
        running.wait_stopped()
        redis.kill()


@pytest_asyncio.fixture(loop_scope="session")
async def tab(browser, on_redis):
    async with signed_in_page(browser, on_redis[1]) as page:
        yield page


async def shot(page, name: str) -> None:
    await screenshot(page, name, copy_to=SHOTS)


async def test_a_page_opened_while_redis_is_down_says_so_and_recovers(on_redis, tab):
    redis, running = on_redis
    address = running.new_session()
    running.script.write_text('["Back with Redis."]')
    redis.kill()
    await tab.goto(address)
    status = tab.locator("#status-line")
    await expect(status).to_contain_text("The live channel (Redis) is unreachable")
    await expect(status).to_contain_text("the page reconnects when it is back")
    await expect(tab.get_by_role("button", name="Send", exact=True)).to_be_disabled()
    await shot(tab, "redis-down-fresh-page")

    redis.start()
    await expect(status).to_have_text("Connected.", timeout=SLOW)
    await tab.get_by_role("textbox", name="Message").fill("Are you there again?")
    await tab.get_by_role("button", name="Send", exact=True).click()
    log = tab.get_by_role("log", name="Conversation")
    await expect(log).to_contain_text("Back with Redis.", timeout=SLOW)
    await shot(tab, "redis-back-answered")

    redis.kill()  # under the open page now: its socket is told, closes (1013), and retries
    await expect(status).to_contain_text("The live channel (Redis) is unreachable", timeout=SLOW)
    await shot(tab, "redis-killed-under-open-page")
    redis.start()
    await expect(status).to_have_text("Connected.", timeout=SLOW)
    assert "Traceback" not in running.log.read_text()
