"""A finished reply's edits: its tool calls' rows bound to it, its blocks made rows.

`after_reply` runs once the assistant message is stored (the after-turn routine, for the
browser and the terminal alike). The turn's edit tool calls made their rows before the
answer existed: they are bound to it now. The SEARCH/REPLACE blocks of its text become
pending rows the same way a tool call's edits do (applied at once with auto-apply), and
one short line per edit, with the failure report when some failed, is recorded as an
active `edit_blocks` tool output: the next request carries it once, as it carries any tool
output, and the new content comes through the changed-file diff. Running it twice for one
message changes nothing. Non-goals: streaming cards (the page), the matcher.
"""

from __future__ import annotations

import contextlib

from chat.repo import credentials, indexing
from chat.repo.edits.applying import SetOutcome, propose
from contextcore.edits import parse_edit_blocks
from history import edits as rows_
from history.models import Message, Session

BLOCKS_TOOL = "edit_blocks"


def may_hold_blocks(text: str) -> bool:
    """Whether `text` could hold an edit block: every SEARCH line starts with five `<`."""
    return "<<<<<" in text


def after_reply(
    session: Session, message: Message, *, repo: indexing.Repository
) -> SetOutcome | None:
    """Bind the turn's edits to `message` and store its blocks; None when it has none."""
    if message.turn_id:
        rows_.edits_bind_message(session=session, turn_id=message.turn_id, message=message)
    outcome = None
    if not message.edits.exclude(block_index=None).exists():
        outcome = _blocks(session, message, repo)
    if message.edits.exists():
        rows_.message_record_edits(message)
    return outcome


def _blocks(session: Session, message: Message, repo) -> SetOutcome | None:
    blocks = parse_edit_blocks(message.content or "")
    if not blocks:
        return None
    ops = [block.op for block in blocks if block.op is not None]
    broken = [
        f"The edit block at line {b.line} of the reply was not read: {b.error}."
        for b in blocks
        if b.op is None
    ]
    outcome = SetOutcome()
    if ops:
        outcome = propose(
            session, ops, repo=repo, turn_id=message.turn_id, first_block=0, message=message
        )
    if broken:
        outcome.report = "\n".join([*broken, *([outcome.report] if outcome.report else [])])
    failed = bool(outcome.report)
    with contextlib.suppress(indexing.IndexingError):  # told once already (broken blocks only)
        indexing.record_toolcall(
            session=session,
            call_id=f"edits-{message.id}",
            tool=BLOCKS_TOOL,
            args={"message": message.id},
            status="fail" if failed else "ok",
            output=credentials.tool_output(outcome.text()),  # sent as any tool output is
            args_display=f"{BLOCKS_TOOL}({len(blocks)} blocks)",
        )
    return outcome


def after_turn(session: Session, repo: indexing.Repository) -> SetOutcome | None:
    """`after_reply` for the session's newest answer (the after-turn routine's call)."""
    message = (
        session.messages.filter(role=Message.Role.ASSISTANT, status=Message.Status.COMPLETE)
        .order_by("-seq")
        .first()
    )
    return None if message is None else after_reply(session, message, repo=repo)
