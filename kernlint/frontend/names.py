"""Qualified-name and position lookups over one parsed module.

Names are resolved through the module's import statements, never by matching text: `tl.load`,
`triton.language.load` and `from triton.language import load as ld; ld` all resolve to
`triton.language.load`. This is a purpose-built, flow-insensitive pass (imports anywhere in the file,
plus the `def`s it contains) instead of LibCST's QualifiedNameProvider, which builds full scope analysis
and cost 1.7 s of a 2.0 s front-end pass on a 790-line kernel file; kernel files do not rebind `tl` or
`triton`, so the scope precision bought nothing here. Relative imports (`from .utils import f`) are
made absolute with `package`.
"""
from __future__ import annotations

import builtins
from collections.abc import Callable, Mapping, Sequence

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from kernlint.frontend.positions import ast_positions

_BUILTINS = frozenset(dir(builtins))


def _dotted(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr.value}" if base else None
    return None


class _Bindings:
    """Import aliases, def/class paths and module globals, from statements only.

    It walks statement lists (module, function and class bodies, compound statements) and never
    descends into expressions, which keeps it far cheaper than a full CST visit.
    """

    def __init__(self, module: cst.Module) -> None:
        self.imports: dict[str, str] = {}
        self.defs: dict[str, str] = {}
        # names bound to two different things (two imports, an import and an assignment), and imports or defs
        # under an `if`/`try` (version or backend guards): a rule that must hold for every reading skips them
        self.ambiguous: set[str] = set()
        self.conditional: set[str] = set()
        self._guards = 0
        self._body(module.body, [])

    def _bind_import(self, local: str, full: str) -> None:
        if self.imports.get(local, full) != full or local in self.defs:
            self.ambiguous.add(local)
        self.imports[local] = full
        if self._guards:
            self.conditional.add(local)

    def _body(self, statements: Sequence[cst.CSTNode], scope: list[str]) -> None:
        for stmt in statements:
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, cst.Import):
                        self._import(small)
                    elif isinstance(small, cst.ImportFrom):
                        self._import_from(small)
                    elif not scope and isinstance(small, (cst.Assign, cst.AnnAssign)):
                        targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
                        for t in targets:
                            if isinstance(t, cst.Name):
                                self.defs.setdefault(t.value, t.value)
                                if t.value in self.imports:
                                    self.ambiguous.add(t.value)
            elif isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
                self.defs.setdefault(stmt.name.value, ".".join([*scope, stmt.name.value]))
                if self._guards:
                    self.conditional.add(".".join([*scope, stmt.name.value]))
                if not scope and stmt.name.value in self.imports:
                    self.ambiguous.add(stmt.name.value)
                self._suite(stmt.body, [*scope, stmt.name.value])
            elif isinstance(stmt, cst.BaseCompoundStatement):
                guard = isinstance(stmt, (cst.If, cst.Try, cst.TryStar))
                self._guards += guard
                for suite in _suites(stmt):
                    self._suite(suite, scope)
                self._guards -= guard

    def _suite(self, suite: cst.BaseSuite, scope: list[str]) -> None:
        if isinstance(suite, cst.IndentedBlock):
            self._body(suite.body, scope)
        elif isinstance(suite, cst.SimpleStatementSuite):
            self._body([cst.SimpleStatementLine(body=suite.body)], scope)

    def _import(self, node: cst.Import) -> None:
        for alias in node.names:
            full = _dotted(alias.name)
            if full is None:
                continue
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                self._bind_import(alias.asname.name.value, full)
            else:  # `import triton.language` binds `triton`
                head = full.split(".")[0]
                self._bind_import(head, head)

    def _import_from(self, node: cst.ImportFrom) -> None:
        if isinstance(node.names, cst.ImportStar):
            return
        module = _dotted(node.module) if node.module is not None else ""
        dots = "." * len(node.relative)
        prefix = f"{dots}{module}" if module else dots
        for alias in node.names:
            name = _dotted(alias.name)
            if name is None:
                continue
            local = alias.asname.name.value if alias.asname is not None and isinstance(
                alias.asname.name, cst.Name) else name
            sep = "" if prefix.endswith(".") else "."
            self._bind_import(local, f"{prefix}{sep}{name}" if prefix else name)


def _suites(stmt: cst.BaseCompoundStatement) -> list[cst.BaseSuite]:
    """Every statement suite directly inside a compound statement (if/elif/else, loops, try, with, match)."""
    if isinstance(stmt, cst.Match):   # no body of its own: one suite per case
        return [case.body for case in stmt.cases]
    out: list[cst.BaseSuite] = [stmt.body]
    for attr in ("orelse", "finalbody"):
        extra = getattr(stmt, attr, None)
        while extra is not None:
            if isinstance(extra, cst.If):
                out.append(extra.body)
                extra = extra.orelse
            else:
                out.append(extra.body)
                extra = None
    for handler in getattr(stmt, "handlers", ()):
        out.append(handler.body)
    return out


class NameResolver:
    """Answers "which fully qualified names can this expression refer to?" and "where is it?"."""

    def __init__(self, wrapper: MetadataWrapper, package: str = "", text: str | None = None) -> None:
        self._wrapper, self._text = wrapper, text
        self._position_map: Mapping[cst.CSTNode, CodeRange] | None = None
        self._package = package
        bindings = _Bindings(wrapper.module)
        self._imports = bindings.imports
        self._defs = bindings.defs
        self.ambiguous = frozenset(bindings.ambiguous)
        self.conditional = frozenset(bindings.conditional)

    @property
    def _positions(self) -> Mapping[cst.CSTNode, CodeRange]:
        """Positions are computed on first use: most files of a repository have no kernel or launch, so
        nothing ever asks where one of their nodes is."""
        if self._position_map is None:
            fast = ast_positions(self._wrapper.module, self._text) if self._text is not None else None
            self._position_map = fast if fast is not None else self._wrapper.resolve(PositionProvider)
        return self._position_map

    def qualnames(self, node: cst.CSTNode) -> frozenset[str]:
        name = self._resolve(node)
        return frozenset((self._absolute(name),)) if name else frozenset()

    def _resolve(self, node: cst.CSTNode) -> str | None:
        if isinstance(node, cst.Decorator):
            return self._resolve(node.decorator)
        if isinstance(node, cst.Name):
            if node.value in self._imports:
                return self._imports[node.value]
            if node.value in self._defs:
                return self._defs[node.value]
            if node.value in _BUILTINS:
                return f"builtins.{node.value}"
            return None
        if isinstance(node, cst.Attribute):
            base = self._resolve(node.value)
            return f"{base}.{node.attr.value}" if base else None
        return None

    def _absolute(self, name: str) -> str:
        if not name.startswith("."):
            return name
        stripped = name.lstrip(".")
        parts = self._package.split(".") if self._package else []
        up = len(name) - len(stripped) - 1
        base = parts[: len(parts) - up] if up else parts
        return ".".join([*base, stripped]) if base else stripped

    def is_ambiguous(self, name: str) -> bool:
        """`name` is bound to different things in different places of the file (flow decides which)."""
        return name in self.ambiguous

    def is_conditional(self, name: str) -> bool:
        """`name` is imported, or the def with this dotted path is defined, under an `if` or `try`."""
        return name in self.conditional

    def follow_imports(self, resolve: Callable[[str], str]) -> None:
        """Rebind each import to what `resolve` says it is (a name a project module re-exports, followed to
        the module that defines it)."""
        for local, target in self._imports.items():
            self._imports[local] = resolve(self._absolute(target))

    def refers_to(self, node: cst.CSTNode, *names: str) -> bool:
        return not self.qualnames(node).isdisjoint(names)

    def range(self, node: cst.CSTNode) -> CodeRange | None:
        return self._positions.get(node)

    def line(self, node: cst.CSTNode, default: int = 1) -> int:
        """Start line; `default` for node kinds without a recorded position (see frontend.positions)."""
        pos = self._positions.get(node)
        return pos.start.line if pos is not None else default

    def col(self, node: cst.CSTNode) -> int:
        pos = self._positions.get(node)
        return pos.start.column if pos is not None else 0
