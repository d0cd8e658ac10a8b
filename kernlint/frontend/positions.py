"""Source positions of the libcst nodes kernlint reports on, taken from the stdlib `ast` parse.

LibCST's PositionProvider regenerates the whole module's code to learn positions, which cost more than
parsing itself (0.5 s of a 2 s front-end pass on a 790-line kernel file). CPython's `ast` parser records
positions for free in about 20 ms. Both trees list calls, definitions, statements, subscripts and lambdas
in the same source order, so the n-th libcst `Call` is the n-th `ast.Call` sorted by start (outer before
inner on ties). If the two trees disagree on any count (a syntax `ast` of this Python cannot parse, for
example), the caller falls back to PositionProvider.
"""
from __future__ import annotations

import ast
from collections.abc import Callable

import libcst as cst
from libcst.metadata import CodePosition, CodeRange

from kernlint.frontend.parse import ast_nodes, parse_ast
from kernlint.frontend.walk import iter_nodes
from kernlint.core.text_lines import source_lines

# libcst node type → the ast node types that correspond one to one, in source order.
_PAIRS: tuple[tuple[type[cst.CSTNode], tuple[type[ast.AST], ...]], ...] = (
    (cst.Call, (ast.Call,)),
    (cst.FunctionDef, (ast.FunctionDef, ast.AsyncFunctionDef)),
    (cst.ClassDef, (ast.ClassDef,)),
    (cst.Subscript, (ast.Subscript,)),
    (cst.Lambda, (ast.Lambda,)),
    (cst.Assign, (ast.Assign,)),
    (cst.AnnAssign, (ast.AnnAssign,)),
    (cst.AugAssign, (ast.AugAssign,)),
    (cst.Expr, (ast.Expr,)),
    (cst.Return, (ast.Return,)),
    (cst.If, (ast.If,)),
    (cst.For, (ast.For, ast.AsyncFor)),
    (cst.While, (ast.While,)),
    (cst.With, (ast.With, ast.AsyncWith)),
    (cst.Match, (ast.Match,)),   # reported as an unmodelled statement inside a kernel (KL002)
)
_WANTED = tuple(t for t, _ in _PAIRS)


def _start(node: ast.AST) -> tuple[int, int, int, int]:
    return (node.lineno, node.col_offset, -(node.end_lineno or 0), -(node.end_col_offset or 0))  # type: ignore[attr-defined]


def ast_positions(module: cst.Module, text: str) -> dict[cst.CSTNode, CodeRange] | None:
    try:
        tree = parse_ast(text)   # usually the tree the syntax check just parsed (kernlint.frontend.parse)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    by_type: dict[type[ast.AST], list[ast.AST]] = {}
    decorators: list[ast.AST] = []
    for node in ast_nodes(tree):   # ast.walk's order
        by_type.setdefault(type(node), []).append(node)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            decorators.extend(node.decorator_list)
    cst_nodes: dict[type[cst.CSTNode], list[cst.CSTNode]] = {t: [] for t in _WANTED}
    cst_decorators: list[cst.Decorator] = []
    for node in iter_nodes(module):  # pre-order, children in source order
        kind = type(node)
        if kind in cst_nodes:
            cst_nodes[kind].append(node)
        elif kind is cst.Decorator:
            cst_decorators.append(node)  # type: ignore[arg-type]
    lines = source_lines(text)
    convert = _column_converter(lines)
    out: dict[cst.CSTNode, CodeRange] = {}
    for cst_type, ast_types in _PAIRS:
        ours = cst_nodes[cst_type]
        theirs = sorted((n for t in ast_types for n in by_type.get(t, [])), key=_start)
        if len(ours) != len(theirs):
            return None
        for a, b in zip(ours, theirs):
            out[a] = _range(b, convert)
            if isinstance(a, (cst.FunctionDef, cst.ClassDef)):
                out[a.name] = out[a]
    decorators.sort(key=_start)
    if len(decorators) != len(cst_decorators):
        return None
    for a, b in zip(cst_decorators, decorators):
        out[a] = _range(b, convert)
    return out


def _column_converter(lines: list[str]) -> Callable[[int, int], int]:
    """ast columns are UTF-8 byte offsets; kernlint's (like libcst's) are code points."""

    def convert(line: int, byte_col: int) -> int:
        if 0 < line <= len(lines):
            text = lines[line - 1]
            if not text.isascii():
                return len(text.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))
        return byte_col

    return convert


def _range(node: ast.AST, convert: Callable[[int, int], int]) -> CodeRange:
    line, col = node.lineno, node.col_offset  # type: ignore[attr-defined]
    end_line, end_col = node.end_lineno or line, node.end_col_offset or col  # type: ignore[attr-defined]
    return CodeRange(CodePosition(line, convert(line, col)), CodePosition(end_line, convert(end_line, end_col)))
