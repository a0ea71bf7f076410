"""Context templates for Endless mode (seed 004): find, check, load and render them.

A template is `<repo>/.acdc/templates/NAME.md` if that exists, else the built-in
`contextcore/templates/NAME.md` (package data). Invariants: a name is 1-64 letters, digits,
`-` or `_` (never a path); a template is UTF-8 text of at most `MAX_TEMPLATE_BYTES` that
stays inside its folder (no symlink out); its first fenced ```json block, if any, is its
contract and must be an object. Every refusal is a `TemplateError` whose message the user
can read. Rendering fills `{name}` placeholders and touches no other brace.
Non-goals: what the placeholders hold and asking the model (`contextcore.conversation.endless`).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BUILTIN_DIR = Path(__file__).parents[1] / "templates"
REPO_DIR = Path(".acdc") / "templates"
MAX_TEMPLATE_BYTES = 64 * 1024

_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_CONTRACT = re.compile(r"^```json[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL | re.I)
_CONTRACT_OPEN = re.compile(r"^```json[ \t]*$", re.MULTILINE | re.I)


class TemplateError(Exception):
    """A template that cannot be used; the message is safe to show to the user."""


@dataclass(frozen=True)
class Template:
    name: str
    source: str  # "repo" or "builtin"
    path: Path
    text: str
    sha256: str
    contract: dict[str, Any] | None = None


@dataclass(frozen=True)
class TemplateInfo:
    """One entry of the template chooser; `error` says why a template cannot be used."""

    name: str
    source: str
    path: Path
    error: str | None = None


def resolve_template(name: str, repo_root: Path | None) -> Template:
    """`<repo>/.acdc/templates/NAME.md` if it exists, else the built-in one."""
    _check_name(name)
    if repo_root is not None:
        path = Path(repo_root) / REPO_DIR / f"{name}.md"
        if path.exists() or path.is_symlink():
            return _load(name, "repo", path, Path(repo_root))
    path = BUILTIN_DIR / f"{name}.md"
    if path.is_file():
        return _load(name, "builtin", path, BUILTIN_DIR)
    where = f"{REPO_DIR}/ or the built-in templates" if repo_root else "the built-in templates"
    raise TemplateError(f"Unknown template {name!r}: no {name}.md in {where}.")


def list_templates(repo_root: Path | None) -> list[TemplateInfo]:
    """Every usable name, sorted; a repo template shadows the built-in of the same name."""
    found: dict[str, TemplateInfo] = {}
    folders = [("builtin", BUILTIN_DIR)]
    if repo_root is not None:
        folders.append(("repo", Path(repo_root) / REPO_DIR))
    for source, folder in folders:
        paths = sorted(folder.glob("*.md")) if folder.is_dir() else []
        for path in paths:
            if _NAME.fullmatch(path.stem):
                found[path.stem] = TemplateInfo(path.stem, source, path)
    for name, info in found.items():
        try:
            resolve_template(name, repo_root)
        except TemplateError as error:
            found[name] = TemplateInfo(name, info.source, info.path, str(error))
    return [found[name] for name in sorted(found)]


def render_template(template: Template | str, values: dict[str, Any]) -> str:
    """Replace `{name}` placeholders; unknown names render empty. Any other brace (JSON,
    code, a lone `{`) is left as it is, and inserted values are never scanned again."""
    text = template.text if isinstance(template, Template) else template

    def value(match: re.Match[str]) -> str:
        found = values.get(match.group(1))
        return "" if found is None else str(found)

    return _PLACEHOLDER.sub(value, text)


def placeholders_in(template: Template) -> set[str]:
    """The `{name}` placeholders the template's text uses."""
    return set(_PLACEHOLDER.findall(template.text))


def _check_name(name: Any) -> None:
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        shown = repr(name)[:80]
        raise TemplateError(
            f"Invalid template name {shown}: use 1-64 letters, digits, '-' or '_' "
            "(no path, no extension)."
        )


def _load(name: str, source: str, path: Path, root: Path) -> Template:
    try:
        resolved = path.resolve(strict=True)
        if not resolved.is_relative_to(root.resolve()):
            raise TemplateError(f"Template {name!r} links outside its folder ({path}).")
        if not resolved.is_file():
            raise TemplateError(f"Template {name!r} is not a file ({path}).")
        data = resolved.read_bytes()
    except OSError as error:
        raise TemplateError(f"Template {name!r} cannot be read: {error.strerror}.") from None
    if len(data) > MAX_TEMPLATE_BYTES:
        raise TemplateError(f"Template {name!r} is larger than {MAX_TEMPLATE_BYTES} bytes.")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise TemplateError(f"Template {name!r} is not UTF-8 text ({path}).") from None
    if not text.strip():
        raise TemplateError(f"Template {name!r} is empty ({path}).")
    digest = hashlib.sha256(data).hexdigest()
    return Template(name, source, path, text, digest, _contract(name, text))


def _contract(name: str, text: str) -> dict[str, Any] | None:
    """The first fenced ```json block, which must hold a JSON object."""
    block = _CONTRACT.search(text)
    if block is None:
        if _CONTRACT_OPEN.search(text):
            raise TemplateError(f"Template {name!r}: the ```json block is never closed.")
        return None
    try:
        contract = json.loads(block.group(1))
    except ValueError as error:
        raise TemplateError(f"Template {name!r}: invalid JSON block ({error}).") from None
    if not isinstance(contract, dict):
        raise TemplateError(f"Template {name!r}: the JSON block must be an object.")
    return contract
