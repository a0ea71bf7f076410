"""JavaScript and TypeScript definitions named as people search for them.

Much of a JavaScript API is written as assignments and object literals, not declarations:
`res.send = function send(body)`, `Router.prototype.route = function`, `exports.json = …`,
`module.exports = { render() {} }`, `const api = { get: () => … }`. The query files find
them; this module names them: a member assignment by its member path (`res.send`), without
`prototype` (`Router.route`), without what only says "this module" (`exports.`,
`module.exports.`, `this.`), and `module.exports = function createApplication` by the
function's own name; an object literal's method by its object's name (`api.get`). It also
tells a definition that stands inside a callback (`describe('x', function () { … })`), which
the map ranks below the code around it. Plain tree-sitter nodes; other languages' nodes
pass through unchanged.
Non-goals: parsing, queries (chat.repo.repomap.symbols), ranking (chat.repo.repomap.render).
"""

from __future__ import annotations

from collections.abc import Collection

import tree_sitter

MODULE = ("module", "exports", "this")  # leading parts that only say "this module / object"
OBJECT_MEMBERS = frozenset({"pair", "method_definition"})
ARGUMENTS = frozenset({"arguments", "argument_list"})
BODIES = frozenset({"statement_block", "class_body", "object"})
FUNCTIONS = frozenset({"function_expression", "arrow_function", "generator_function"})
VALUE_FIELDS = ("right", "value")


def _text(node: tree_sitter.Node | None) -> str:
    return (node.text or b"").decode("utf-8", "replace") if node is not None else ""


def qualified(name: tree_sitter.Node, whole: tree_sitter.Node) -> str:
    """The name to show and search for the definition whose name node is `name`."""
    parent = name.parent
    if parent is not None and parent.type == "member_expression":
        path = member_path(parent)
        if path:
            return path
        value = whole.child_by_field_name("right")  # module.exports = function name ()
        own = value.child_by_field_name("name") if value is not None else None
        return _text(own) or _text(parent).replace(" ", "")
    if parent is not None and parent.type in OBJECT_MEMBERS:
        holder = parent.parent
        if holder is not None and holder.type == "object":
            owner = _owner(holder)
            return f"{owner}.{_text(name)}" if owner else _text(name)
    return _text(name)


def kind(name: tree_sitter.Node, whole: tree_sitter.Node, found: str) -> str:
    """The kind of a member assignment by its value: a function the module exports
    (`exports.x = function`), a method of some object (`res.send = function`), a class,
    or a constant; `found` (the query's kind) for every other definition."""
    if name.parent is None or name.parent.type != "member_expression":
        return found
    value = whole.child_by_field_name("right")
    if value is None or value.type not in FUNCTIONS:
        return "class" if value is not None and value.type == "class" else "constant"
    return "method" if "." in member_path(name.parent) else "function"


def member_path(member: tree_sitter.Node) -> str:
    """`a.prototype.b` as `a.b`, `module.exports.x` as `x`; "" for `module.exports` itself."""
    parts = [p for p in "".join(_text(member).split()).split(".") if p and p != "prototype"]
    while parts and parts[0] in MODULE:
        parts.pop(0)
    return ".".join(parts)


def _owner(holder: tree_sitter.Node) -> str:
    """The name an object literal is bound to, qualified in turn; "" when it has none."""
    parent = holder.parent
    if parent is None:
        return ""
    if parent.type == "variable_declarator":
        return _text(parent.child_by_field_name("name"))
    if parent.type == "assignment_expression":
        left = parent.child_by_field_name("left")
        if left is not None and left.type == "member_expression":
            return member_path(left)
        return _text(left) if left is not None and left.type == "identifier" else ""
    if parent.type == "pair" and parent.parent is not None and parent.parent.type == "object":
        key = _text(parent.child_by_field_name("key"))
        outer = _owner(parent.parent)
        return f"{outer}.{key}" if outer and key else key
    return ""


def in_callback(node: tree_sitter.Node, spans: Collection[tuple[int, int]]) -> bool:
    """Whether a call's arguments enclose `node` nearer than any definition (by `spans`)."""
    at = node.parent
    while at is not None:
        if at.type in ARGUMENTS:
            return True
        if (at.start_byte, at.end_byte) in spans:
            return False
        at = at.parent
    return False


def value_body(node: tree_sitter.Node) -> tree_sitter.Node | None:
    """The block body of the function or class a definition assigns (`x = function () {`),
    or the object literal it assigns, where its signature ends; None for other values
    (`f = (a) => a + 1` reads whole)."""
    for field in VALUE_FIELDS:
        value = node.child_by_field_name(field)
        if value is not None:
            body = value if value.type == "object" else value.child_by_field_name("body")
            return body if body is not None and body.type in BODIES else None
    return None
