"""A finished reply's edits: its rows bound to it, its blocks made rows, applied whole.

`after_reply` runs once the assistant message is stored (the after-turn routine, for the
browser and the terminal alike). The turn's edit tool calls made their rows before the
answer existed: they are bound to it now. The SEARCH/REPLACE blocks of its text not yet
stored become rows the same way a tool call's edits do, and one short line per edit, with
the failure report when some failed, is recorded as an active `edit_blocks` tool output:
the next request carries it once, and the new content comes through the changed-file diff.
Then, with Auto-apply (or `--apply`), the reply's edits apply as one set
(`applying.accept_reply`). Running it twice for one message changes nothing.
`retry_request` is the turn's one automatic retry: the blocks streamed so far are stored,
and those that fail go back to the model with the report (they are `told`, so the model's
new edit of the same file stands in for them). Non-goals: cards (the page), the matcher.
"""

from __future__ import annotations

import contextlib
from dataclasses import replace

from chat.repo import credentials, edittools, indexing
from chat.repo.edits.applying import accept_reply, auto_applies
from chat.repo.edits.checks import SetOutcome
from chat.repo.edits.proposing import propose
from contextcore.edits import EditBlock, parse_edit_blocks
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
    session: Session, message: Message, *, repo: indexing.Repository, apply_now: bool = False
) -> SetOutcome | None:
    """Bind the turn's edits to `message`, store its blocks, apply them with Auto-apply
    (or `apply_now`: `acdc chat --apply`); None when it has none."""
    if message.turn_id:
        rows_.edits_bind_message(session=session, turn_id=message.turn_id, message=message)
    outcome = _blocks(session, message, repo, apply_now)
    if not message.edits.exists():
        return outcome
    if auto_applies(session, apply_now):
        applied = accept_reply(session, message, repo=repo, auto=True)
        outcome = outcome or SetOutcome()
        outcome.diffs, outcome.notice = applied.diffs, applied.notice
    rows_.message_record_edits(message)
    return outcome


def _blocks(session: Session, message: Message, repo, apply_now: bool) -> SetOutcome | None:
    """The reply's blocks not stored yet (the retry stored those before it) become rows;
    the `edit_blocks` record says what became of all of them, once."""
    blocks = parse_edit_blocks(message.content or "")
    if not blocks:
        return None
    stored = message.edits.exclude(block_index=None).values_list("block_index", flat=True)
    done = max(stored, default=-1)
    outcome = _store(session, blocks, done + 1, repo, message.turn_id, apply_now, message)
    failed = message.edits.exclude(block_index=None).filter(status__in=("failed", "conflict"))
    report = "\n".join(row.result for row in failed)
    lines = [row.result for row in message.edits.exclude(block_index=None).order_by("id")]
    with contextlib.suppress(indexing.IndexingError):  # recorded already: a second run
        indexing.record_toolcall(
            session=session,
            call_id=f"edits-{message.id}",
            tool=BLOCKS_TOOL,
            args={"message": message.id},
            status="fail" if report or outcome.report else "ok",
            output=credentials.tool_output("\n".join([*lines, *_broken(blocks)])),
            args_display=f"{BLOCKS_TOOL}({len(blocks)} blocks)",
        )
    return outcome


def _store(
    session, blocks: list[EditBlock], start: int, repo, turn_id: str, apply_now: bool, message=None
):
    """The blocks from place `start` on become rows; the unreadable ones are reported."""
    new = [(n, block) for n, block in enumerate(blocks) if n >= start]
    ops = [block.op for _, block in new if block.op is not None]
    places = [n for n, block in new if block.op is not None]
    outcome = SetOutcome()
    if ops:
        outcome = propose(
            session,
            ops,
            repo=repo,
            turn_id=turn_id,
            blocks=places,
            message=message,
            auto=auto_applies(session, apply_now),
        )
    broken = _broken([block for _, block in new])
    if broken:
        outcome.report = "\n".join([*broken, *([outcome.report] if outcome.report else [])])
    return outcome


def _broken(blocks: list[EditBlock]) -> list[str]:
    return [
        f"The edit block at line {b.line} of the reply was not read: {b.error}."
        for b in blocks
        if b.op is None
    ]


def after_turn(
    session: Session, repo: indexing.Repository, apply_now: bool = False
) -> SetOutcome | None:
    """`after_reply` for the session's newest answer (the after-turn routine's call)."""
    message = (
        session.messages.filter(role=Message.Role.ASSISTANT, status=Message.Status.COMPLETE)
        .order_by("-seq")
        .first()
    )
    return (
        None if message is None else after_reply(session, message, repo=repo, apply_now=apply_now)
    )


def retry_request(
    session: Session,
    request: LLMRequest,
    reply: str,
    turn_id: str,
    repo: indexing.Repository,
    apply_now: bool = False,
) -> LLMRequest | None:
    """The request that asks again for the blocks of `reply` that would not apply (not
    found, ambiguous, refused, unreadable): the conversation, the reply, and a short user
    note with the failure report. None when edits are off or every block applies. The
    blocks are stored now, as rows of the turn; the failing ones are told."""
    if not edittools.enabled() or not may_hold_blocks(reply):
        return None
    blocks = parse_edit_blocks(reply)
    if not blocks:
        return None
    outcome = _store(session, blocks, 0, repo, turn_id, apply_now)
    if not outcome.report:
        return None
    rows_.edits_told(turn_id)
    note = RETRY_NOTE.format(report=outcome.report)
    asked = [{"role": "assistant", "content": reply}, {"role": "user", "content": note}]
    return replace(request, messages=[*request.messages, *asked])
