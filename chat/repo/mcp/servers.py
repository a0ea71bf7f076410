"""The person's MCP servers: add, remove, list, stored in acdc's data folder.

A declaration is one entry of `mcp-servers.json` in acdc's data folder (ACDC_DATA_DIR),
never a file of the work tree, so a model that can write files cannot declare a server for
itself. A stdio server is an argv (run as it is, in the commands' sandbox), with a timeout
per call and whether it may reach the network; a Streamable HTTP server is a URL and the
headers the person gave. Every bad declaration is a `DeclarationError` (the commands' own)
whose text says what to do. The file is written whole through a temporary file and a rename.
Non-goals: connecting (`client`), the suggestions a repository's `.mcp.json` makes.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from urllib.parse import urlsplit

from chat.repo.commands.declaring import DeclarationError, check_argv, shown

FILE_NAME = "mcp-servers.json"
# A server's name is part of every tool name the model sees (`mcp__<server>__<tool>`).
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,29}\Z")
DEFAULT_TIMEOUT_SECONDS = 60
MAX_TIMEOUT_SECONDS = 600
HEADER = re.compile(r"([A-Za-z0-9!#$%&'*+.^_`|~-]+):\s*(.*)\Z")


@dataclass(frozen=True)
class Server:
    name: str
    argv: tuple[str, ...] = ()  # a stdio server's program and arguments
    url: str = ""  # a Streamable HTTP server's endpoint
    headers: tuple[tuple[str, str], ...] = ()
    timeout_seconds: int = DEFAULT_TIMEOUT_SECONDS
    network: bool = False

    @property
    def transport(self) -> str:
        return "http" if self.url else "stdio"

    @property
    def shown(self) -> str:
        return self.url if self.url else shown(self.argv)

    @classmethod
    def of(cls, item: dict) -> Server:
        return cls(
            name=str(item["name"]),
            argv=tuple(str(a) for a in item.get("argv", ())),
            url=str(item.get("url", "")),
            headers=tuple((str(k), str(v)) for k, v in item.get("headers", ())),
            timeout_seconds=int(item.get("timeout_seconds", DEFAULT_TIMEOUT_SECONDS)),
            network=bool(item.get("network", False)),
        )


def check_name(name: str) -> str:
    if not NAME.match(name or ""):
        raise DeclarationError(
            f"{name[:60]!r} is not a server name: use 1 to 30 letters, digits, '_' or '-', "
            "starting with a letter or digit (for example: git, time)"
        )
    if "__" in name:
        raise DeclarationError(f"{name!r}: a server name may not hold '__' (it separates names)")
    return name


def check_url(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise DeclarationError(f"{url[:80]!r} is not an http(s) URL of an MCP endpoint")
    return url


def check_header(text: str) -> tuple[str, str]:
    found = HEADER.match(text)
    if not found:
        raise DeclarationError(f"{text[:60]!r} is not a header: write it as 'Name: value'")
    return found.group(1), found.group(2)


def check_timeout(seconds: int | None) -> int:
    if seconds is None:
        return DEFAULT_TIMEOUT_SECONDS
    if not 1 <= seconds <= MAX_TIMEOUT_SECONDS:
        raise DeclarationError(f"the timeout must be 1 to {MAX_TIMEOUT_SECONDS} seconds")
    return seconds


def declared(data_dir: Path) -> tuple[Server, ...]:
    """The declared servers, sorted by name; a damaged file reads as none, with no
    traceback (`add` then refuses to overwrite it)."""
    try:
        items = _read(data_dir)
    except DeclarationError:
        return ()
    return tuple(sorted((Server.of(i) for i in items), key=lambda s: s.name))


def add(
    data_dir: Path,
    name: str,
    *,
    argv: Sequence[str] = (),
    url: str = "",
    headers: Sequence[str] = (),
    timeout_seconds: int | None = None,
    network: bool = False,
) -> Server:
    check_name(name)
    if url and argv:
        raise DeclarationError("give either --url URL or -- ARGV…, not both")
    if not url and not argv:
        raise DeclarationError(
            "say how to reach it: acdc mcp add NAME -- ARGV… (stdio) or --url URL (HTTP)"
        )
    if url and network:
        raise DeclarationError("--network is for stdio servers (an HTTP server is reached)")
    server = Server(
        name=name,
        argv=check_argv(argv) if argv else (),
        url=check_url(url) if url else "",
        headers=tuple(check_header(h) for h in headers),
        timeout_seconds=check_timeout(timeout_seconds),
        network=network,
    )
    items = _read(data_dir)
    if any(i.get("name") == name for i in items):
        raise DeclarationError(f"a server named {name!r} is declared already: remove it first")
    _write(data_dir, [*items, asdict(server)])
    return server


def remove(data_dir: Path, name: str) -> None:
    items = _read(data_dir)
    kept = [i for i in items if i.get("name") != name]
    if len(kept) == len(items):
        names = ", ".join(sorted(str(i.get("name")) for i in items)) or "none"
        raise DeclarationError(f"no server named {name[:60]!r} is declared (declared: {names})")
    _write(data_dir, kept)


def _read(data_dir: Path) -> list[dict]:
    path = data_dir / FILE_NAME
    try:
        items = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as exc:
        raise DeclarationError(f"{path} cannot be read ({exc}); fix or delete it") from None
    if not isinstance(items, list) or not all(
        isinstance(i, dict) and isinstance(i.get("name"), str) for i in items
    ):
        raise DeclarationError(f"{path} is not a list of servers; fix or delete it")
    return items


def _write(data_dir: Path, items: list[dict]) -> None:
    data_dir.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=data_dir, prefix=".mcp-", suffix=".json")
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        json.dump(items, out, indent=2)
    os.replace(temporary, data_dir / FILE_NAME)
