"""Edits: the model's proposed changes to files, as plain text work.

One `EditOp` (replace old text with new, create, delete) from three sources: `edit_file`
and `write_file` tool arguments (`op_from_tool`) and SEARCH/REPLACE blocks in reply text
(`parse_edit_blocks`). `apply_edits` places each op with the matcher (exact
and unique first, then tolerant passes that must also be unique; never a similarity guess,
never a match that splits a word), merges a stale file's ops three ways, works on the text
the model was shown (`hide`: a redacted value answers `REDACTED_REFUSAL`, whatever the
guess) and returns the new texts and one `EditResult` per op; `report` and `diff` say what
happened.
Non-goals: the disk, the repository boundary, pending state (chat/repo and history).
"""

from __future__ import annotations

from contextcore.edits.apply import EditBatch, apply_edits
from contextcore.edits.blocks import EditBlock, parse_edit_blocks
from contextcore.edits.diff import Hunk, apply_hunks, diff_hunks, unified_diff
from contextcore.edits.matcher import PASSES
from contextcore.edits.ops import (
    EditArgsError,
    EditOp,
    EditResult,
    Outcome,
    op_from_tool,
    text_sha256,
)
from contextcore.edits.report import failure_report, result_line
from contextcore.edits.shown import REDACTED_REFUSAL, Hide

__all__ = (
    "PASSES",
    "REDACTED_REFUSAL",
    "EditArgsError",
    "EditBatch",
    "EditBlock",
    "EditOp",
    "EditResult",
    "Hide",
    "Hunk",
    "Outcome",
    "apply_edits",
    "apply_hunks",
    "diff_hunks",
    "failure_report",
    "op_from_tool",
    "parse_edit_blocks",
    "result_line",
    "text_sha256",
    "unified_diff",
)
