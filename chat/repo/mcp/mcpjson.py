"""A repository's `.mcp.json` (the format other clients read) as suggestions, never servers.

The file is written by whoever can write the work tree, a model included, so nothing in it
starts: each entry becomes a line the person may copy into `acdc mcp add` (the argv or URL
exactly as the file says, with the variables it sets named, not their values). A line
is meant to be pasted into a shell, so every part of it is quoted as a shell would and its
hidden characters shown: an entry whose name `acdc mcp add` would refuse, or whose URL is
not http(s), is left out, and only variable names of the usual shape are named. A damaged
file, or an entry of the wrong shape, is skipped.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from chat.repo.commands.declaring import shown
from chat.repo.mcp.servers import NAME
from contextcore.controls import visible

FILE_NAME = ".mcp.json"
MAX_BYTES = 256 * 1024
VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}\Z")


@dataclass(frozen=True)
class Suggestion:
    name: str
    command: str  # what to write after `acdc mcp add NAME`
    why: str
    argv: tuple[str, ...] = ()  # a stdio server's, exactly as the file says
    url: str = ""  # a Streamable HTTP server's


def suggest(root: Path, declared_names: frozenset[str] = frozenset()) -> tuple[Suggestion, ...]:
    path = root / FILE_NAME
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_BYTES:
            return ()
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ()
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        return ()
    found = []
    for name, entry in sorted(servers.items()):
        if not isinstance(entry, dict) or name in declared_names or not NAME.match(name):
            continue
        line = _command(entry)
        if line:
            why = f"in {FILE_NAME}{_env_note(entry)}"
            found.append(Suggestion(str(name), line, why, *_reach(entry)))
    return tuple(found)


def _command(entry: dict) -> str:
    url = entry.get("url")
    if isinstance(url, str) and url:
        return f"--url {visible(shlex.quote(url))}" if _web(url) else ""
    program = entry.get("command")
    args = entry.get("args", [])
    if not isinstance(program, str) or not isinstance(args, list):
        return ""
    return "-- " + shown([program, *(str(a) for a in args)])


def _web(url: str) -> bool:
    return url.startswith(("http://", "https://")) and url.isprintable() and " " not in url


def _reach(entry: dict) -> tuple[tuple[str, ...], str]:
    url = entry.get("url")
    if isinstance(url, str) and url:
        return (), url
    return (str(entry["command"]), *(str(a) for a in entry.get("args", []))), ""


def _env_note(entry: dict) -> str:
    env = entry.get("env")
    if not isinstance(env, dict) or not env:
        return ""
    names = sorted(str(k) for k in env if VARIABLE.match(str(k)))
    others = len(env) - len(names)
    said = ", ".join(names) + (f" and {others} more" if others else "")
    return f"; it sets {said}"
