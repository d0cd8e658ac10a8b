"""The libcst transformer behind `--fix`: apply position-addressed edits, nothing else.

An edit names the `Call` it touches by the position kernlint's frontend recorded for it (1-based line,
0-based column of the call's first token), so the planner (which works on estimates) and this module
(which works on syntax) never have to agree on anything but a source position. Everything not edited
keeps its exact bytes: libcst round-trips whitespace and comments.
"""
from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import libcst as cst
from libcst.metadata import MetadataWrapper, ParentNodeProvider, PositionProvider

EditKind = Literal["drop-config", "set-kwarg", "none"]   # none: a finding no fix applies to (why is said)


@dataclass(frozen=True, slots=True)
class Edit:
    kind: EditKind
    line: int
    col: int
    code: str                 # the rule whose finding this fixes
    message: str              # what the fix does, for the summary
    name: str = ""            # set-kwarg: the keyword
    value: int = 0            # set-kwarg: its new literal value


class FixError(Exception):
    """The edited source would not parse: nothing is written."""


def _callee(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return node.attr.value
    return ""


def _with_more_lines(el: cst.BaseElement, lines: Sequence[cst.EmptyLine]) -> cst.BaseElement:
    ws = el.comma.whitespace_after if isinstance(el.comma, cst.Comma) else None
    if not isinstance(ws, cst.ParenthesizedWhitespace):
        return el
    return el.with_changes(comma=el.comma.with_changes(
        whitespace_after=ws.with_changes(empty_lines=[*ws.empty_lines, *lines])))


class _Fixer(cst.CSTTransformer):
    METADATA_DEPENDENCIES = (PositionProvider, ParentNodeProvider)

    def __init__(self, edits: list[Edit]) -> None:
        super().__init__()
        self.drops = {(e.line, e.col): e for e in edits if e.kind == "drop-config"}
        self.sets = {(e.line, e.col): e for e in edits if e.kind == "set-kwarg"}
        self.applied: list[Edit] = []
        self.skipped: list[tuple[Edit, str]] = []

    def _pos(self, node: cst.CSTNode) -> tuple[int, int]:
        p = self.get_metadata(PositionProvider, node).start
        return p.line, p.column

    def _parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self.get_metadata(ParentNodeProvider, node, None)

    def _editable_list(self, node: cst.List) -> bool:
        """A literal list that is the autotune decorator's `configs` or a module-level assignment's value.
        A list anywhere else (inside a comprehension, a function, an expression) may be built or
        filtered at run time, so removing an element there could change more than the one config."""
        parent = self._parent(node)
        if isinstance(parent, cst.Arg):
            call = self._parent(parent)
            # `@triton.autotune(configs=[...])` and Helion's `@helion.kernel(configs=[...])`: both search only
            # the listed configs, so dropping one that cannot run changes nothing else
            if not isinstance(call, cst.Call) or _callee(call.func) not in ("autotune", "kernel"):
                return False
            if not isinstance(self._parent(call), cst.Decorator):
                return False
            if parent.keyword is not None:
                return parent.keyword.value == "configs"
            # configs is autotune's first parameter; helion.kernel's first is the function itself
            return _callee(call.func) == "autotune" and bool(call.args) and call.args[0] is parent
        if isinstance(parent, (cst.Assign, cst.AnnAssign)) and parent.value is node:
            stmt = self._parent(parent)
            return isinstance(stmt, cst.SimpleStatementLine) and isinstance(self._parent(stmt), cst.Module)
        return False

    def leave_List(self, original_node: cst.List, updated_node: cst.List) -> cst.BaseExpression:
        hits = [i for i, el in enumerate(original_node.elements)
                if isinstance(el, cst.Element) and isinstance(el.value, cst.Call)
                and self._pos(el.value) in self.drops]
        if not hits:
            return updated_node
        edits = [self.drops[self._pos(original_node.elements[i].value)] for i in hits]
        if not self._editable_list(original_node):
            self.skipped += [(e, "the config list is not a literal list in the decorator or at module level")
                             for e in edits]
            return updated_node
        if len(hits) == len(original_node.elements):
            self.skipped += [(e, "every config of the list is infeasible; an empty list cannot autotune")
                             for e in edits]
            return updated_node
        elements = list(updated_node.elements)
        lbracket = updated_node.lbracket
        kept: list[cst.BaseElement] = []
        for i, el in enumerate(elements):
            if i not in hits:
                kept.append(el)
                continue
            # own-line comments after a removed config's comma describe what follows it: keep them
            ws = el.comma.whitespace_after if isinstance(el.comma, cst.Comma) else None
            if isinstance(ws, cst.ParenthesizedWhitespace) and ws.empty_lines:
                if kept:
                    kept[-1] = _with_more_lines(kept[-1], ws.empty_lines)
                elif isinstance(lbracket.whitespace_after, cst.ParenthesizedWhitespace):
                    lws = lbracket.whitespace_after
                    lbracket = lbracket.with_changes(whitespace_after=lws.with_changes(
                        empty_lines=[*lws.empty_lines, *ws.empty_lines]))
        updated_node = updated_node.with_changes(lbracket=lbracket)
        if (len(elements) - 1) not in hits:
            self.applied += edits
            return updated_node.with_changes(elements=kept)
        # The last config goes: the new last element takes its comma (none, or one with its whitespace),
        # so `[a, b]` -> `[a]` and `[a, b,]` -> `[a,]`; a comment after it sits in the bracket's leading
        # whitespace and belongs to the removed config's line, so it goes too.
        own = kept[-1].comma.whitespace_after if isinstance(kept[-1].comma, cst.Comma) else None
        own_comment = own.first_line if isinstance(own, cst.ParenthesizedWhitespace) and own.first_line.comment \
            else None   # the kept config's own trailing comment (`..., num_stages=3),  # keep: why`)
        comma = elements[-1].comma
        if own_comment is not None and isinstance(comma, cst.Comma) \
                and isinstance(comma.whitespace_after, cst.ParenthesizedWhitespace):
            comma = comma.with_changes(whitespace_after=comma.whitespace_after.with_changes(first_line=own_comment))
            own_comment = None
        kept[-1] = kept[-1].with_changes(comma=comma)
        rbracket = updated_node.rbracket
        ws = rbracket.whitespace_before
        if isinstance(ws, cst.ParenthesizedWhitespace) and (ws.first_line.comment is not None or own_comment):
            first = own_comment or ws.first_line.with_changes(whitespace=cst.SimpleWhitespace(""), comment=None)
            rbracket = rbracket.with_changes(whitespace_before=ws.with_changes(first_line=first))
        self.applied += edits
        return updated_node.with_changes(elements=kept, rbracket=rbracket)

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        edit = self.sets.get(self._pos(original_node))
        if edit is None:
            return updated_node
        spots = [i for i, a in enumerate(updated_node.args)
                 if a.keyword is not None and a.keyword.value == edit.name and isinstance(a.value, cst.Integer)]
        if len(spots) != 1:
            self.skipped.append((edit, f"no literal `{edit.name}=` at the launch"))
            return updated_node
        args = list(updated_node.args)
        i = spots[0]
        args[i] = args[i].with_changes(value=args[i].value.with_changes(value=str(edit.value)))
        self.applied.append(edit)
        return updated_node.with_changes(args=args)


def apply_edits(data: bytes, edits: list[Edit], path: str = "<file>") -> tuple[bytes, list[Edit], list[tuple[Edit, str]]]:
    """The edited bytes, the edits applied and the edits skipped (with why). Raises FixError when the
    result does not re-parse; returns `data` itself (byte-identical) when nothing applies."""
    if not edits:
        return data, [], []
    module = cst.parse_module(data)
    fixer = _Fixer(edits)
    new_module = MetadataWrapper(module).visit(fixer)
    done = {(e.line, e.col) for e in fixer.applied} | {(e.line, e.col) for e, _ in fixer.skipped}
    fixer.skipped += [(e, "the config is not an element of a literal list (comprehension or computed)")
                      for e in edits if (e.line, e.col) not in done]
    if not fixer.applied:
        return data, [], fixer.skipped
    new = new_module.bytes       # same encoding and newline style as the input
    reparse(new, path, data)
    return new, fixer.applied, fixer.skipped


def reparse(new: bytes, path: str, old: bytes | None = None) -> None:
    """Both parsers must accept the result: libcst (the next fix) and CPython (the import). CPython is only
    asked when it accepts the original too: a file in newer syntax than this interpreter reads (3.12's
    `type X = ...`) was refused with a false "does not parse"."""
    try:
        cst.parse_module(new)
    except (cst.ParserSyntaxError, ValueError) as exc:
        raise FixError(f"{path}: the fixed source does not parse ({exc}); file left unchanged") from None
    try:
        ast.parse(new, filename=path)
    except (SyntaxError, ValueError) as exc:
        try:
            if old is not None:
                ast.parse(old, filename=path)
        except (SyntaxError, ValueError):
            return   # this Python cannot read the original either: libcst's verdict stands
        raise FixError(f"{path}: the fixed source does not parse ({exc}); file left unchanged") from None
