"""A finished reply's edits: its tool calls' rows bound to it, its blocks made rows.

`after_reply` runs once the assistant message is stored (the after-turn routine, for the
browser and the terminal alike). The turn's edit tool calls made their rows before the
answer existed: they are bound to it now. The SEARCH/REPLACE blocks of its text become
pending rows the same way a tool call's edits do (applied at once with auto-apply), and
one short line per edit, with the failure report when some failed, is recorded as an
active `edit_blocks` tool output: the next request carries it once, as it carries any tool
output, and the new content comes through the changed-file diff. Running it twice for one
message changes nothing. `retry_request` is the turn's one automatic retry: blocks that
would fail go back to the model, with the report, before the answer is stored.
Non-goals: streaming cards (the page), the matcher.
"""

from __future__ import annotations

import contextlib
from dataclasses import replace

from chat.repo import credentials, edittools, indexing, sessionsets
from chat.repo.edits.applying import SetOutcome, propose, trial
from contextcore.edits import failure_report, parse_edit_blocks
from contextcore.llm import LLMRequest
from history import edits as rows_
from history.models import Message, Session

BLOCKS_TOOL = "edit_blocks"
RETRY_NOTE = (
    "Some edits did not apply:\n{report}\nSend corrected SEARCH/REPLACE blocks for those only."
)


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


def retry_request(session: Session, request: LLMRequest, reply: str) -> LLMRequest | None:
    """The request that asks again for the blocks of `reply` that would not apply (not
    found, ambiguous, refused, unreadable): the conversation, the reply, and a short user
    note with the failure report. None when edits are off or every block would apply.
    Nothing is stored: the blocks become rows once, when the answer is (`after_reply`)."""
    if not edittools.enabled() or not may_hold_blocks(reply):
        return None
    blocks = parse_edit_blocks(reply)
    ops = [block.op for block in blocks if block.op is not None]
    broken = [block for block in blocks if block.op is None]
    results = trial(session, ops, repo=sessionsets.repository()) if ops else []
    report = failure_report(results, broken)
    if not report:
        return None
    note = RETRY_NOTE.format(report=report)
    asked = [{"role": "assistant", "content": reply}, {"role": "user", "content": note}]
    return replace(request, messages=[*request.messages, *asked])
