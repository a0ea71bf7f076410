"""Sessions and their messages: the persistent record of every conversation.

The store is append-mostly: a reply's row is made empty when it starts streaming, what
streams is appended beside it (`history.stream.parts`, so a crash keeps what the user
saw), and the row gets its text once, with a status that says how the turn ended. What
the model sees each turn is decided elsewhere; these rows are the source it is rebuilt from.

The models live in this package's modules by what they record; all are importable from here.
"""

from __future__ import annotations

from history.models.context_history import Checkpoint, Compaction, ManagedView, SessionLayout
from history.models.declared import CommandProposal, CommandRun, DeclaredCommand, ToolApproval
from history.models.edits import EditJournal, JournalEntry, PendingEdit
from history.models.objects import (
    ContentObject,
    Image,
    MessageImage,
    ObjectVersion,
    SessionObject,
)
from history.models.sessions import Message, Session, SessionQuerySet, TokenUsage

# Registered with the app here; the model lives with the code that streams into it.
from history.stream.parts import StreamPart  # noqa: E402, I001

__all__ = (
    "Checkpoint",
    "CommandProposal",
    "CommandRun",
    "Compaction",
    "ContentObject",
    "DeclaredCommand",
    "EditJournal",
    "Image",
    "JournalEntry",
    "ManagedView",
    "Message",
    "MessageImage",
    "ObjectVersion",
    "PendingEdit",
    "Session",
    "SessionLayout",
    "SessionObject",
    "SessionQuerySet",
    "StreamPart",
    "TokenUsage",
    "ToolApproval",
)
