"""A plain pre-order walk over libcst nodes.

libcst's visitors and even `CSTNode.children` run its visitor machinery, which rebuilds every node it
passes (`_visit_and_replace_children`); that made read-only sub-tree scans (pointer detection,
loop-carried names, host-function constants, positions) most of a lint. Reading the dataclass fields
directly is several times cheaper. Whitespace, comments and punctuation are skipped: nothing kernlint
reads lives there.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator

import libcst as cst

# Dataclass field order is source order except for these (decorators come first in the source, and
# `a if test else b` starts with `a`); frontend.positions depends on source order.
_FIELDS: dict[type, tuple[str, ...]] = {
    cst.FunctionDef: ("decorators", "name", "params", "returns", "body"),
    cst.ClassDef: ("decorators", "name", "bases", "keywords", "body"),
    cst.IfExp: ("body", "test", "orelse"),
}
_TRIVIA = (cst.BaseParenthesizableWhitespace, cst.Comment, cst.EmptyLine, cst.Newline, cst.TrailingWhitespace,
           cst.Comma, cst.Dot, cst.LeftParen, cst.RightParen, cst.LeftSquareBracket, cst.RightSquareBracket,
           cst.LeftCurlyBrace, cst.RightCurlyBrace, cst.Semicolon, cst.Colon, cst.AssignEqual)


def _fields(kind: type) -> tuple[str, ...]:
    names = _FIELDS.get(kind)
    if names is None:
        names = tuple(f.name for f in dataclasses.fields(kind) if not f.name.startswith(("whitespace", "lpar", "rpar")))
        _FIELDS[kind] = names
    return names


def _child_nodes(node: cst.CSTNode) -> list[cst.CSTNode]:
    out: list[cst.CSTNode] = []
    for name in _fields(type(node)):
        value = getattr(node, name)
        if isinstance(value, cst.CSTNode):
            if not isinstance(value, _TRIVIA):
                out.append(value)
        elif isinstance(value, (list, tuple)):
            out.extend(v for v in value if isinstance(v, cst.CSTNode) and not isinstance(v, _TRIVIA))
    return out


def iter_nodes(root: cst.CSTNode, skip: Callable[[cst.CSTNode], bool] | None = None) -> Iterator[cst.CSTNode]:
    """Every node under `root` (itself included) in source order; `skip(node)` prunes its children."""
    stack: list[cst.CSTNode] = [root]
    while stack:
        node = stack.pop()
        yield node
        if skip is None or node is root or not skip(node):
            stack.extend(reversed(_child_nodes(node)))
