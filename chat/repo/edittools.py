"""The model's edit tools, `edit_file` and `write_file`, offered only with ACDC_EDITS on.

Their arguments are pydantic models like the context tools' (`chat.repo.tools.calls`), so
the schema the model is given and the check of what it sends cannot disagree. A call becomes an
`EditOp` (`contextcore.edits.op_from_tool`) and goes to `chat.repo.edits.proposing.propose`:
stored as a pending row (nothing is written while the reply streams: the reply's edits
apply together when it ends, by the person or Auto-apply), and the result says so in one
short line per edit, or why it failed with the file's closest lines. The call is recorded
as a toolcall object like any other. `instruction` adds to the system prompt how this
model should propose edits: with these tools when it calls tools, as SEARCH/REPLACE blocks
otherwise. A bad call fails the call, never the turn.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from types import MappingProxyType

from django.conf import settings
from pydantic import Field

from chat.repo import credentials, indexing
from chat.repo.edits.applying import auto_applies
from chat.repo.edits.proposing import propose
from chat.repo.tools.calls import (
    Arguments,
    Text,
    ToolCall,
    ToolFailure,
    ToolResult,
    checked_arguments,
    display,
    function_spec,
    plain_reason,
    record,
    stored_call_id,
)
from contextcore.edits import EditArgsError, op_from_tool
from contextcore.models import ModelFacts
from history.models import Session

log = logging.getLogger(__name__)
_PATH = "path of the file relative to the repository root"


class EditFileArguments(Arguments):
    path: Text = Field(description=_PATH)
    old_text: Text = Field(
        description="the exact current lines to replace, enough of them to match once"
    )
    new_text: Text = Field(description="the lines that replace them")
    replace_all: bool = Field(False, description="replace every match instead of one")


class WriteFileArguments(Arguments):
    path: Text = Field(description=_PATH)
    content: Text = Field(description="the whole content of the file")


_ARGUMENTS: Mapping[str, tuple[str, type[Arguments]]] = MappingProxyType(
    {
        "edit_file": (
            "Change a file: replace old_text with new_text. old_text must match the file's "
            "current text exactly once (quote enough surrounding lines), unless replace_all. "
            "Edits are written when your reply ends (reviewed by the developer unless "
            "auto-apply is on): the file on disk is unchanged until then.",
            EditFileArguments,
        ),
        "write_file": (
            "Create a file, or replace a whole file's content. Prefer edit_file for changing "
            "part of an existing file.",
            WriteFileArguments,
        ),
    }
)
EDIT_TOOL_SPECS = tuple(
    function_spec(name, text, args) for name, (text, args) in _ARGUMENTS.items()
)
EDIT_TOOL_NAMES = tuple(_ARGUMENTS)

TOOLS_INSTRUCTION = """
To change files, call the edit_file tool (old_text must match the file's current text
exactly once) or write_file (a new file, or a whole file). A reply's edits are shown to
the developer, who accepts or rejects them when the reply ends (unless auto-apply is on);
all of them apply together or none does.
"""
BLOCKS_INSTRUCTION = """
To change a file, write a SEARCH/REPLACE block: the file's path alone on a line, then a
fenced block holding `<<<<<<< SEARCH`, the exact current lines to replace, `=======`, the
new lines, and `>>>>>>> REPLACE`. The SEARCH part must match the file exactly once; an
empty SEARCH part creates a new file. A path with a space, a colon or "=" in it goes on
its line as a JSON string in double quotes ("docs/my notes.md"). The developer reviews
each edit before it applies.
"""


def enabled() -> bool:
    return bool(getattr(settings, "ACDC_EDITS", False))


def with_edit_tools(specs: Sequence[dict]) -> list[dict]:
    """The chat's tool definitions, with the edit tools when edits are on."""
    return [*specs, *EDIT_TOOL_SPECS] if enabled() else list(specs)


def handles(name: str) -> bool:
    return enabled() and name in EDIT_TOOL_NAMES


def instruction(prompt: str, facts: ModelFacts | None = None) -> str:
    """The system prompt with how this model should propose edits: with the tools when its
    facts say it calls tools (or are not known), as blocks otherwise; unchanged with edits
    off."""
    if not enabled():
        return prompt
    tools = facts is None or facts.supports_tools
    return prompt.rstrip("\n") + "\n" + (TOOLS_INSTRUCTION if tools else BLOCKS_INSTRUCTION)


def run_edit_tool(
    session: Session,
    call: ToolCall,
    *,
    turn_id: str = "",
    repo: indexing.Repository,
    apply_now: bool = False,
) -> ToolResult:
    """Carry out one edit call and record it as a toolcall object; never raises for bad
    input (a hostile argument fails the call, not the turn)."""
    result = ToolResult(stored_call_id(call.call_id), call.name, "ok", "")
    try:
        result.args = _arguments(call)
        result.args_display = display(call.name, {"path": result.args.get("path", "")})
        op = op_from_tool(call.name, result.args)
        auto = auto_applies(session, apply_now)
        outcome = propose(
            session, [op], repo=repo, turn_id=turn_id, call_id=result.call_id, auto=auto
        )
        result.output = outcome.text()
        result.status = "fail" if outcome.report else "ok"
    except (ToolFailure, EditArgsError) as exc:
        result.status, result.output = "fail", f"Error: {exc}"
    except Exception as exc:  # a refusal nobody foresaw fails this call, not the turn
        log.exception("edit tool %r failed unexpectedly", call.name[:60])
        result.status, result.output = "fail", f"Error: the tool failed: {plain_reason(exc)}"
    result.output = credentials.tool_output(result.output)
    # The text is in the pending edit's row; the toolcall keeps the path.
    record(session, result, tool=result.name, args={"path": result.args.get("path", "")})
    return result


def _arguments(call: ToolCall) -> dict:
    return checked_arguments(call.arguments, _ARGUMENTS[call.name][1])
