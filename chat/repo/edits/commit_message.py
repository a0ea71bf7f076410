"""The commit message acdc proposes for the files it changed: the person keeps or rewrites it.

From what changed, never from the person's chat line (which holds `[sr]`, @-mentions and
whatever else was typed): the summary line of the reply whose edits applied last (its first
sentence that says something, outside code and edit blocks, markdown taken off), else a
line naming the files ("Update src/app.py, add src/new.py"; a name with a line break
quoted). A reply that called tools is read in the parts its calls cut it into: what it
said after its last call (the summary of the work), then what it said before its first;
the talk between calls, and any sentence about a tool's result, is the model narrating
its tools, never a subject. One line of at most
`MAX_SUBJECT` characters, no final full stop, as git's own convention asks. Plain text work
on the rows it is given; it touches neither git nor the disk.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from contextcore.paths import shown
from history.models import Message, PendingEdit, Session

MAX_SUBJECT = 72
SENTENCES_READ = 8  # a summary comes early in a reply, or not at all
_FENCE = re.compile(r"^\s*(```|~~~)")
_MARKER = re.compile(r"^\s*(<{7}|={7}|>{7})")
_MARKUP = re.compile(r"^\s*(#{1,6}\s+|[-*+]\s+|\d+[.)]\s+|>\s*)+")
_EMPHASIS = re.compile(r"\*\*|__|(?<!\w)[*_](?=\S)|(?<=\S)[*_](?!\w)")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
# Openings that are talk, not a description of the change ("Sure!", "Here is the fix:").
_FILLER = frozenset(
    {"sure", "ok", "okay", "certainly", "done", "great", "alright", "here", "here's"}
)
_FIRST_PERSON = re.compile(
    r"^(i'll|i will|i've|i have|let me|let's|we'll|we will|i'm going to|i am going to)\s+",
    re.IGNORECASE,
)
# A sentence about a tool's result ("A tool result of 1 lines; it starts with …").
_TOOL_TALK = re.compile(r"\b(tool|command)\s+(call|result|output)s?\b", re.IGNORECASE)
_VERBS = (("changed", "Update"), ("added", "Add"), ("removed", "Remove"))


def propose(session: Session, changes: dict[str, str]) -> str:
    """The message for committing `changes` (path -> added | changed | removed)."""
    if not changes:
        return ""
    reply = _reply(session, changes)
    if reply is None:
        return files_line(changes)
    return reply_summary(reply.content, _cuts(reply)) or files_line(changes)


def _reply(session: Session, changes: dict[str, str]) -> Message | None:
    """The reply whose applied edits changed one of these files last."""
    rows = PendingEdit.objects.filter(
        session=session, status=PendingEdit.Status.APPLIED, path__in=list(changes)
    )
    row = rows.order_by("-id").select_related("message").first()
    if row is None:
        return None
    if row.message is not None:
        return row.message
    replies = Message.objects.filter(
        session=session, role=Message.Role.ASSISTANT, turn_id=row.turn_id
    )
    return replies.order_by("seq").first()


def _cuts(reply: Message) -> list[int]:
    """Where in the reply's text its tool calls were made (each tool row's `at`)."""
    tools = Message.objects.filter(
        session_id=reply.session_id, role=Message.Role.TOOL, turn_id=reply.turn_id
    )
    return [
        result["at"]
        for results in tools.values_list("edit_results", flat=True)
        for result in results or []
        if isinstance(result, dict) and isinstance(result.get("at"), int)
    ]


def reply_summary(text: str, cuts: Sequence[int] = ()) -> str:
    """The subject from a reply its tool calls cut at `cuts` (offsets in `text`): the
    part after the last call, then the part before the first; "" when neither says one."""
    at = sorted({min(max(cut, 0), len(text)) for cut in cuts})
    if not at:
        return summary_line(text)
    for part in (text[at[-1] :], text[: at[0]]):
        line = summary_line(part)
        if line:
            return line
    return ""


def summary_line(text: str) -> str:
    """The reply's first sentence that describes something, as a commit subject; ""."""
    for sentence in _sentences(text):
        subject = _FIRST_PERSON.sub("", sentence).rstrip(" .")
        words = subject.split()
        if len(words) < 3 or subject.endswith(":") or _TOOL_TALK.search(subject):
            continue
        if words[0].strip(",.!:;").casefold() in _FILLER:
            continue
        return _short(subject[:1].upper() + subject[1:])
    return ""


def _sentences(text: str):
    """The sentences of the reply's prose, in order: code and edit blocks left out."""
    inside, read = False, 0
    for line in text.splitlines():
        if _FENCE.match(line):
            inside = not inside
            continue
        if inside or _MARKER.match(line) or not line.strip():
            continue
        prose = _EMPHASIS.sub("", _MARKUP.sub("", line)).strip()
        for sentence in _SENTENCE_END.split(prose):
            if sentence.strip():
                yield sentence.strip()
                read += 1
                if read >= SENTENCES_READ:
                    return


def files_line(changes: dict[str, str]) -> str:
    """ "Update a.py, add b.py": the paths, else their names, else how many."""
    for name in (lambda p: p, lambda p: p.rsplit("/", 1)[-1], None):
        parts = []
        for kind, verb in _VERBS:
            paths = [path for path, k in changes.items() if k == kind]
            if not paths:
                continue
            what = ", ".join(_named(name(p)) for p in paths) if name else _count(len(paths))
            parts.append(f"{verb if not parts else verb.lower()} {what}")
        line = ", ".join(parts)
        if len(line) <= MAX_SUBJECT:
            return line
    return _short(line)


def _named(path: str) -> str:
    """A path as the subject names it: as it is, unless a line break or the like would
    split the subject or a space at its edge would vanish in it; then quoted (`shown`)."""
    return path if path.isprintable() and path == path.strip() else shown(path)


def _count(n: int) -> str:
    return f"{n} file" if n == 1 else f"{n} files"


def _short(line: str) -> str:
    return line if len(line) <= MAX_SUBJECT else line[: MAX_SUBJECT - 1].rstrip() + "…"
