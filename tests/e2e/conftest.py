"""Browser tests: real acdc servers (Daphne, in subprocesses) and Debian's Chromium.

pytest-django's live_server cannot serve websockets, so the tests run `acdc serve` on a free
port with its own repository and data folder. Starting one takes seconds, so tests share:
one server per distinct `@pytest.mark.server_env(...)` for the whole run, and one Chromium.
Each test still starts clean: a chat session of its own (`server.session_url`), a fresh
browser context, an empty fake-model script (the JSON file named by ACDC_FAKE_SCRIPT, which
the server re-reads when it changes), and the repository's files as the server first saw
them. What tests share is the server's history database; a test that needs it empty asks
for `@pytest.mark.own_server`, a server of its own, stopped after it.

The browser lives in the session's event loop, so every test module here says
`pytestmark = pytest.mark.asyncio(loop_scope="session")`. Waits are on what the page shows,
never fixed; `SLOW` bounds those that cover a whole model turn on a loaded machine.
Without Chromium the tests skip loudly; under CI=true that is a failure. Screenshots go to
test-artifacts/ for a person to look at.

Every server makes its own access token (acdc.access) and prints its address with it, as
`make run` does; the tests read that address from its log (`Server.entry`). Each page starts
with the cookie that address gives, and tests/e2e/test_access_link.py opens the address itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.cookiejar
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import pytest_asyncio
from playwright.async_api import Browser, async_playwright, expect

from acdc.access import cookie_name

CHROMIUM = Path(os.environ.get("ACDC_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
HERE = Path(__file__).resolve().parent
SLOW = 60_000  # ms: a whole model turn, or more, on a loaded two-core machine
expect.set_options(timeout=20_000)  # anything else the page should show soon
START_TIMEOUT = 120  # s for `acdc serve` to answer


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "own_server: the e2e test gets an acdc server (and history) of its own"
    )


@pytest.hookimpl(tryfirst=True)  # marked before tests/passes.py groups them for xdist
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE not in Path(str(item.path)).parents:
            continue
        item.add_marker("browser")
        marker = item.get_closest_marker("asyncio")
        if marker is None or marker.kwargs.get("loop_scope") != "session":
            raise pytest.UsageError(
                f"{item.nodeid}: browser tests share the session's event loop; add "
                'pytestmark = pytest.mark.asyncio(loop_scope="session") to the module'
            )


# -- the acdc server ----------------------------------------------------------------------


@dataclass
class Running:
    """One `acdc serve` process, its folder, and its repository as first served."""

    url: str
    folder: Path
    repo: Path
    script: Path
    log: Path
    process: subprocess.Popen
    pristine: dict[str, bytes] = field(default_factory=dict)
    entry: str = ""  # the address it printed, with its token

    @property
    def token(self) -> str:
        return _token_of(self.entry)

    def reset(self) -> None:
        """An empty script, and the repository's files back as they were."""
        self.script.write_text("[]")
        now = _files(self.repo)
        for name in now.keys() - self.pristine.keys():
            (self.repo / name).unlink()
        for name, data in self.pristine.items():
            if now.get(name) != data:
                (self.repo / name).parent.mkdir(parents=True, exist_ok=True)
                (self.repo / name).write_bytes(data)
        for path in sorted(self.repo.rglob("*"), key=lambda p: len(p.parts), reverse=True):
            owned = _tool_owned(path.relative_to(self.repo))
            if path.is_dir() and not owned and not any(path.iterdir()):
                path.rmdir()  # a folder a test made

    def new_session(self) -> str:
        """The address of a new chat session, made as the page's New session button does."""
        opener = urllib.request.build_opener(
            urllib.request.ProxyHandler({}),
            urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()),
        )
        opener.addheaders = [("Authorization", f"Bearer {self.token}")]
        with opener.open(self.url + "history/", timeout=60) as response:
            token = re.search(r'"X-CSRFToken": "([^"]+)"', response.read().decode())
        assert token, "no CSRF token on the history page"
        request = urllib.request.Request(
            self.url + "s/new/", data=b"", headers={"X-CSRFToken": token.group(1)}
        )
        with opener.open(request, timeout=60) as response:  # follows the redirect
            address = response.geturl()
        assert re.search(r"/s/[^/]+/$", address), address
        return address

    def stop(self) -> None:
        self.process.terminate()

    def wait_stopped(self) -> None:
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@dataclass
class Server:
    """What a test sees of its server: where it is, and the chat session made for it."""

    url: str
    session_url: str
    repo: Path
    data_dir: Path
    script: Path
    log: Path
    entry: str  # the address `acdc serve` printed: `http://127.0.0.1:PORT/?token=…`
    token: str

    def script_replies(self, *steps: str | dict) -> None:
        self.script.write_text(json.dumps(list(steps)))


def _files(root: Path) -> dict[str, bytes]:
    """The repository's own files (not git's, not acdc's)."""
    return {
        path.relative_to(root).as_posix(): path.read_bytes()
        for path in root.rglob("*")
        if path.is_file() and not _tool_owned(path.relative_to(root))
    }


def _tool_owned(relative: Path) -> bool:
    return bool({".git", ".acdc"} & set(relative.parts))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _make_repo(root: Path) -> Path:
    repo = root / "sample-repo"
    (repo / "src").mkdir(parents=True)
    (repo / "README.md").write_text("# Sample repository\n")
    (repo / "src" / "app.py").write_text("def greet(name):\n    return f'hello {name}'\n")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return repo


def _wait_until_serving(url: str, process: subprocess.Popen, log: Path) -> str:
    """The address the server printed, once it answers with the token in it."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    printed = re.compile(rf"acdc: serving .* at ({re.escape(url)}\?token=\S+)")
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"acdc serve exited early:\n{log.read_text()}")
        entry = printed.search(log.read_text())
        if entry:
            opener.addheaders = [("Authorization", f"Bearer {_token_of(entry.group(1))}")]
            try:  # the history page: it makes no session, unlike the chat's front page
                with opener.open(url + "history/", timeout=5):
                    return entry.group(1)
            except OSError:
                pass
        time.sleep(0.2)
    raise RuntimeError(f"acdc serve did not answer in time:\n{log.read_text()}")


def _token_of(entry: str) -> str:
    return urllib.parse.parse_qs(urllib.parse.urlsplit(entry).query)["token"][0]


def start_server(folder: Path, env: dict[str, str]) -> Running:
    """`{tmp}` in a value of `env` stands for the server's own folder."""
    extra = {name: value.replace("{tmp}", str(folder)) for name, value in env.items()}
    repo = _make_repo(folder)
    port = _free_port()
    script = folder / "fake-script.json"
    script.write_text("[]")
    log = folder / "server.log"
    environ = {
        **os.environ,
        "ACDC_REPO": str(repo),
        "ACDC_DATA_DIR": str(folder / "data"),
        "ACDC_MODEL": "acdc/fake",
        "ACDC_FAKE_SCRIPT": str(script),
        "NO_PROXY": "127.0.0.1,localhost",
        **extra,
    }
    environ.pop("ACDC_TOKEN", None)
    with log.open("w") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "acdc", "serve", str(repo), "--port", str(port)],
            env=environ,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}/"
    running = Running(url, folder, repo, script, log, process, _files(repo))
    try:
        running.entry = _wait_until_serving(url, process, log)
    except BaseException:
        running.stop()
        running.wait_stopped()
        raise
    return running


class Servers:
    """The shared servers of the run, one per distinct server environment."""

    def __init__(self, factory: pytest.TempPathFactory) -> None:
        self.factory = factory
        self.shared: dict[tuple, Running] = {}

    def start(self, env: dict[str, str]) -> Running:
        return start_server(self.factory.mktemp("acdc-server"), env)

    def get(self, env: dict[str, str]) -> Running:
        key = tuple(sorted(env.items()))
        running = self.shared.get(key)
        if running is None or running.process.poll() is not None:
            running = self.shared[key] = self.start(env)
        return running

    def stop_all(self) -> None:
        for running in self.shared.values():
            running.stop()
        for running in self.shared.values():
            running.wait_stopped()


@pytest.fixture(scope="session")
def servers(tmp_path_factory: pytest.TempPathFactory):
    pool = Servers(tmp_path_factory)
    yield pool
    pool.stop_all()


@pytest.fixture
def server(servers: Servers, request: pytest.FixtureRequest):
    """`@pytest.mark.server_env(NAME="value", ...)` adds settings for the server process
    (`{tmp}` in a value stands for the server's folder); `@pytest.mark.own_server` gives
    the test a server nobody else uses."""
    marker = request.node.get_closest_marker("server_env")
    env = dict(marker.kwargs) if marker else {}
    own = request.node.get_closest_marker("own_server") is not None
    running = servers.start(env) if own else servers.get(env)
    running.reset()
    try:
        yield Server(
            url=running.url,
            session_url=running.new_session(),
            repo=running.repo,
            data_dir=running.folder / "data",
            script=running.script,
            log=running.log,
            entry=running.entry,
            token=running.token,
        )
    finally:
        if own:
            running.stop()
            running.wait_stopped()
        else:
            running.reset()


# -- the browser --------------------------------------------------------------------------


@pytest.fixture(scope="session")
def chromium() -> Path:
    if CHROMIUM.exists():
        return CHROMIUM
    message = f"NO CHROMIUM at {CHROMIUM}: browser tests cannot run (apt-get install chromium)"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message)
    pytest.skip(message)


class Chromium:
    """One browser for the run, launched again should it have gone away."""

    def __init__(self, playwright, executable: Path) -> None:
        self.playwright = playwright
        self.executable = executable
        self.browser: Browser | None = None

    async def get(self) -> Browser:
        if self.browser is None or not self.browser.is_connected():
            self.browser = await self.playwright.chromium.launch(
                executable_path=str(self.executable), args=CHROMIUM_FLAGS, headless=True
            )
        return self.browser


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def browser(chromium: Path):
    async with async_playwright() as playwright:
        holder = Chromium(playwright, chromium)
        try:
            yield holder
        finally:
            if holder.browser is not None:
                await holder.browser.close()


@pytest_asyncio.fixture(loop_scope="session")
async def page(browser: Chromium, server: Server):
    """A page in a browser context of its own (no storage from other tests), holding the
    cookie the server's printed address gives (acdc.access). It asks for `server` so that
    it closes, and its websocket with it, before the server's repository is put back."""
    async with signed_in_page(browser, server) as signed_in:
        yield signed_in


@contextlib.asynccontextmanager
async def signed_in_page(browser: Chromium, server):
    """A page in a browser context of its own holding `server`'s access cookie (`server`:
    anything with the `url` and `token` of a running acdc, such as `start_server`'s)."""
    context = await (await browser.get()).new_context(viewport={"width": 1280, "height": 860})
    await context.add_cookies([access_cookie(server)])
    try:
        yield await context.new_page()
    finally:
        await context.close()


def access_cookie(server: Server) -> dict:
    """The cookie a visit of `server.entry` sets, as Playwright takes it."""
    name = cookie_name(urllib.parse.urlsplit(server.url).netloc)
    return {"name": name, "value": server.token, "url": server.url, "httpOnly": True}


class FirstGetHeld:
    """The page's first plain GET of a route waits at the network until `release()`;
    everything else passes."""

    def __init__(self) -> None:
        self.arrived, self.released, self.taken = asyncio.Event(), asyncio.Event(), False

    async def handle(self, route) -> None:
        request = route.request
        if self.taken or request.method != "GET" or "?" in request.url:
            await route.continue_()
            return
        self.taken = True
        self.arrived.set()
        await self.released.wait()
        await route.continue_()

    def release(self) -> None:
        self.released.set()


async def screenshot(page, name: str, copy_to: Path | None = None) -> Path:
    """The whole page in test-artifacts/, and a copy in `copy_to` for a person looking."""
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    await page.screenshot(path=str(path), full_page=True)
    if copy_to is not None:
        copy_to.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, copy_to / path.name)
    return path


async def send_message(page, text: str, answered: str | None = None) -> None:
    """Type `text` into the message box and press Send once it can be pressed; with
    `answered`, wait until the conversation shows that text."""
    send = page.get_by_role("button", name="Send", exact=True)
    await expect(send).to_be_enabled(timeout=SLOW)
    await page.get_by_role("textbox", name="Message").fill(text)
    await send.click()
    if answered is not None:
        log = page.get_by_role("log", name="Conversation")
        await expect(log).to_contain_text(answered, timeout=SLOW)
