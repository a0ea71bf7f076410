"""Which declared MCP servers a session uses: all of them, less those the person switched
off for it in the page (Session tools → MCP servers).

The switches are kept beside the session's tool snapshot in acdc's data folder
(`mcp-sessions/<session>.off.json`, a list of server names), never in the work tree. A name
that is no longer declared is harmless (it names nothing) and is dropped at the next write.
Non-goals: the declarations themselves (`servers`), what the model is offered (`model_calls`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from chat.repo.mcp.servers import Server, declared

FOLDER = "mcp-sessions"


def _path(data_dir: Path, session_id: str) -> Path:
    return data_dir / FOLDER / f"{session_id}.off.json"


def switched_off(data_dir: Path, session_id: str) -> frozenset[str]:
    try:
        names = json.loads(_path(data_dir, session_id).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return frozenset()
    return frozenset(str(n) for n in names) if isinstance(names, list) else frozenset()


def enabled(data_dir: Path, session_id: str) -> tuple[Server, ...]:
    """The declared servers this session uses, sorted by name."""
    off = switched_off(data_dir, session_id)
    return tuple(s for s in declared(data_dir) if s.name not in off)


def switch(data_dir: Path, session_id: str, name: str, *, on: bool) -> None:
    names = {s.name for s in declared(data_dir)}
    off = set(switched_off(data_dir, session_id) & names) - {name}
    if not on and name in names:
        off.add(name)
    path = _path(data_dir, session_id)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    partial.write_text(json.dumps(sorted(off)), encoding="utf-8")
    partial.replace(path)
