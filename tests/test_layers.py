"""The layout's rules, read from the source: who may import whom, and how big a room has got.

Dependencies point one way: chat.live -> chat.web -> chat.turn -> chat.session -> chat.repo /
chat.llm -> history -> contextcore (`acdc` wires everything and may import anything;
nothing imports `acdc`). The live socket (chat.live) draws with the pages' fragments; the
pages (chat.web) never import the socket, and say what they tell it through
chat.web.broadcast.
chat.repo and chat.llm do not know each other; litellm is reached from chat.llm only;
contextcore imports no web stack at all. No import cycles, counting imports inside functions
too; those are kept for heavy imports that must stay lazy. What the process serves is built
once, as one object (chat.live.served), and handed down: no other module holds state of the
process at module level (no mutable container, lock, `global` or ContextVar), the served
repository's path (`settings.ACDC_REPO`) is read only where the process is wired, and no test
patches a part of it on a module. Those are hard rules. How long modules are and how many a
folder holds is a figure for a reviewer (`test_the_layout_figures`, printed at the end of
the run), not a failure: the design decides where code goes.
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("acdc", "chat", "history", "contextcore")
# What the project ships: the product, and the benchmarks `acdc bench` runs.
SHIPPED = (*PACKAGES, "bench")
WEB_STACK = ("django", "channels", "litellm", "daphne", "chat", "history", "acdc")
# The rooms and their rank: a module may import rooms of a lower rank only (and its own).
RANKS = {
    "contextcore": 0,
    "history": 1,
    "chat.models": 1,  # the chat app's one table (token counts by content hash)
    "chat.llm": 2,
    "chat.repo": 2,
    "chat.session": 3,  # the lease, the state codec, the context opened per turn
    "chat.turn": 4,
    "chat.web": 5,  # the pages, their fragments, and what they tell the socket (broadcast)
    "chat.live": 6,  # the live socket: consumer, turn host, streaming, follower, keep-warm
}
# Figures a reviewer reads (printed, never failing): modules past this many lines, folders
# past this many modules, are listed at the end of the run.
LONG_MODULE_LINES = 400
CROWDED_FOLDER_MODULES = 15
MAX_PICKER_SCRIPT_LINES = 300
# chat.llm's sdk (the import), offline (its CustomLLM), client (acompletion, the wrapper
# path) and direct (litellm's request builders and chunk parsers, without the wrapper).
MAX_LITELLM_MODULES = 4
MAX_FUNCTION_IMPORTS = 15
# File names more than one product module may bear. Django's conventions, one idea seen from
# two layers, and the two-meaning names found when this rule came in (each a rename to do);
# a name leaves the list once it is unique again, which the test also checks.
SHARED_FILE_NAMES = {
    "__init__.py": "every package has one",
    "apps.py": "Django: each app's config",
    "urls.py": "Django: each app's routes",
    "views.py": "Django: each app's (and sub-app's) views",
    "compaction.py": "one idea, two layers: the pure rule (contextcore) and the turn's step",
    "endless.py": "one idea, two layers: the pure rewrite (contextcore) and the turn's step",
    "instructions.py": "one idea, two layers: the prompt text (contextcore), the disk (chat.repo)",
    "edits.py": "one idea, two layers: the tables (history.models) and their services",
    "objects.py": "one idea, two layers: the tables (history.models) and the pure hashing",
    "errors.py": "each room's own errors: the command line's (acdc), the providers' (chat.llm)",
    "models.py": "to rename: Django's table (chat) vs an LLM model's facts (contextcore)",
    "blocks.py": "to rename: an answer's markdown blocks (chat.live) vs edit blocks",
    "client.py": "to rename: `acdc chat` as a server's client vs the LLM adapter",
    "prepare.py": "to rename: `acdc chat`'s send (acdc.terminal) vs the turn's request",
    "render.py": "to rename: the repository map as text vs model text as HTML (history)",
    "report.py": "to rename: acdc/dry-run's answer (chat.llm) vs edit result lines",
    "versions.py": "to rename: versioned file objects (chat.repo) vs a message's versions",
}


# The one module that may build the process's parts (it builds them in a method, all the same).
SERVED_MODULE = "chat.live.served"
# The parts of the served object (and the singletons they replaced): no test sets one on a
# module; a test builds a served object of its own (tests/serving.py).
SERVED_PARTS = (
    "runtime",
    "maps",
    "passes",
    "counts",
    "outlines",
    "files",
    "own_writes",
    "watchers",
    "tabs",
    "host",
    "warmer",
    "follower",
    "models",
    "decodes",
    "HOST",
    "LOCAL_TABS",
    "FOLLOWER",
    "WARMER",
    "WATCHERS",
    "MAPS",
    "COUNTS",
    "COUNTER",
    "PASSES",
    "OWN_WRITES",
    "DECODES",
    "_LISTINGS",
    "_LISTING_STARTED",
    "_LISTING_LOCK",
    "_KNOWN",
    "_STOPPING",
)
# Calls that make a mutable container or a lock, whatever module they come from.
MUTABLE_CALLS = {
    *("dict", "list", "set", "bytearray", "deque", "defaultdict", "OrderedDict", "Counter"),
    *("Lock", "RLock", "Event", "Condition", "Semaphore", "BoundedSemaphore", "local"),
    *("WeakValueDictionary", "WeakKeyDictionary", "WeakSet"),
}
# Module-level names that stay containers (or state), each with why. Django's own
# conventions are its registries' input; the rest are read-only by use, or kept on purpose.
MODULE_STATE_ALLOWED = {
    ("acdc.settings", "*"): "Django's settings module: Django reads (and copies) its lists",
    ("*", "urlpatterns"): "Django's URL registry reads the module's list",
    ("*", "websocket_urlpatterns"): "Channels' routing reads the module's list",
    ("chat.repo.credentials", "_CACHE"): (
        "a memo of a pure function (text -> its scan, by hash), like functools.cache: no "
        "caller can tell it from a recomputation, and the redaction it serves runs in eight "
        "modules of three rooms that would all carry it for nothing"
    ),
    ("chat.repo.tools.context_tools", "_TOOLS"): (
        "the tools' dispatch table, never written; a test swaps a tool in it"
    ),
    ("chat.session.hud", "SECTION_LABELS"): (
        "a label map, never written; left a dict while the Files panel's work changes this "
        "module (a MappingProxyType once merged)"
    ),
    ("history.markup.render", "_ALLOWED_ATTRIBUTES"): (
        "nh3 takes only a dict (its sets are frozen), never written"
    ),
}


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


def _sources(packages: tuple[str, ...] = PACKAGES) -> Iterator[Path]:
    for package in packages:
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


# The pages' side of the socket: the group names and the socket's path, which both sides
# must spell alike and which the pages own so that they never import the socket.
SHARED_ADDRESSES = "chat.web.broadcast"


def test_the_live_socket_takes_only_renderers_from_the_pages():
    """chat.live calls chat.web's functions that draw what it sends, and reads the addresses
    both share; it imports none of the pages' data types, state holders or modules (those
    live in the rooms below, where the pages read them too)."""
    offenders = []
    for found in _all_imports():
        if not _within(found.module, "chat.live") or not _within(found.target, "chat.web"):
            continue
        where, _, name = found.target.rpartition(".")
        if where == SHARED_ADDRESSES:
            continue
        try:
            thing = getattr(importlib.import_module(where), name)
        except (ImportError, AttributeError):
            thing = None  # `import chat.web.x` or a module taken whole
        if not inspect.isfunction(thing):
            offenders.append(f"{found.module}: {found.target}")
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


def test_nothing_shipped_imports_the_tests():
    """The tests' doubles and helpers are not installed: product code, and the benchmarks
    `acdc bench` runs, import nothing of `tests`, not even inside a function."""
    offenders = [
        f"{found.module}: {found.target}"
        for path in _sources(SHIPPED)
        for found in _imports(path)
        if found.target.split(".")[0] == "tests"
    ]
    assert offenders == []


def test_the_product_never_imports_the_benchmarks():
    """The benchmarks (and their loopback provider fakes) drive the product from outside;
    only `acdc bench`'s entry hands over to them."""
    offenders = [
        f"{found.module}: {found.target}"
        for found in _all_imports()
        if found.target.split(".")[0] == "bench" and found.module != "acdc.bench"
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


def _layout_figures() -> str:
    """The modules past LONG_MODULE_LINES lines and the folders past CROWDED_FOLDER_MODULES
    modules, longest and fullest first, with the longest few of each either way."""
    lines = sorted(
        (
            (len(path.read_text().splitlines()), path.relative_to(ROOT).as_posix())
            for path in _sources(SHIPPED)
        ),
        reverse=True,
    )
    folders = sorted(
        (
            (len(list(folder.glob("*.py"))), folder.relative_to(ROOT).as_posix() + "/")
            for package in SHIPPED
            for folder in [ROOT / package, *(ROOT / package).rglob("*/")]
            if folder.is_dir()
            and "migrations" not in folder.parts
            and "__pycache__" not in folder.parts
        ),
        reverse=True,
    )
    long = [(n, name) for n, name in lines if n > LONG_MODULE_LINES] or lines[:3]
    crowded = [(n, name) for n, name in folders if n > CROWDED_FOLDER_MODULES] or folders[:3]
    return "\n".join(
        [
            f"modules over {LONG_MODULE_LINES} lines: "
            f"{sum(n > LONG_MODULE_LINES for n, _ in lines)} of {len(lines)}",
            *(f"  {n:5} lines  {name}" for n, name in long),
            f"folders over {CROWDED_FOLDER_MODULES} modules: "
            f"{sum(n > CROWDED_FOLDER_MODULES for n, _ in folders)} of {len(folders)}",
            *(f"  {n:5} modules  {name}" for n, name in crowded),
        ]
    )


def test_the_layout_figures(record_property):
    """Long modules and crowded folders, for a reviewer to read (tests/conftest.py prints
    them at the end of the run); they never fail the run: where code goes is the design's
    decision, with these figures in view."""
    figures = _layout_figures()
    assert figures.startswith("modules over")
    record_property("layout figures", figures)


def test_the_files_panel_script_keeps_only_what_htmx_cannot_do():
    """The server owns the Files panel (rows, states, choices); its script stays small."""
    lines = len((ROOT / "static" / "acdc" / "picker.js").read_text().splitlines())
    assert lines <= MAX_PICKER_SCRIPT_LINES, f"static/acdc/picker.js: {lines} lines"


def test_one_meaning_per_module_name():
    """Two product modules with the same file name must be one idea (or a Django
    convention), listed in SHARED_FILE_NAMES with why; others get a name saying their job."""
    paths: dict[str, list[str]] = {}
    for path in _sources():
        paths.setdefault(path.name, []).append(str(path.relative_to(ROOT)))
    shared = {name: found for name, found in paths.items() if len(found) > 1}
    unlisted = {name: found for name, found in shared.items() if name not in SHARED_FILE_NAMES}
    stale = sorted(set(SHARED_FILE_NAMES) - set(shared))
    assert (unlisted, stale) == ({}, [])


# Underscored names of a library that the product may read, each documented by its library.
LIBRARY_PRIVATE_ALLOWED = {
    "_meta": "Django's model Options API (documented as Model._meta)",
    "_exit": "os._exit, documented for a child process that must not run atexit handlers",
}


def _private_reads(path: Path, ours: set[str]) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if not isinstance(node, ast.Attribute) or not node.attr.startswith("_"):
            continue
        if node.attr.startswith("__") or node.attr in ours or node.attr in LIBRARY_PRIVATE_ALLOWED:
            continue
        if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
            continue
        found.append(f"{path.name}:{node.lineno} {ast.unparse(node)}")
    return found


def _our_private_names() -> set[str]:
    """Every underscored name the shipped code itself defines or assigns."""
    names: set[str] = set()
    for path in _sources(SHIPPED):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
    return {name for name in names if name.startswith("_")}


def test_nothing_reads_a_librarys_private_attributes():
    # A library's underscored attribute (channels_redis' _group_key, a schema editor's
    # _create_index_sql) changes without notice in any release; what the product needs from
    # a library goes through its public API.
    ours = _our_private_names()
    found = [hit for path in _sources() for hit in _private_reads(path, ours)]
    assert found == []


def test_the_scans_see_what_they_look_for(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import os\ndef f():\n    from django.conf import settings\n    import litellm\n"
    )
    found = {(f.target, f.lazy) for f in _imports(sample, module="sample")}
    assert {("django.conf.settings", True), ("litellm", True), ("os", False)} <= found
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    sample.write_text("def f(layer, m):\n    self._x, m._meta\n    return layer._group_key(1)\n")
    assert _private_reads(sample, set()) == ["sample.py:3 layer._group_key"]


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


# -- state of the process: one served object, handed down ---------------------------------


@functools.cache
def _product_classes() -> dict[str, bool]:
    """Every class the product defines, by name: whether its instances are immutable (a
    frozen dataclass, a NamedTuple, an Enum)."""
    found: dict[str, bool] = {}
    for path in _sources():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                found[node.name] = found.get(node.name, True) and _immutable(node)
    return found


def _immutable(node: ast.ClassDef) -> bool:
    bases = {ast.unparse(base).rpartition(".")[2] for base in node.bases}
    if bases & {"NamedTuple", "Enum", "StrEnum", "IntEnum", "TextChoices", "IntegerChoices"}:
        return True
    return any(
        isinstance(d, ast.Call)
        and ast.unparse(d.func).endswith("dataclass")
        and any(k.arg == "frozen" and ast.unparse(k.value) == "True" for k in d.keywords)
        for d in node.decorator_list
    )


def _module_state(path: Path, module: str) -> list[str]:
    """Module-level assignments (at the top, or under a module-level if/try/with) whose
    value is a mutable container, a lock, or an instance of a product class that is not
    immutable; and the names a function rebinds at module level (`global`)."""
    classes = _product_classes()
    tree = ast.parse(path.read_text())
    found = [
        f"{module}.{name} (global)"
        for node in ast.walk(tree)
        if isinstance(node, ast.Global)
        for name in node.names
    ]
    statements = list(tree.body)
    while statements:
        node = statements.pop(0)
        if isinstance(node, ast.If | ast.Try | ast.With):
            inner = [*node.body, *getattr(node, "orelse", []), *getattr(node, "finalbody", [])]
            statements[:0] = inner + [s for h in getattr(node, "handlers", []) for s in h.body]
            continue
        if not isinstance(node, ast.Assign | ast.AnnAssign) or node.value is None:
            continue
        value = node.value
        called = ast.unparse(value.func).rpartition(".")[2] if isinstance(value, ast.Call) else ""
        mutable = isinstance(value, ast.Dict | ast.List | ast.Set | ast.DictComp | ast.ListComp)
        mutable = mutable or isinstance(value, ast.SetComp) or called in MUTABLE_CALLS
        instance = called in classes and not classes[called]
        if mutable or instance:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found += [f"{module}.{ast.unparse(t)}" for t in targets]
    return found


def _allowed(name: str) -> bool:
    module, _, attribute = name.rpartition(".")
    return any(
        key in MODULE_STATE_ALLOWED
        for key in [(module, attribute), (module, "*"), ("*", attribute)]
    )


def test_no_module_but_the_served_objects_holds_state_of_the_process():
    """No module-level mutable container, lock or (mutable) product object outside
    chat.live.served: what the process serves is built once and handed down. A constant
    is immutable (a tuple, a frozenset, a MappingProxyType) or listed with its reason."""
    found = [
        name
        for path in _sources()
        if (module := _module_name(path)) != SERVED_MODULE
        for name in _module_state(path, module)
    ]
    stale = sorted(
        f"{module}.{attribute}"
        for module, attribute in MODULE_STATE_ALLOWED
        if "*" not in (module, attribute) and f"{module}.{attribute}" not in found
    )
    assert ([name for name in found if not _allowed(name)], stale) == ([], [])


def _context_vars(path: Path, module: str) -> list[str]:
    """Every mention of a ContextVar in code (an import of `contextvars`, the name, the
    attribute): state that follows the task instead of being handed down."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        named = (
            (isinstance(node, ast.Import) and any(a.name == "contextvars" for a in node.names))
            or (isinstance(node, ast.ImportFrom) and node.module == "contextvars")
            or (isinstance(node, ast.Name) and node.id == "ContextVar")
            or (isinstance(node, ast.Attribute) and node.attr == "ContextVar")
        )
        if named:
            found.append(f"{module}:{node.lineno}")
    return found


def test_no_context_variable_carries_state_of_the_process():
    """A ContextVar hides a parameter in the task (an `--apply` flag, a request's act):
    what a function needs is handed to it; only the served object may hold one."""
    found = [
        hit
        for path in _sources()
        if (module := _module_name(path)) != SERVED_MODULE
        for hit in _context_vars(path, module)
    ]
    assert found == []


# Where the process is wired: the project (`acdc`: its settings, the command line) and the
# served object, which holds the repository; everything else is handed its path.
WIRING = ("acdc", SERVED_MODULE)
REPO_SETTING = "ACDC_REPO"


def _repo_reads(path: Path, module: str) -> list[str]:
    """Reads of the served repository's setting: `settings.ACDC_REPO`, or a getattr of it."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        read = isinstance(node, ast.Attribute) and node.attr == REPO_SETTING
        read = read or (
            isinstance(node, ast.Call)
            and ast.unparse(node.func) == "getattr"
            and any(isinstance(a, ast.Constant) and a.value == REPO_SETTING for a in node.args)
        )
        if read:
            found.append(f"{module}:{node.lineno}")
    return found


def test_the_repository_setting_is_read_only_where_the_process_is_wired():
    """The repository is the served object's (`Served.repository`: its path, listings and
    own writes); below the wiring a function is handed it, never reads the setting."""
    found = [
        hit
        for path in _sources()
        if not any(_within(module := _module_name(path), wired) for wired in WIRING)
        for hit in _repo_reads(path, module)
    ]
    assert found == []


def test_the_wiring_scans_see_what_they_look_for(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import contextvars\nfrom django.conf import settings\n"
        "A = contextvars.ContextVar('a')\ndef f():\n    global B\n    B = 1\n"
        "    return settings.ACDC_REPO, getattr(settings, 'ACDC_REPO', ''), settings.ACDC_REPOS\n"
    )
    assert _context_vars(sample, "sample") == ["sample:1", "sample:3"]
    assert _repo_reads(sample, "sample") == ["sample:7", "sample:7"]
    assert _module_state(sample, "sample") == ["sample.B (global)"]


# The entry points: what a request, a frame or the process's start reaches first. They
# fetch the served object once and hand its parts down (the command line, acdc/, is one too).
# A template tag is reached from a template as a view is from a URL; the commit form's view
# module is one of the pages' views under another name.
ENTRY_POINTS = (
    "chat/apps.py",
    "chat/live/served.py",
    "chat/live/consumers.py",
    "chat/live/turnhost.py",
    "chat/templatetags/reply_edits.py",
    "chat/web/edits/commit_view.py",
)


def _entry_point(path: Path) -> bool:
    where = path.relative_to(ROOT).as_posix()
    in_pages = where.startswith("chat/web/") and path.name.startswith("views")
    return where in ENTRY_POINTS or in_pages


def _served_lookups(path: Path, name: str = "") -> list[str]:
    """The calls in `path` (named `name`) that look the served object up instead of being
    handed it: the app registry's `get_app_config`, or `chat.live.served.served()`."""
    name = name or path.relative_to(ROOT).as_posix()
    tree = ast.parse(path.read_text(), filename=str(path))
    fetchers = {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == SERVED_MODULE
        for alias in node.names
        if alias.name == "served"
    }
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if (isinstance(func, ast.Attribute) and func.attr == "get_app_config") or (
            isinstance(func, ast.Name) and func.id in fetchers
        ):
            found.append(f"{name}:{node.lineno} {ast.unparse(func)}")
    return found


def test_only_the_entry_points_look_the_served_object_up():
    """Below the socket, the pages' views and the app's start, what a function needs of the
    process (the runtime, the maps: `chat.session.Wiring`) is a parameter, never looked up."""
    found = [
        hit
        for path in _sources(("chat",))
        if not _entry_point(path)
        for hit in _served_lookups(path)
    ]
    assert found == []


def test_the_lookup_scan_sees_what_it_looks_for(tmp_path):
    sample = ROOT / "chat" / "session" / "sample.py"  # a path under chat/, never written
    assert not _entry_point(sample) and _entry_point(ROOT / "chat" / "web" / "views_model.py")
    scanned = tmp_path / "sample.py"
    scanned.write_text(
        "from django.apps import apps\nfrom chat.live.served import served as fetch\n"
        "def f():\n    return apps.get_app_config('chat').served, fetch().maps, served()\n"
    )
    assert _served_lookups(scanned, "sample.py") == [
        "sample.py:4 apps.get_app_config",
        "sample.py:4 fetch",
    ]


def test_no_test_patches_a_part_of_the_served_object_on_a_module():
    """A test builds a served object of its own (tests/serving.py) instead of setting
    `HOST`, `MAPS`, `COUNTS` and the like on the modules that once held them."""
    offenders = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        tree = ast.parse(path.read_text())
        modules = _module_names_in(tree)
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and _patches(node)):
                continue
            named = _patched_name(node)
            if named in SERVED_PARTS and _on_a_module(node, modules):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}: {named}")
    assert offenders == []


def _patches(node: ast.Call) -> bool:
    """`setattr`, `monkeypatch.setattr`, `mock.patch` and `patch.object` calls."""
    called = ast.unparse(node.func)
    return called.endswith(("setattr", "patch.object")) or called in ("patch", "mock.patch")


def _module_names_in(tree: ast.Module) -> set[str]:
    """The names a test file binds to product modules (`from chat.live import turnhost`,
    `import chat.repo.picker as picker`)."""
    modules = {_module_name(path) for path in _sources()}
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            bound = [a for a in node.names if f"{node.module}.{a.name}" in modules]
            names |= {a.asname or a.name for a in bound}
        elif isinstance(node, ast.Import):
            names |= {a.asname or a.name.split(".")[0] for a in node.names}
    return names


def _patched_name(node: ast.Call) -> str:
    """The attribute a setattr call sets: its second argument, or the last part of a
    dotted first argument (`monkeypatch.setattr("chat.live.turnhost.HOST", ...)`)."""
    if len(node.args) >= 2 and isinstance(node.args[1], ast.Constant):
        return str(node.args[1].value)
    first = node.args[0] if node.args else None
    if isinstance(first, ast.Constant) and isinstance(first.value, str):
        return first.value.rpartition(".")[2]
    return ""


def _on_a_module(node: ast.Call, modules: set[str]) -> bool:
    """Set on a module (named by a dotted string, or by a name bound to a module), not on
    the app's config (where the served object lives) nor on an object the test built."""
    first = node.args[0] if node.args else None
    if isinstance(first, ast.Constant):
        return True
    target = ast.unparse(first) if first is not None else ""
    if "(" in target:  # a call's result: an object, such as the app's config
        return False
    return target in modules or target.split(".")[0] in PACKAGES


def test_the_state_scan_sees_what_it_looks_for(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import threading\nfrom collections import deque\nfrom types import MappingProxyType\n"
        "A = {}\nB: list[int] = []\nC = threading.Lock()\nD = deque()\nE = TurnHost()\n"
        "F = (1, 2)\nG = frozenset({1})\nH = MappingProxyType({'a': 1})\nI = Verdict('ok')\n"
        "if True:\n    J = set()\n"
    )
    assert "TurnHost" in _product_classes() and _product_classes()["Verdict"]
    found = _module_state(sample, "sample")
    assert found == [f"sample.{n}" for n in "ABCDEJ"]
    patched = ast.parse(
        "monkeypatch.setattr(turnhost, 'HOST', x)\n"
        "monkeypatch.setattr('chat.repo.picker.COUNTS', x)\n"
        "monkeypatch.setattr(apps.get_app_config('chat'), 'served', x)\n"
        "monkeypatch.setattr(served.warmer, 'clock', x)\n"
        "patch.object(engine, 'MAPS', x)\n"
    ).body
    calls = [statement.value for statement in patched]
    assert all(_patches(c) for c in calls)
    assert [_patched_name(c) for c in calls] == ["HOST", "COUNTS", "served", "clock", "MAPS"]
    assert [_on_a_module(c, {"turnhost", "engine"}) for c in calls] == [
        True,
        True,
        False,
        False,
        True,
    ]
