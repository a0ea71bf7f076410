"""Symbols of one source file with tree-sitter: its definitions and the identifiers it uses.

One query file per language in `queries/` (kept in the package) names, for each kind of
definition, the whole node (`@definition.<kind>`) and its name (`@name.definition.<kind>`),
and every identifier (`@name.reference`). A definition's signature is its text up to its
body (or its first line), whitespace collapsed: `def load(path: str) -> Config`. The grammars
come from the `tree-sitter-<language>` wheels, which carry them compiled; nothing is fetched.
A signature never carries a string value that may be a secret: `API_KEY = "…"`. JavaScript's
and TypeScript's member assignments and object-literal methods are named by `members`
(`res.send`, `api.get`), which also marks definitions inside callbacks (`local`).
Files of other languages have no symbols and appear in the map by path only.
Non-goals: reading files or judging paths (chat.repo.repomap.builder), ranking, rendering.
"""

from __future__ import annotations

import functools
import importlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from types import MappingProxyType

import tree_sitter

from chat.repo import credentials
from chat.repo.repomap import members

QUERIES = Path(__file__).resolve().parent / "queries"
MAX_SIGNATURE = 160
# suffix -> (query file, grammar module, its function returning the language)
LANGUAGES: Mapping[str, tuple[str, str, str]] = MappingProxyType(
    {
        ".py": ("python", "tree_sitter_python", "language"),
        ".pyi": ("python", "tree_sitter_python", "language"),
        ".js": ("javascript", "tree_sitter_javascript", "language"),
        ".jsx": ("javascript", "tree_sitter_javascript", "language"),
        ".mjs": ("javascript", "tree_sitter_javascript", "language"),
        ".cjs": ("javascript", "tree_sitter_javascript", "language"),
        ".ts": ("typescript", "tree_sitter_typescript", "language_typescript"),
        ".mts": ("typescript", "tree_sitter_typescript", "language_typescript"),
        ".cts": ("typescript", "tree_sitter_typescript", "language_typescript"),
        ".tsx": ("typescript", "tree_sitter_typescript", "language_tsx"),
        ".go": ("go", "tree_sitter_go", "language"),
        ".rs": ("rust", "tree_sitter_rust", "language"),
        ".java": ("java", "tree_sitter_java", "language"),
        ".c": ("c", "tree_sitter_c", "language"),
        ".h": ("c", "tree_sitter_c", "language"),
        ".cc": ("cpp", "tree_sitter_cpp", "language"),
        ".cpp": ("cpp", "tree_sitter_cpp", "language"),
        ".cxx": ("cpp", "tree_sitter_cpp", "language"),
        ".hh": ("cpp", "tree_sitter_cpp", "language"),
        ".hpp": ("cpp", "tree_sitter_cpp", "language"),
        ".hxx": ("cpp", "tree_sitter_cpp", "language"),
        ".rb": ("ruby", "tree_sitter_ruby", "language"),
        ".php": ("php", "tree_sitter_php", "language_php"),
    }
)
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Definition:
    name: str
    kind: str  # class, function, method, type, interface, constant, module, macro, impl
    line: int  # 1-based
    end_line: int
    signature: str
    depth: int = 0  # how many other definitions of the file enclose this one
    # inside a callback (a function passed as an argument: `describe(..., function () {`)
    # nearer than any enclosing definition: ranked below the code around it
    local: bool = False


@dataclass(frozen=True)
class FileSymbols:
    language: str  # "" for a file acdc has no grammar for
    definitions: tuple[Definition, ...] = ()
    # identifier -> times used, not counting the names of the file's own definitions
    references: tuple[tuple[str, int], ...] = ()


NO_SYMBOLS = FileSymbols("")


def language_of(path: str) -> str:
    spec = LANGUAGES.get(_suffix(path))
    return spec[0] if spec else ""


def _suffix(path: str) -> str:
    """PurePosixPath(path).suffix, lower-cased, without building a path (called for
    every listed file on every turn)."""
    name = path.rpartition("/")[2]
    dot = name.rfind(".")
    return name[dot:].lower() if 0 < dot < len(name) - 1 else ""


def parse(path: str, text: str) -> FileSymbols:
    """The symbols of `text`, read as the language `path`'s suffix names."""
    spec = LANGUAGES.get(_suffix(path))
    if spec is None:
        return NO_SYMBOLS
    language, definitions_query, references_query = _grammar(*spec)
    source = text.encode("utf-8", "surrogatepass")
    tree = tree_sitter.Parser(language).parse(source)
    # by the name node's start byte (the first pattern wins): (pattern, definition, node)
    nodes_of: dict[int, tuple[int, Definition, tree_sitter.Node]] = {}
    for index, captures in tree_sitter.QueryCursor(definitions_query).matches(tree.root_node):
        for capture, nodes in captures.items():
            if capture.startswith("name.definition."):
                whole = captures.get("definition." + capture.rsplit(".", 1)[1])
                for node in nodes:
                    seen = nodes_of.get(node.start_byte)
                    if whole and (seen is None or index < seen[0]):
                        made = _definition(node, whole[0], capture)
                        nodes_of[node.start_byte] = (index, made, whole[0])
    found = _spans(nodes_of)
    # One capture list for every identifier: far fewer Python objects than a match each.
    used = tree_sitter.QueryCursor(references_query).captures(tree.root_node)
    counts: dict[str, int] = {}
    for node in used.get("name.reference", ()):
        start = node.start_byte
        if start not in found:
            word = source[start : node.end_byte].decode("utf-8", "replace")
            counts[word] = counts.get(word, 0) + 1
    definitions = _nest(sorted(found.values(), key=lambda f: (f[1][0], -f[1][1], f[0].name)))
    return FileSymbols(spec[0], tuple(definitions), tuple(sorted(counts.items())))


@functools.cache
def _grammar(
    name: str, module: str, function: str
) -> tuple[tree_sitter.Language, tree_sitter.Query, tree_sitter.Query]:
    """The language and its query file twice: once with the definition patterns only
    (read match by match), once with the reference patterns only (read as one list)."""
    language = tree_sitter.Language(getattr(importlib.import_module(module), function)())
    source = query_source(name)
    definitions, references = (tree_sitter.Query(language, source) for _ in range(2))
    for index in range(definitions.pattern_count):
        pattern = source[
            definitions.start_byte_for_pattern(index) : definitions.end_byte_for_pattern(index)
        ]
        (definitions if "@name.reference" in pattern else references).disable_pattern(index)
    return language, definitions, references


def query_source(name: str) -> str:
    """A language's query file, with each `; include: other` line replaced by the patterns
    of `other.scm` (what JavaScript and TypeScript share is written once)."""
    lines = []
    for line in (QUERIES / f"{name}.scm").read_text(encoding="utf-8").splitlines():
        included = line.removeprefix("; include:").strip() if line.startswith("; include:") else ""
        lines.append(query_source(included) if included else line)
    return "\n".join(lines) + "\n"


def _text(node: tree_sitter.Node) -> str:
    return (node.text or b"").decode("utf-8", "replace")


def _definition(name: tree_sitter.Node, whole: tree_sitter.Node, capture: str) -> Definition:
    return Definition(
        name=members.qualified(name, whole),
        kind=members.kind(name, whole, capture.rsplit(".", 1)[1]),
        line=whole.start_point.row + 1,
        end_line=whole.end_point.row + 1,
        signature=signature(whole, _text(name)),
    )


def signature(node: tree_sitter.Node, name: str = "") -> str:
    """The definition's text up to its body, else its first line, on one line, with the
    values of string literals that may be secrets left out (see `credentials`)."""
    raw = node.text or b""
    body = node.child_by_field_name("body") or members.value_body(node)
    if body is not None and body.start_byte > node.start_byte:
        raw = raw[: body.start_byte - node.start_byte]
    else:
        raw = raw.split(b"\n", 1)[0]
    text = _SPACE.sub(" ", raw.decode("utf-8", "replace")).strip().rstrip("{:=").rstrip()
    text = credentials.elide_literals(text, name)  # before the cut, which may split a value
    if len(text) > MAX_SIGNATURE:
        text = text[: MAX_SIGNATURE - 1] + "…"
    return text


def _spans(
    nodes_of: dict[int, tuple[int, Definition, tree_sitter.Node]],
) -> dict[int, tuple[Definition, tuple[int, int]]]:
    """Each definition with its node's span, marked `local` when a call's arguments stand
    between it and the definition enclosing it (or the file)."""
    spans = {(n.start_byte, n.end_byte) for _, _, n in nodes_of.values()}
    found = {}
    for start, (_, definition, node) in nodes_of.items():
        if members.in_callback(node, spans):
            definition = replace(definition, local=True)
        found[start] = (definition, (node.start_byte, node.end_byte))
    return found


def _nest(found: list[tuple[Definition, tuple[int, int]]]) -> list[Definition]:
    """Each definition with the number of definitions whose node encloses its node."""
    result: list[Definition] = []
    open_ends: list[int] = []
    for definition, (start, end) in found:
        while open_ends and open_ends[-1] <= start:
            open_ends.pop()
        result.append(replace(definition, depth=len(open_ends)))
        open_ends.append(end)
    return result
