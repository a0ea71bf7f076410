"""One session as a download: Markdown for people, JSON Lines in AC-DC's history.jsonl schema.

Pure functions of a session and its messages (no queries here), shared by the history
browser and `acdc export` (`history.interchange.bundle` reads what they need). JSON Lines
follow seed 000's HistoryMessage: id, session_id, timestamp (ISO 8601 UTC), role, content,
files, files_modified, edit_results, image_refs, and acdc's `mentions` (the message's
@-mentions) when it has any. image_refs name files `<sha256>.<ext>` as an `images/` folder
beside the file would hold them. In Markdown each image follows its message, named by that
same file name and inline as a `data:` URI (`ExportImage`): one self-contained file,
downloaded or written to stdout. Markdown's own headings are the title (`#`) and one `##`
per message; a message's own headings are nested two levels below (`##` in a reply
becomes `####`, setext ones too; fenced code untouched), so a model's `## Plan` never
reads as a message of its own. A reply's edits (`edit_lines`: acdc's rows, or AC-DC's own
entries) are listed under it in Markdown, in a section of their own. A message with
versions (Regenerate, Edit) is labelled "version n of m" (`version_labels`), with whether
it is in view; JSON Lines add that as `version_of` (the first version's id), `version`
and `in_view`.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from types import MappingProxyType

from history.models import Message, Session

IMAGE_EXTENSIONS = MappingProxyType(
    {
        "image/png": "png",
        "image/jpeg": "jpg",
        "image/gif": "gif",
        "image/webp": "webp",
    }
)
ROLE_HEADINGS = MappingProxyType({"user": "You", "assistant": "acdc", "system": "System"})
NESTED = 2  # levels a message's own headings move down, below the message's `##`
_ATX = re.compile(r"^( {0,3})(#{1,6})(?=[ \t]|$)")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_NOT_PARAGRAPH = re.compile(r"^( {4}|\t| {0,3}([-*+>]|\d+[.)])(\s|$)| {0,3}#)")
_PATH_KEYS = ("path", "file_path", "file", "filename")
_RESULT_KEYS = ("result", "message", "error", "status")


def edit_lines(message: Message) -> list[tuple[str, str]]:
    """(path, result line) for each edit an assistant message records: acdc's entries
    (path, result) or AC-DC's (a file key, then message or status); a file in
    `files_modified` that no entry names is "modified". Tool-call and compaction details
    name no file and are not edits."""
    if message.role != Message.Role.ASSISTANT:
        return []
    found: list[tuple[str, str]] = []
    for entry in message.edit_results or []:
        if not isinstance(entry, Mapping):
            continue
        path = next((str(entry[k]) for k in _PATH_KEYS if entry.get(k)), "")
        if path:
            result = next((str(entry[k]) for k in _RESULT_KEYS if entry.get(k)), "")
            found.append((path, result.splitlines()[0] if result else ""))
    named = {path for path, _ in found}
    found += [(p, "modified") for p in message.files_modified or [] if p not in named]
    return found


def version_labels(messages: Iterable[Message]) -> dict[str, tuple[int, int]]:
    """(n, m) for each user message that has other versions: its place among them."""
    groups: dict[str, list[str]] = {}
    for message in sorted(messages, key=lambda m: m.seq):
        if message.role == Message.Role.USER and not message.system_event:
            groups.setdefault(message.alt_of or message.id, []).append(message.id)
    return {
        mid: (at + 1, len(ids))
        for ids in groups.values()
        if len(ids) > 1
        for at, mid in enumerate(ids)
    }


def iso_utc(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def image_ref(sha256: str, mime: str) -> str:
    return f"{sha256}.{IMAGE_EXTENSIONS.get(mime, 'bin')}"


@dataclass(frozen=True)
class ExportImage:
    """One image of a message as the Markdown export shows it."""

    sha256: str
    mime: str
    width: int
    height: int
    data: bytes

    @property
    def ref(self) -> str:
        return image_ref(self.sha256, self.mime)

    def markdown(self, number: int) -> str:
        encoded = base64.b64encode(self.data).decode("ascii")
        alt = f"Image {number}: {self.ref} ({self.width}×{self.height})"
        return f"![{alt}](data:{self.mime};base64,{encoded})"


def nested_headings(text: str, levels: int = NESTED) -> str:
    """`text` with its Markdown headings `levels` deeper (at most `######`), setext ones
    written as ATX; fenced code is left as it is."""
    out: list[str] = []
    fence = ""
    for line in text.split("\n"):
        opened = _FENCE.match(line)
        marker = opened.group(1) if opened else ""
        if fence or marker:
            closes = marker[:1] == fence[:1] and len(marker) >= len(fence)
            fence = "" if fence and closes else fence or marker
            out.append(line)
        elif (under := _SETEXT.match(line)) and out and _paragraph(out[-1]):
            level = 1 if under.group(1)[0] == "=" else 2
            out[-1] = "#" * min(6, level + levels) + " " + out[-1].strip()
        else:
            out.append(_ATX.sub(lambda m: m.group(1) + _deeper(m.group(2), levels), line))
    return "\n".join(out)


def _deeper(hashes: str, levels: int) -> str:
    return "#" * min(6, len(hashes) + levels)


def _paragraph(line: str) -> bool:
    """Whether `line` may be the text of a setext heading (a plain paragraph line)."""
    return bool(line.strip()) and not _NOT_PARAGRAPH.match(line)


def session_to_markdown(
    session: Session,
    messages: Iterable[Message],
    images: Mapping[str, Sequence[ExportImage]] | None = None,
) -> str:
    """The session for reading; `images` maps a message id to its images, in order."""
    lines = [
        f"# {session.display_title}",
        "",
        f"- Session: `{session.id}`",
        f"- Repository: `{session.repository}`",
        f"- Started: {iso_utc(session.created_at)}",
    ]
    if session.model:
        lines.append(f"- Model: {session.model}")
    messages = list(messages)
    versions = version_labels(messages)
    for message in messages:
        heading = f"{ROLE_HEADINGS.get(message.role, message.role)} · {iso_utc(message.timestamp)}"
        if message.id in versions:
            number, count = versions[message.id]
            heading += f" · version {number} of {count}" + (
                "" if not message.rolled_back else ", not in view"
            )
        lines += ["", f"## {heading}", "", nested_headings(message.content)]
        if message.mentions:
            lines += ["", "Mentioned: " + ", ".join(_mention_md(m) for m in message.mentions)]
        for number, image in enumerate((images or {}).get(message.id, ()), 1):
            lines += ["", image.markdown(number)]
        if edits := edit_lines(message):
            lines += ["", "### Edits", ""]
            lines += [f"- `{p}`: {r}" if r else f"- `{p}`" for p, r in edits]
    return "\n".join(lines).rstrip() + "\n"


def _mention_md(mention: Mapping) -> str:
    """`@path`, or `@symbol` (`path:line`, outline or body), as code spans whatever the
    names hold."""
    path = str(mention.get("path", ""))
    if not mention.get("symbol"):
        return _code(f"@{path}")
    where = _code(f"{path}:{mention.get('line', 0)}")
    sent = "body" if mention.get("kind") == "body" else "outline"
    return f"{_code('@' + str(mention['symbol']))} ({where}, {sent})"


def _code(text: str) -> str:
    """A Markdown code span that holds `text` as it is: a longer fence than any run of
    backticks in it (a line break becomes a space, as a span would show it anyway)."""
    text = " ".join(text.splitlines())
    fence = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def session_to_jsonl(
    session: Session,
    messages: Iterable[Message],
    image_refs: Mapping[str, list[str]] | None = None,
) -> str:
    """One JSON object per line; image_refs maps message id to its image file names."""
    refs = image_refs or {}
    messages = list(messages)
    versions = version_labels(messages)
    return "".join(
        json.dumps(_history_record(session, m, refs.get(m.id, []), versions), ensure_ascii=False)
        + "\n"
        for m in messages
    )


def _history_record(
    session: Session, message: Message, refs: list[str], versions: Mapping[str, tuple[int, int]]
) -> dict:
    record = {
        "id": message.id,
        "session_id": session.id,
        "timestamp": iso_utc(message.timestamp),
        "role": message.role,
        "content": message.content,
        "files": list(message.files or []),
        "files_modified": list(message.files_modified or []),
        "edit_results": list(message.edit_results or []),
        "image_refs": list(refs),
    }
    if message.mentions:
        record["mentions"] = list(message.mentions)
    if message.id in versions:
        record["version_of"] = message.alt_of or message.id
        record["version"] = list(versions[message.id])
        record["in_view"] = not message.rolled_back
    return record
