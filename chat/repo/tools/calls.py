"""What every model tool shares: the call, its result, its arguments and its record.

A tool's arguments are a pydantic model (`Arguments`: text only, exactly the declared
names), and the JSON schema the model is given is generated from it (`function_spec`), so
the two cannot disagree. `checked_arguments` turns a call's raw JSON into those arguments
or a `ToolFailure` whose text tells the model what was wrong. `record` stores a result as
the session's toolcall object (seed 001 §5.7). The context tools (`chat.repo.tools.context_tools`)
and the edit tools (`chat.repo.edittools`) are built on these. Synchronous ORM code.
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass, field
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, ValidationError
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaMode, JsonSchemaValue
from pydantic_core import CoreSchema, ErrorDetails, PydanticCustomError

from chat.repo import indexing
from history.models import Session


def _tool_text(text: str) -> str:
    """Text that can be stored and sent back: no NUL, no lone surrogates."""
    if "\0" in text:  # refused before it is stored: PostgreSQL text cannot hold it
        raise PydanticCustomError("nul", "contains a NUL byte")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise PydanticCustomError("utf8", "is not valid UTF-8 text") from None
    return text


Text = Annotated[str, AfterValidator(_tool_text)]


class Arguments(BaseModel):
    """A tool's arguments: text only, exactly the declared names (the schema says the same)."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)


class _ToolSchema(GenerateJsonSchema):
    """JSON schema as a provider wants it: no titles, the description lives on the function."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False

    def generate(self, schema: CoreSchema, mode: JsonSchemaMode = "validation") -> JsonSchemaValue:
        generated = super().generate(schema, mode)
        generated.pop("title", None)
        generated.pop("description", None)
        generated.setdefault("required", [])
        return generated


def function_spec(name: str, description: str, arguments: type[Arguments]) -> dict:
    parameters = arguments.model_json_schema(schema_generator=_ToolSchema)
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": parameters},
    }


class ToolFailure(Exception):
    """A call that cannot be carried out; the message goes back to the model."""


@dataclass(frozen=True)
class ToolCall:
    call_id: str
    name: str
    arguments: str  # raw JSON text as the model produced it


@dataclass
class ToolResult:
    call_id: str
    name: str
    status: str  # "ok" | "fail"
    output: str
    args: dict[str, Any] = field(default_factory=dict)
    args_display: str = ""
    object_id: str = ""  # the toolcall object recording this call
    file_refs: list[str] = field(default_factory=list)
    changed_paths: list[str] = field(default_factory=list)  # files whose sets changed
    # The CommandProposal the call left for the person: id, argv, reason, status.
    proposal: dict[str, Any] | None = None
    # The output as the person's card draws it (a command's colours), when not `output`.
    shown: str = ""


def record(session: Session, result: ToolResult, *, tool: str, args: dict) -> None:
    """Store `result` as the session's toolcall object (`result.object_id` names it)."""
    fields = {
        "tool": tool,
        "args": args,
        "status": result.status,
        "output": result.output,
        "args_display": result.args_display or None,
        "file_refs": result.file_refs or None,
    }
    try:
        stored = indexing.record_toolcall(session=session, call_id=result.call_id, **fields)
    except indexing.IndexingError:  # a model that repeats a call id: keep both calls
        result.call_id = f"{result.call_id}-{uuid.uuid4().hex[:6]}"
        stored = indexing.record_toolcall(session=session, call_id=result.call_id, **fields)
    result.object_id = stored.object.id


def plain_reason(exc: Exception) -> str:
    """An unexpected exception in a few words: the OS's reason when it gave one."""
    reason = str(getattr(exc, "strerror", None) or exc).strip()
    return (reason.splitlines()[0] if reason else type(exc).__name__)[:200]


def stored_call_id(given: str) -> str:
    """The model's call id when it can be stored and sent back as it is, else a new one
    (round_messages pairs the call and its result by the id kept here)."""
    if given and len(given) <= 200 and _ID_CHARACTERS.fullmatch(given):
        return given
    return f"call_{uuid.uuid4().hex[:12]}"


_ID_CHARACTERS = re.compile(r"[\x21-\x7e]+")


def checked_arguments(
    raw: str, model: type[Arguments], *, exclude_unset: bool = False
) -> dict[str, Any]:
    """A call's raw JSON arguments once `model` accepts them; ToolFailure says why not."""
    try:
        args = json.loads(raw or "{}")
    except (json.JSONDecodeError, RecursionError):
        raise ToolFailure("the arguments are not valid JSON") from None
    if not isinstance(args, dict):
        raise ToolFailure("the arguments must be a JSON object")
    try:
        checked = model.model_validate(args)
    except ValidationError as exc:
        raise ToolFailure("; ".join(_reason(e) for e in exc.errors(include_url=False))) from None
    return checked.model_dump(exclude_unset=exclude_unset)


def _reason(error: ErrorDetails) -> str:
    """One validation error in words a model can act on."""
    name = str(error["loc"][0]) if error["loc"] else ""
    if error["type"] == "missing":
        return f"missing argument {name!r}"
    if error["type"] == "extra_forbidden":
        return f"unexpected argument {name[:60]!r}"
    if error["type"] == "string_type":
        return f"argument {name!r} must be text"
    return f"argument {name!r} {error['msg']}"


def display(name: str, args: dict[str, Any]) -> str:
    shown = ", ".join(f"{k}={v!r}" for k, v in args.items())
    return f"{name}({shown})"[:200]
