"""Frames the browser sends over the websocket, parsed and validated.

htmx's ws extension sends a form's fields as a JSON object (plus a HEADERS object, and any
other field, which is ignored). `_WireFrame` declares what a frame may hold; every way a
frame can be wrong -- too large, not JSON, not an object, an unknown, empty or non-text
action, a field of the wrong type, text that is not valid UTF-8 or holds a NUL -- becomes a
`FrameError` whose short message for the user is derived from the validation error; only a
frame without an `action` is a "send". "/compact [focus]" typed in the message box is
recognised here, and only here.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from types import MappingProxyType
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
)
from pydantic_core import PydanticCustomError

from chat.repo.listings import TreeAsk
from chat.repo.mentions import MAX_MENTIONS, Mention
from history.images import SHA256

MAX_FOCUS_CHARS = 500
COMPACT_COMMAND = re.compile(r"^/compact(?:\s+(?P<focus>.*))?$", re.S)
MAX_PATHS = 10_000
MAX_IMAGES = 5
MAX_LINE = 10_000_000  # a mention's line: no source file is longer


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
    confirm: tuple[str, ...] = ()  # `select`: secret-shaped paths the person confirmed
    outline: tuple[str, ...] = ()  # `select`: paths sent as their outline, not whole
    selection: str = ""  # `select`: the tab's name for this choice, echoed in the answer
    choose: str = ""  # `select`: one box's choice (file, folder, outline, outline-folder)
    on: bool = False  # `select` with `choose`: the box ticked (True) or cleared
    replaces: str = ""  # `send`: the id of the last user message this one is an edit of
    retry: str = ""  # `send`: the turn whose failed reply is written again (Retry)
    mentions: tuple[Mention, ...] = ()  # `send`: the @-mentions chosen in the composer
    branch: str = ""  # `send`: a reply (Regenerate) or your message (Edit) in a new version
    rows: TreeAsk | None = None  # `rows`: the Files panel's rows the tab asks for again


def _encodable(text: str) -> str:
    """Lone surrogates ("\\ud800" in the JSON) cannot be stored, rendered or sent back;
    PostgreSQL text cannot hold a NUL."""
    if "\0" in text:
        raise PydanticCustomError("nul", "contains a NUL character")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise PydanticCustomError("utf8", "not valid UTF-8 text") from None
    return text


_Text = Annotated[str, AfterValidator(_encodable)]


def _listed(value: Any) -> Any:
    """htmx sends one field of a name as a string, several as a list, none as nothing."""
    return [value] if isinstance(value, str) else value


def _unique(values: list[str]) -> list[str]:
    return list(dict.fromkeys(values))


class _WireMention(BaseModel):
    """One composer chip: its hidden input holds this as JSON."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    path: Annotated[_Text, StringConstraints(min_length=1, max_length=4096)]
    symbol: Annotated[_Text, StringConstraints(max_length=400)] = ""
    line: Annotated[int, Field(ge=0, le=MAX_LINE)] = 0
    body: bool = False  # the symbol's body, not its file's outline


def _mention(value: Any) -> Mention:
    if not isinstance(value, str):
        raise PydanticCustomError("mention", "not text")
    try:
        wire = _WireMention.model_validate_json(value)
    except ValidationError:
        raise PydanticCustomError("mention", "not a mention") from None
    if wire.body and not wire.symbol:
        raise PydanticCustomError("mention", "a body without a symbol")
    return Mention(wire.path, wire.symbol, wire.line, wire.body)


_Sha256 = Annotated[str, StringConstraints(pattern=SHA256.pattern)]
_Paths = Annotated[
    list[_Text], BeforeValidator(_listed), Field(max_length=MAX_PATHS), AfterValidator(_unique)
]


class _WireFrame(BaseModel):
    """One frame as htmx sends it (field names are the forms' input names)."""

    model_config = ConfigDict(strict=True, extra="ignore", frozen=True, protected_namespaces=())

    action: Literal["send", "stop", "select", "compact", "rows"] = "send"
    message: _Text = ""
    model: _Text = ""
    focus: _Text = ""  # `compact`: what the summary should keep
    path: _Paths = []
    confirm: _Paths = []  # `select`: the secret-shaped paths the person confirmed
    outline: _Paths = []  # `select`: the paths sent as their outline
    selection: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.:-]{0,64}$")] = ""
    choose: Literal["", "file", "folder", "outline", "outline-folder"] = ""
    on: Literal["", "0", "1"] = ""
    replaces: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_-]{0,40}$")] = ""
    retry: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_-]{0,40}$")] = ""
    branch: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_-]{0,40}$")] = ""
    image: Annotated[
        list[_Sha256],
        BeforeValidator(_listed),
        AfterValidator(_unique),
        Field(max_length=MAX_IMAGES),
    ] = []
    mention: Annotated[
        list[Annotated[Any, AfterValidator(_mention)]],
        BeforeValidator(_listed),
        Field(max_length=MAX_MENTIONS),
    ] = []
    view: Literal["tree", "list"] = "tree"  # `rows`: the tree, or the filter's list
    found: _Paths = []  # `rows` of the list: the files the filter found, best first
    matched: Annotated[str, StringConstraints(pattern=r"^[0-9]{0,9}$")] = ""  # of how many
    coming: Literal["", "1"] = ""  # `rows` of the list: the page has not its paths yet
    open: _Paths = []  # `rows` of the tree: the folders the tab has open
    shown: Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{0,16}$")] = ""  # its sets


_NOUNS = MappingProxyType(
    {
        "message": "The message",
        "model": "The model name",
        "focus": "The compaction focus",
        "path": "File paths",
        "confirm": "Confirmed file paths",
        "outline": "Outline file paths",
        "selection": "The selection's name",
        "choose": "The choice",
        "on": "The box's state",
        "replaces": "The edited message's id",
        "retry": "The retried reply's turn",
        "branch": "The message written again",
        "view": "The rows asked for",
        "found": "The files found",
        "matched": "The count of files found",
        "open": "The open folders",
        "shown": "The sets shown",
    }
)


def parse_frame(text: str | None, data: bytes | None, *, max_bytes: int) -> ClientFrame:
    if data is not None:
        raise FrameError("Binary frames are not supported.")
    if text is None:
        raise FrameError("Empty frame.")
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > max_bytes:  # the page checks first (chat.js): this is what it did not see
        raise FrameError(
            f"The message is too large ({size // 1000:,} kB; at most {max_bytes // 1000:,} "
            "kB): nothing in it was used."
        )
    try:
        payload = json.loads(text)
    except (ValueError, RecursionError):  # ValueError: also an integer of 4,300+ digits
        raise FrameError("The frame is not valid JSON.") from None
    if not isinstance(payload, dict):
        raise FrameError("The frame must be a JSON object.")
    try:
        wire = _WireFrame.model_validate(payload)
    except ValidationError as exc:
        raise FrameError(_refusal(exc)) from None
    action, message, focus = wire.action, wire.message, wire.focus
    command = COMPACT_COMMAND.match(message.strip()) if action == "send" else None
    if command:  # "/compact [focus]" typed in the message box
        action, focus, message = "compact", command.group("focus") or "", ""
    return ClientFrame(
        action=action,
        message=message,
        model=wire.model.strip(),
        paths=tuple(wire.path),
        images=tuple(wire.image),
        confirm=tuple(wire.confirm),
        outline=tuple(wire.outline),
        selection=wire.selection,
        choose=wire.choose if action == "select" else "",
        on=wire.on == "1",
        replaces=wire.replaces if action == "send" else "",
        retry=wire.retry if action == "send" else "",
        mentions=tuple(dict.fromkeys(wire.mention)) if action == "send" else (),
        branch=wire.branch if action == "send" else "",
        focus=" ".join(focus.split())[:MAX_FOCUS_CHARS],
        rows=_tree_ask(wire) if action == "rows" else None,
    )


def _tree_ask(wire: _WireFrame) -> TreeAsk:
    listed = wire.view == "list"
    return TreeAsk(
        found=tuple(wire.found) if listed else None,
        matched=int(wire.matched or 0),
        coming=wire.coming == "1",
        opened=tuple(wire.open),
        shown=wire.shown,
    )


def _refusal(exc: ValidationError) -> str:
    """The user's sentence for the first thing wrong with a frame."""
    error = exc.errors(include_url=False)[0]
    field, kind = error["loc"][0], error["type"]
    if field == "action":
        action = error["input"]
        if isinstance(action, str):
            return f"Unknown action {action[:40]!r}." if action.strip() else "The action is empty."
        return "The action must be text."
    if kind == "too_long":
        most = error["ctx"]["max_length"]
        if field == "image":
            return f"At most {most} images per message."
        if field == "mention":
            return f"At most {most} mentions per message."
        return f"Too many files selected at once (at most {most:,})."
    if field == "image":
        return "Attached images must be referenced by their sha256."
    if field == "mention":
        return "A mention must name a file (and may name a symbol, its line, and ask for its body)."
    if kind == "utf8":
        return f"{_NOUNS[field]} must be valid UTF-8 text."
    if kind == "nul":
        return f"{_NOUNS[field]} must not contain a NUL character."
    return f"{_NOUNS[field]} must be text."
