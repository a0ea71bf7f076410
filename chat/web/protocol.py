"""Frames the browser sends over the websocket, parsed and validated.

htmx's ws extension sends a form's fields as a JSON object (plus a HEADERS object). Every
way a frame can be wrong -- too large, not JSON, not an object, an unknown action, a
message of the wrong type -- becomes a `FrameError` with a message for the user.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

ACTIONS = ("send", "stop", "select", "compact")
MAX_FOCUS_CHARS = 500
COMPACT_COMMAND = re.compile(r"^/compact(?:\s+(?P<focus>.*))?$", re.S)
MAX_PATHS = 10_000
MAX_IMAGES = 5
SHA256 = re.compile(r"^[0-9a-f]{64}$")


class FrameError(ValueError):
    pass


@dataclass(frozen=True)
class ClientFrame:
    action: str
    message: str = ""
    model: str = ""
    paths: tuple[str, ...] = ()
    images: tuple[str, ...] = ()  # sha256 of stored images, in the composer's order
    focus: str = ""  # `compact`: what the summary should keep


def parse_frame(text: str | None, data: bytes | None, *, max_bytes: int) -> ClientFrame:
    if data is not None:
        raise FrameError("Binary frames are not supported.")
    if text is None:
        raise FrameError("Empty frame.")
    if len(text.encode("utf-8", "surrogatepass")) > max_bytes:
        raise FrameError(f"The frame is too large (limit {max_bytes // 1000:,} kB).")
    try:
        payload = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        raise FrameError("The frame is not valid JSON.") from None
    if not isinstance(payload, dict):
        raise FrameError("The frame must be a JSON object.")
    action = payload.get("action") or "send"
    if action not in ACTIONS:
        raise FrameError(f"Unknown action {str(action)[:40]!r}.")
    message = payload.get("message", "")
    model = payload.get("model", "")
    if not isinstance(message, str) or not isinstance(model, str):
        raise FrameError("The message must be text.")
    focus = payload.get("focus", "")
    if not isinstance(focus, str):
        raise FrameError("The compaction focus must be text.")
    command = COMPACT_COMMAND.match(message.strip()) if action == "send" else None
    if command:  # "/compact [focus]" typed in the message box
        action, focus, message = "compact", command.group("focus") or "", ""
    return ClientFrame(
        action=action,
        message=message,
        model=model.strip(),
        paths=_paths(payload),
        images=_images(payload),
        focus=" ".join(focus.split())[:MAX_FOCUS_CHARS],
    )


def _paths(payload: dict) -> tuple[str, ...]:
    """htmx sends one checked box as a string, several as a list, none as nothing."""
    raw = payload.get("path", [])
    paths = [raw] if isinstance(raw, str) else raw
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        raise FrameError("File paths must be text.")
    if len(paths) > MAX_PATHS:
        raise FrameError(f"Too many files selected at once (at most {MAX_PATHS:,}).")
    return tuple(dict.fromkeys(paths))


def _images(payload: dict) -> tuple[str, ...]:
    """The composer's pending images: one hidden input is a string, several a list."""
    raw = payload.get("image", [])
    shas = [raw] if isinstance(raw, str) else raw
    if not isinstance(shas, list) or not all(isinstance(s, str) and SHA256.match(s) for s in shas):
        raise FrameError("Attached images must be referenced by their sha256.")
    shas = list(dict.fromkeys(shas))
    if len(shas) > MAX_IMAGES:
        raise FrameError(f"At most {MAX_IMAGES} images per message.")
    return tuple(shas)
