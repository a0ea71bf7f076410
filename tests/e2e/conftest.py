"""Browser tests: a real acdc server (Daphne, in a subprocess) and Debian's Chromium.

pytest-django's live_server cannot serve websockets, so each test starts `acdc serve` on a
free port with its own repository and data folder. The fake model is scripted through the
JSON file named by ACDC_FAKE_SCRIPT. Without Chromium the tests skip loudly; under
CI=true that is a failure. Screenshots go to test-artifacts/ for a person to look at.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.async_api import async_playwright

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


@dataclass
class Server:
    url: str
    repo: Path
    data_dir: Path
    script: Path
    process: subprocess.Popen
    log: Path

    def script_replies(self, *steps: str | dict) -> None:
        self.script.write_text(json.dumps(list(steps)))


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


def _wait_until_serving(url: str, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"acdc serve exited early:\n{log.read_text()}")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"acdc serve did not answer in time:\n{log.read_text()}")


@pytest.fixture
def server(tmp_path: Path, request: pytest.FixtureRequest):
    """`@pytest.mark.server_env(NAME="value", ...)` adds settings for the server process;
    `{tmp}` in a value stands for the test's temporary folder."""
    marker = request.node.get_closest_marker("server_env")
    extra = {
        k: v.replace("{tmp}", str(tmp_path)) for k, v in (marker.kwargs if marker else {}).items()
    }
    repo = _make_repo(tmp_path)
    port = _free_port()
    script = tmp_path / "fake-script.json"
    script.write_text("[]")
    log = tmp_path / "server.log"
    env = {
        **os.environ,
        "ACDC_REPO": str(repo),
        "ACDC_DATA_DIR": str(tmp_path / "data"),
        "ACDC_MODEL": "acdc/fake",
        "ACDC_FAKE_SCRIPT": str(script),
        "NO_PROXY": "127.0.0.1,localhost",
        **extra,
    }
    env.pop("ACDC_TOKEN", None)
    with log.open("w") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "acdc", "serve", str(repo), "--port", str(port)],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}/"
    try:
        _wait_until_serving(url, process, log)
        yield Server(url, repo, tmp_path / "data", script, process, log)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


@pytest.fixture
def chromium() -> Path:
    if CHROMIUM.exists():
        return CHROMIUM
    message = f"NO CHROMIUM at {CHROMIUM}: browser tests cannot run (apt-get install chromium)"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture
async def page(chromium: Path):
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=str(chromium), args=CHROMIUM_FLAGS, headless=True
        )
        context = await browser.new_context(viewport={"width": 1280, "height": 860})
        page = await context.new_page()
        try:
            yield page
        finally:
            await browser.close()


async def screenshot(page, name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    await page.screenshot(path=str(path), full_page=True)
    return path
