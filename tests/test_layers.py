"""The layout's rules, read from the source: who may import whom, and how big a room gets.

Dependencies point one way: chat.live -> chat.web -> chat.turn -> chat.repo / chat.llm ->
history -> contextcore (`acdc` wires everything and may import anything; nothing imports
`acdc`). The live socket (chat.live) draws with the pages' fragments; the pages (chat.web)
never import the socket, and say what they tell it through chat.web.broadcast.
chat.repo and chat.llm do not know each other; litellm is reached from chat.llm only;
contextcore imports no web stack at all. No import cycles, counting imports inside functions
too; those are kept for heavy imports that must stay lazy.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("acdc", "chat", "history", "contextcore")
WEB_STACK = ("django", "channels", "litellm", "daphne", "chat", "history", "acdc")
# The rooms and their rank: a module may import rooms of a lower rank only (and its own).
RANKS = {
    "contextcore": 0,
    "history": 1,
    "chat.models": 1,  # the chat app's one table (token counts by content hash)
    "chat.llm": 2,
    "chat.repo": 2,
    "chat.turn.session": 3,  # the lease, the state codec, the context opened per turn
    "chat.turn": 4,
    "chat.web": 5,  # the pages, their fragments, and what they tell the socket (broadcast)
    "chat.live": 6,  # the live socket: consumer, turn host, streaming, follower, keep-warm
}
MAX_MODULE_LINES = 400
MAX_MODULES_PER_FOLDER = 15
MAX_LITELLM_MODULES = 3
MAX_FUNCTION_IMPORTS = 15


@dataclass(frozen=True)
class Import:
    module: str  # the importing module
    target: str  # what it imports, as a dotted name
    lazy: bool  # inside a function


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _sources() -> Iterator[Path]:
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" not in path.parts:
                yield path


def _imports(path: Path, module: str | None = None) -> list[Import]:
    module = module or _module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    tree = ast.parse(path.read_text(), filename=str(path))
    lazy_nodes = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        for inner in ast.walk(node)
    }
    found = []
    for node in ast.walk(tree):
        lazy = id(node) in lazy_nodes
        if isinstance(node, ast.Import):
            found += [Import(module, alias.name, lazy) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            found += [Import(module, f"{base}.{alias.name}", lazy) for alias in node.names]
    return found


@functools.cache
def _all_imports() -> tuple[Import, ...]:
    return tuple(found for path in _sources() for found in _imports(path))


def _known_module(target: str, modules: set[str]) -> str | None:
    """The project module `target` names (`chat.turn.events.TurnDelta` -> chat.turn.events)."""
    while target and target not in modules:
        target = target.rpartition(".")[0]
    return target or None


def _room(module: str) -> str | None:
    matches = [room for room in RANKS if module == room or module.startswith(room + ".")]
    return max(matches, key=len) if matches else None


def _graph() -> dict[str, set[str]]:
    modules = {_module_name(path) for path in _sources()}
    graph: dict[str, set[str]] = {module: set() for module in modules}
    for found in _all_imports():
        target = _known_module(found.target, modules)
        if target and target != found.module:
            graph[found.module].add(target)
    return graph


def test_contextcore_imports_nothing_from_the_web_stack_or_the_apps():
    offenders = [
        f"{found.module}: {found.target}"
        for found in _all_imports()
        if found.module.startswith("contextcore") and found.target.split(".")[0] in WEB_STACK
    ]
    assert offenders == []


def test_rooms_import_only_rooms_below_them():
    offenders = []
    for module, targets in _graph().items():
        room = _room(module)
        if room is None:  # acdc wires everything; chat.apps and templatetags are glue
            continue
        for target in targets:
            other = _room(target)
            allowed = other == room or (other is not None and RANKS[other] < RANKS[room])
            if not allowed:
                offenders.append(f"{module} -> {target}")
    assert offenders == []


def test_the_pages_never_import_the_live_socket():
    """Not at module level and not inside a function: what a page tells the open tabs goes
    through chat.web.broadcast, and the fragments both draw are chat.web's."""
    modules = {_module_name(path) for path in _sources()}
    assert any(_within(module, "chat.live") for module in modules)  # the scan sees the socket
    offenders = [
        f"{found.module}: {found.target}{' (in a function)' if found.lazy else ''}"
        for found in _all_imports()
        if _within(found.module, "chat.web") and _within(found.target, "chat.live")
    ]
    assert offenders == []


def _within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def test_the_apps_never_import_the_project_that_wires_them():
    offenders = [
        f"{found.module}: {found.target}"
        for found in _all_imports()
        if found.module.split(".")[0] in ("chat", "history", "contextcore")
        and found.target.split(".")[0] == "acdc"
    ]
    assert offenders == []


def test_history_does_not_import_chat():
    offenders = [
        f"{found.module}: {found.target}"
        for found in _all_imports()
        if found.module.startswith("history") and found.target.split(".")[0] == "chat"
    ]
    assert offenders == []


def test_only_the_llm_room_reaches_litellm_and_in_few_modules():
    reaching = sorted(_module_name(path) for path in _sources() if _reaches_litellm(path))
    assert all(module.startswith("chat.llm.") for module in reaching), reaching
    assert len(reaching) <= MAX_LITELLM_MODULES, reaching


def _reaches_litellm(path: Path) -> bool:
    """Imports litellm, or uses it through a name or attribute called `litellm` (such as
    `sdk.litellm()`); mentions in strings and comments do not count."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import) and any(
            a.name.split(".")[0] == "litellm" for a in node.names
        ):
            return True
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "litellm":
            return True
        if isinstance(node, ast.Name) and node.id == "litellm":
            return True
        if isinstance(node, ast.Attribute) and node.attr == "litellm":
            return True
    return False


def test_there_is_no_import_cycle():
    graph = _graph()
    cycles = _cycles(graph)
    assert cycles == []


def test_imports_inside_functions_are_few():
    lazy = sorted({(f.module, f.target) for f in _all_imports() if f.lazy})
    assert len(lazy) <= MAX_FUNCTION_IMPORTS, lazy


def test_no_module_is_too_long_and_no_folder_too_crowded():
    long = [
        f"{path.relative_to(ROOT)}: {lines}"
        for path in _sources()
        if (lines := len(path.read_text().splitlines())) > MAX_MODULE_LINES
    ]
    crowded = [
        f"{folder.relative_to(ROOT)}: {count}"
        for package in PACKAGES
        for folder in [ROOT / package, *(ROOT / package).rglob("*/")]
        if folder.is_dir() and "migrations" not in folder.parts
        if (count := len(list(folder.glob("*.py")))) > MAX_MODULES_PER_FOLDER
    ]
    assert (long, crowded) == ([], [])


def test_the_scans_see_what_they_look_for(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import os\ndef f():\n    from django.conf import settings\n    import litellm\n"
    )
    found = {(f.target, f.lazy) for f in _imports(sample, module="sample")}
    assert {("django.conf.settings", True), ("litellm", True), ("os", False)} <= found
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)
