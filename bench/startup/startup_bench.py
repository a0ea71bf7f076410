"""The start-up benchmark: a real `acdc serve` on Django's source, started ten times.

Django's own source (any folder with `--source`) is copied into a throwaway git repository
and served by `acdc serve` (model acdc/dry-run, nothing sent): first with an empty data
folder (cold: every file parsed), then restarted with nothing changed (the symbols read
from `symbols.sqlite3`, the first start's session restored), then with only that file in
a new data folder (as the first start but for the cache: no session to restore), then
with that file removed (the best simple alternative: no symbol cache, as before); each
restart three times, the median shown.
Each start is timed from the process's launch to its "serving" line and to its "map
ready" log line (which also says the CPU time of the map's thread), and the server's RSS
is read from /proc once both are seen (no page open, no turn: what the server holds
before the first turn), with its peak (VmHWM), and again once the chat page, the
fragments it loads and the Files panel's tree were fetched (a person about to type).
Beside it, what importing litellm costs a bare process, which every start paid before
litellm left the start-up path. With `--files N`, a synthetic repository of N files instead
(bench.startup.huge: cold and warm, a first message sent at once). Figures, never
assertions.
"""

from __future__ import annotations

import argparse
import os
import queue
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import django as django_package

from bench.live_server import free_port, interruptible
from bench.repo.map_bench import _copy_source
from bench.report import QUICK_NOTE, machine, machine_line, markdown_table
from bench.startup import huge as startup_huge

GOAL_READY_S = 0.5  # map ready after "serving", restart with nothing changed
GOAL_RSS_MB = 200
WAIT_S = 600.0
REPEATS = 3  # restarts of each kind; the table shows the median one
LITELLM_IMPORT = (
    "import resource, time\n"
    "from chat.llm.environment import configure_offline_environment\n"
    "configure_offline_environment()\n"
    "before = resource.getrusage(resource.RUSAGE_SELF)\n"
    "import litellm\n"
    "after = resource.getrusage(resource.RUSAGE_SELF)\n"
    "print(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime,"
    " (after.ru_maxrss - before.ru_maxrss) / 1024)\n"
)


def _status_mb(pid: int) -> dict[str, float]:
    found = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            found[name] = int(value.split()[0]) / 1024
    return found


def _cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start(repo: Path, data: Path) -> dict[str, Any]:
    """One `acdc serve`: seconds to "serving" and to "map ready", RSS then, stopped after."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ACDC_")}
    environ.pop("DATABASE_URL", None)
    environ.update(
        ACDC_REPO=str(repo),
        ACDC_DATA_DIR=str(data),
        ACDC_MODEL="acdc/dry-run",
        PYTHONUNBUFFERED="1",
    )
    port = free_port()
    command = [sys.executable, "-m", "acdc", "serve", "--port", str(port)]
    launched = time.monotonic()
    server = subprocess.Popen(
        command,
        env=environ,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=interruptible,
    )
    lines: queue.Queue[tuple[float, str]] = queue.Queue()

    def read() -> None:
        for line in server.stdout:
            lines.put((time.monotonic(), line.rstrip("\n")))
        lines.put((time.monotonic(), ""))

    threading.Thread(target=read, daemon=True).start()
    result: dict[str, Any] = {"errors": 0}
    address = ""  # as printed, with the access token
    try:
        while not {"ready_s", "serving_s"} <= result.keys():  # either may come first
            at, line = lines.get(timeout=WAIT_S)
            result["errors"] += line.startswith("Traceback")
            if "acdc: serving" in line:
                result["serving_s"] = at - launched
                address = line.rsplit(" at ", 1)[1]
            elif "map ready:" in line:
                result["ready_s"] = at - launched
                result["ready_line"] = line.split("map ready:", 1)[1].strip()
            elif not line and server.poll() is not None:
                raise RuntimeError("acdc serve stopped before its map was ready")
        result |= {k: round(v, 1) for k, v in _status_mb(server.pid).items()}
        result["cpu_s"] = _cpu_s(server.pid)
        _open_page(address)
        result["page_rss_mb"] = round(_status_mb(server.pid)["VmRSS"], 1)
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    # Below zero: the map was ready before the server said "serving".
    result["after_serving_s"] = result["ready_s"] - result["serving_s"]
    return result


def _open_page(url: str) -> None:
    """What a browser asks for when it opens the address `acdc serve` printed (its token
    becomes a cookie): the page, the fragments it loads at once, and the Files panel's tree."""
    browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
    deadline = time.monotonic() + WAIT_S
    while True:  # the map can be ready before Daphne listens
        try:
            with browser.open(url, timeout=WAIT_S) as response:
                page, session_url = response.read().decode(), response.url
            break
        except urllib.error.URLError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)  # polling for the port to answer
    paths = re.findall(r'hx-get="([^"]+)" hx-trigger="load"', page)
    paths.append(session_url.rstrip("/") + "/files.json")
    for path in paths:
        with browser.open(urllib.parse.urljoin(url, path), timeout=WAIT_S) as reply:
            reply.read()


def litellm_import() -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-c", LITELLM_IMPORT], capture_output=True, text=True, check=True
    )
    cpu, mb = done.stdout.split()
    return {"cpu_s": float(cpu), "rss_mb": float(mb)}


def measure(repo: Path, data: Path, repeats: int) -> dict[str, Any]:
    cold = start(repo, data)
    restarts = [start(repo, data) for _ in range(repeats)]
    cache = (data / "symbols.sqlite3").stat().st_size
    fresh = [_start_without_session(repo, data, n) for n in range(repeats)]
    uncached = []
    for _ in range(repeats):
        (data / "symbols.sqlite3").unlink()
        uncached.append(start(repo, data))
    return {
        "cold": cold,
        "restart": _median(restarts),
        "restart_no_cache": _median(uncached),
        "restart_no_session": _median(fresh),
        "restarts": restarts,
        "restarts_no_cache": uncached,
        "repeats": repeats,
        "litellm_import": litellm_import(),
        "cache_mb": round(cache / 2**20, 1),
    }


def _start_without_session(repo: Path, data: Path, n: int) -> dict[str, Any]:
    """A restart like the first start but for the symbols on disk: a new data folder (an
    empty database, so no session to restore) holding only `symbols.sqlite3`."""
    folder = data.with_name(f"{data.name}-no-session-{n}")
    folder.mkdir()
    shutil.copy2(data / "symbols.sqlite3", folder / "symbols.sqlite3")
    return start(repo, folder)


def _median(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The run whose "serving → map ready" is the median (its other figures with it)."""
    ordered = sorted(runs, key=lambda run: run["after_serving_s"])
    return ordered[len(ordered) // 2]


def startup_markdown(data: dict[str, Any], info: dict[str, Any], quick: bool) -> str:
    rows = []
    for key, label in (
        ("cold", "first start (empty data folder)"),
        ("restart", f"restart, nothing changed (symbols from disk), median of {data['repeats']}"),
        (
            "restart_no_session",
            f"restart, symbols from disk, no session to restore, median of {data['repeats']}",
        ),
        (
            "restart_no_cache",
            f"restart, nothing changed, no symbol cache, median of {data['repeats']}",
        ),
    ):
        run = data[key]
        rows.append(
            [
                label,
                f"{run['serving_s']:.2f}",
                f"{run['after_serving_s']:.2f}",
                f"{run['cpu_s']:.1f}",
                f"{run['VmRSS']:.0f}",
                f"{run['VmHWM']:.0f}",
                f"{run['page_rss_mb']:.0f}",
                run["ready_line"] + (f" ({run['errors']} errors logged)" if run["errors"] else ""),
            ]
        )
    head = [
        "start",
        "launch → serving (s)",
        "serving → map ready (s)",
        "server CPU at ready (s)",
        "RSS at ready (MB)",
        "peak RSS (MB)",
        "RSS with the page open (MB)",
        "map",
    ]
    restart, lite = data["restart"], data["litellm_import"]
    lines = [
        "## Start-up (acdc serve on Django's source)",
        "",
        markdown_table(head, rows, "lrrrrrrl"),
        "",
        f"Symbol cache on disk: {data['cache_mb']} MB. Importing litellm in a bare process "
        f"(what every start paid before it left the start-up path): {lite['cpu_s']:.1f} s CPU, "
        f"{lite['rss_mb']:.0f} MB.",
        "",
        f"Goals: map ready ≤ {GOAL_READY_S} s after serving on a restart: "
        f"{'met' if restart['after_serving_s'] <= GOAL_READY_S else 'missed'} "
        f"({restart['after_serving_s']:.2f} s); RSS before the first turn ≤ {GOAL_RSS_MB} MB: "
        f"{'met' if restart['VmRSS'] <= GOAL_RSS_MB else 'missed'} ({restart['VmRSS']:.0f} MB).",
        "",
        _lighter_line(data),
        "",
        machine_line(info) + ".",
    ]
    if quick:
        lines += ["", QUICK_NOTE]
    return "\n".join(lines)


def _lighter_line(data: dict[str, Any]) -> str:
    """Restart against first start: with the first start's session restored, without a
    session (as the first start, but for the symbols on disk), and with the page open
    (each then holds a session and its token counter)."""
    cold, bare, restart = data["cold"], data["restart_no_session"], data["restart"]
    met = (
        restart["VmRSS"] <= cold["VmRSS"]
        and bare["VmRSS"] <= cold["VmRSS"]
        and restart["page_rss_mb"] <= cold["page_rss_mb"]
    )
    return (
        f"Restart RSS ≤ first start's: {'met' if met else 'missed'}: at ready with the "
        f"session restored {restart['VmRSS']:.0f}, without one {bare['VmRSS']:.0f}, against "
        f"{cold['VmRSS']:.0f} MB; with the page open {restart['page_rss_mb']:.0f} against "
        f"{cold['page_rss_mb']:.0f} MB."
    )


def run(args: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    info = machine()
    files = getattr(args, "files", None)
    if files:  # a synthetic repository of that many files instead of Django's source
        result = startup_huge.measure(1000 if args.quick else files)
        return startup_huge.huge_markdown(result, info), {**result, "machine": info}
    source = Path(getattr(args, "source", None) or Path(django_package.__file__).parent)
    with tempfile.TemporaryDirectory(prefix="acdc-startup-bench-") as folder:
        repo, data = Path(folder) / "repo", Path(folder) / "data"
        repo.mkdir()
        _copy_source(source, repo, args.quick)
        result = measure(repo, data, 1 if args.quick else REPEATS)
    result["bench_max_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return startup_markdown(result, info, args.quick), {**result, "machine": info}
