"""Qualified-name and position lookups over one parsed module (LibCST metadata side tables)."""
from __future__ import annotations

from collections.abc import Mapping

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider, QualifiedNameProvider


class NameResolver:
    """Answers "which fully qualified names can this expression refer to?" and "where is it?".

    `tl.load`, `triton.language.load` and `from triton.language import load as ld; ld` all resolve to
    `triton.language.load`. Relative imports (`from .utils import f`) are made absolute with `package`.
    """

    def __init__(self, wrapper: MetadataWrapper, package: str = "") -> None:
        self._qualnames: Mapping[cst.CSTNode, object] = wrapper.resolve(QualifiedNameProvider)
        self._positions: Mapping[cst.CSTNode, CodeRange] = wrapper.resolve(PositionProvider)
        self._package = package

    def qualnames(self, node: cst.CSTNode) -> frozenset[str]:
        found = self._qualnames.get(node)
        if found is None:
            return frozenset()
        values = found() if callable(found) else found
        return frozenset(self._absolute(q.name) for q in values)  # type: ignore[union-attr]

    def _absolute(self, name: str) -> str:
        if not name.startswith("."):
            return name
        stripped = name.lstrip(".")
        parts = self._package.split(".") if self._package else []
        up = len(name) - len(stripped) - 1
        base = parts[: len(parts) - up] if up else parts
        return ".".join([*base, stripped]) if base else stripped

    def refers_to(self, node: cst.CSTNode, *names: str) -> bool:
        return not self.qualnames(node).isdisjoint(names)

    def range(self, node: cst.CSTNode) -> CodeRange | None:
        return self._positions.get(node)

    def line(self, node: cst.CSTNode) -> int:
        pos = self._positions.get(node)
        return pos.start.line if pos is not None else 1

    def col(self, node: cst.CSTNode) -> int:
        pos = self._positions.get(node)
        return pos.start.column if pos is not None else 0
