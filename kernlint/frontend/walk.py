"""A plain pre-order walk over libcst nodes.

libcst's visitors and even `CSTNode.children` run its visitor machinery, which rebuilds every node it
passes (`_visit_and_replace_children`); that made read-only sub-tree scans (pointer detection,
loop-carried names, host-function constants, positions) most of a lint. Reading the dataclass fields
directly is several times cheaper. Whitespace, comments and punctuation are skipped: nothing kernlint
reads lives there.

Two child orders exist. `iter_nodes` uses source order (frontend.positions pairs its nodes with the
stdlib `ast` sorted by position). `iter_visit` uses the order of libcst's own visitors, which differs
for a few node kinds (positional-only parameters come first, `except` types before their bodies, ...),
so that the module-facts collector, which used to be a libcst visitor, finds kernels and launch sites
in exactly the same order as before.
"""
from __future__ import annotations

import dataclasses
import operator
from collections.abc import Callable, Iterator
from typing import Any

import libcst as cst

# Dataclass field order is source order except for these (decorators come first in the source, and
# `a if test else b` starts with `a`); frontend.positions depends on source order.
_FIELDS: dict[type, tuple[str, ...]] = {
    cst.FunctionDef: ("decorators", "name", "params", "returns", "body"),
    cst.ClassDef: ("decorators", "name", "bases", "keywords", "body"),
    cst.IfExp: ("body", "test", "orelse"),
}
# libcst's visitor order (each node's `_visit_and_replace_children`) where it differs from dataclass
# field order in a field that can hold non-trivia nodes; tests/frontend/test_fast_frontend.py checks this table against
# `CSTNode.children`.
_VISIT_FIELDS: dict[type, tuple[str, ...]] = {
    cst.FunctionDef: ("decorators", "name", "type_parameters", "params", "returns", "body"),
    cst.ClassDef: ("decorators", "name", "type_parameters", "bases", "keywords", "body"),
    cst.IfExp: ("body", "test", "orelse"),
    cst.Parameters: ("posonly_params", "posonly_ind", "params", "star_arg", "kwonly_params", "star_kwarg"),
    cst.ExceptHandler: ("type", "name", "body"),
    cst.ExceptStarHandler: ("type", "name", "body"),
    cst.MatchCase: ("pattern", "guard", "body"),
    cst.Arg: ("star", "keyword", "value"),
    cst.Param: ("star", "name", "annotation", "default"),
    cst.TypeAlias: ("name", "type_parameters", "value"),
    cst.TypeParam: ("param", "star", "default"),
}
_TRIVIA = (cst.BaseParenthesizableWhitespace, cst.Comment, cst.EmptyLine, cst.Newline, cst.TrailingWhitespace,
           cst.Comma, cst.Dot, cst.LeftParen, cst.RightParen, cst.LeftSquareBracket, cst.RightSquareBracket,
           cst.LeftCurlyBrace, cst.RightCurlyBrace, cst.Semicolon, cst.Colon, cst.AssignEqual)


def _fields(kind: type, table: dict[type, tuple[str, ...]]) -> tuple[str, ...]:
    names = table.get(kind)
    if names is None:
        names = tuple(f.name for f in dataclasses.fields(kind) if not f.name.startswith(("whitespace", "lpar", "rpar")))
        table[kind] = names
    return names


# What a field value is, cached by its concrete type: `isinstance` against libcst's abstract base
# classes goes through abc.__instancecheck__, which was about half of the walking time.
_SKIP, _NODE, _SEQUENCE = 0, 1, 2
_KINDS: dict[type, int] = {}


def _kind(kind: type) -> int:
    if issubclass(kind, cst.CSTNode):
        found = _SKIP if issubclass(kind, _TRIVIA) else _NODE
    elif issubclass(kind, (list, tuple)):
        found = _SEQUENCE
    else:
        found = _SKIP  # str, None, MaybeSentinel, ...
    _KINDS[kind] = found
    return found


def _getter(kind: type, table: dict[type, tuple[str, ...]]) -> Callable[[cst.CSTNode], tuple[Any, ...]]:
    """One C call that reads all of a node type's walked fields (as a tuple, even for one field)."""
    names = _fields(kind, table)
    if len(names) == 1:
        (name,) = names
        return lambda node: (getattr(node, name),)
    return operator.attrgetter(*names) if names else (lambda node: ())


_GETTERS: dict[type, Callable[[cst.CSTNode], tuple[Any, ...]]] = {}
_VISIT_GETTERS: dict[type, Callable[[cst.CSTNode], tuple[Any, ...]]] = {}


def _child_nodes(node: cst.CSTNode, visit_order: bool = False) -> list[cst.CSTNode]:
    getters = _VISIT_GETTERS if visit_order else _GETTERS
    getter = getters.get(type(node))
    if getter is None:
        getter = getters[type(node)] = _getter(type(node), _VISIT_FIELDS if visit_order else _FIELDS)
    out: list[cst.CSTNode] = []
    kinds = _KINDS
    for value in getter(node):
        kind = kinds.get(type(value))
        if kind is None:
            kind = _kind(type(value))
        if kind == _NODE:
            out.append(value)
        elif kind == _SEQUENCE:
            for item in value:
                item_kind = kinds.get(type(item))
                if item_kind is None:
                    item_kind = _kind(type(item))
                if item_kind == _NODE:
                    out.append(item)
    return out


def iter_nodes(root: cst.CSTNode, skip: Callable[[cst.CSTNode], bool] | None = None) -> Iterator[cst.CSTNode]:
    """Every node under `root` (itself included) in source order; `skip(node)` prunes its children."""
    stack: list[cst.CSTNode] = [root]
    while stack:
        node = stack.pop()
        yield node
        if skip is None or node is root or not skip(node):
            children = _child_nodes(node)
            children.reverse()
            stack.extend(children)


class _Leaving:
    """Stack marker: the walk has finished the sub-tree of `node`."""

    __slots__ = ("node",)

    def __init__(self, node: cst.CSTNode) -> None:
        self.node = node


def iter_visit(root: cst.CSTNode, leave: frozenset[type] | None) -> Iterator[tuple[cst.CSTNode, bool]]:
    """`(node, True)` for every node under `root` in libcst visitor order, and `(node, False)` after
    the sub-tree of each node whose type is in `leave` (what `leave_X` of a libcst visitor sees; `leave`
    None: after every node's, what `on_leave` sees)."""
    stack: list[cst.CSTNode | _Leaving] = [root]
    while stack:
        item = stack.pop()
        if type(item) is _Leaving:
            yield item.node, False
            continue
        yield item, True  # type: ignore[misc]
        if leave is None or type(item) in leave:
            stack.append(_Leaving(item))  # type: ignore[arg-type]
        children = _child_nodes(item, visit_order=True)  # type: ignore[arg-type]
        children.reverse()
        stack.extend(children)
