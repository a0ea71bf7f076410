"""The run file: where `acdc serve` for a repository listens, so `acdc chat` can use it.

`acdc serve` writes `<data folder>/server.json` (port, pid, repository, a random token) when
it starts listening on a loopback or wildcard address, readable by its owner only, and
removes it on exit. The token is the run's own secret: the endpoint for `acdc chat`
(`acdc.terminal.endpoint`) takes nothing else, and only from loopback. A file left by a
killed server names a dead pid or a closed port: the client falls back (`acdc.terminal.client`).
Imports the standard library only: the client reads this before anything heavy loads.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import secrets
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

NAME = "server.json"


@dataclass(frozen=True)
class RunFile:
    host: str  # the loopback address to connect to
    port: int
    pid: int
    repository: str
    token: str


def data_dir_for(repository: Path) -> Path:
    """The data folder as the settings choose it (ACDC_DATA_DIR, else `<repo>/.acdc`),
    without loading them."""
    given = os.environ.get("ACDC_DATA_DIR", "").strip()
    return Path(given).expanduser() if given else repository / ".acdc"


def connect_host(bind: str) -> str | None:
    """The loopback address that reaches a server bound to `bind`, or None (a server bound
    to one outside address only cannot be reached over loopback)."""
    address = ipaddress.ip_address(bind)
    if address.is_loopback:
        return bind
    if address.is_unspecified:
        return "::1" if address.version == 6 else "127.0.0.1"
    return None


def write(data_dir: Path, *, host: str, port: int, repository: str) -> RunFile:
    """Write the run file with a new token (0600 from the start, then moved into place)."""
    run = RunFile(host, port, os.getpid(), repository, secrets.token_urlsafe(32))
    fd, draft = tempfile.mkstemp(dir=data_dir, prefix=".server.")
    try:
        with os.fdopen(fd, "w") as file:
            json.dump(asdict(run), file)
        os.replace(draft, data_dir / NAME)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(draft)
        raise
    return run


def remove(data_dir: Path, run: RunFile) -> None:
    """Remove the run file if it is still this run's (a newer server may have replaced it)."""
    if read(data_dir) == run:
        with contextlib.suppress(OSError):
            (data_dir / NAME).unlink()


def read(data_dir: Path) -> RunFile | None:
    """The run file, or None when there is none or it cannot be read as one."""
    try:
        raw = json.loads((data_dir / NAME).read_text())
        run = RunFile(
            host=str(raw["host"]),
            port=int(raw["port"]),
            pid=int(raw["pid"]),
            repository=str(raw["repository"]),
            token=str(raw["token"]),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return run


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process took the pid: not our server
        return False
    return True
