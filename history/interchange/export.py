"""One session as a download: Markdown for people, JSON Lines in AC-DC's history.jsonl schema.

Pure functions of a session and its messages (no queries here), shared by the history
browser and `acdc export`. JSON Lines follow seed 000's HistoryMessage: id, session_id,
timestamp (ISO 8601 UTC), role, content, files, files_modified, edit_results, image_refs,
and acdc's `mentions` (the message's @-mentions) when it has any.
image_refs name files `<sha256>.<ext>` as an `images/` folder beside the file would hold them.
A reply's edits (`edit_lines`: acdc's rows, or AC-DC's own entries) are listed under it in
Markdown, in a section of their own. A message with versions (Regenerate, Edit) is labelled
"version n of m" (`version_labels`), with whether it is in view; JSON Lines add that as
`version_of` (the first version's id), `version` and `in_view`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
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


def session_to_markdown(session: Session, messages: Iterable[Message]) -> str:
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
        lines += ["", f"## {heading}", "", message.content]
        if message.mentions:
            lines += ["", "Mentioned: " + ", ".join(_mention_md(m) for m in message.mentions)]
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
