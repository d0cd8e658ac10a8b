"""How the scratch module finds the names a kernel reads (`global_refs`), and re-binds those that no plain
top-level statement defines.

Real packages pick their Triton helpers at import time, so the binding sits inside an ``if`` or ``try``:

  * liger-kernel ``ops/dyt.py``: ``try: from triton.language.extra.libdevice import tanh`` / ``except
    ModuleNotFoundError: from triton.language.extra.cuda.libdevice import tanh``, under a version check;
  * unsloth ``kernels/utils.py``: ``triton_tanh = libdevice.tanh`` (or ``tl.math.tanh`` on old Triton), then
    ``from unsloth.kernels.utils import triton_tanh`` in the kernel's file;
  * fla ``gdn2/chunk_intra.py``: ``if IS_TF32_SUPPORTED: SOLVE_TRIL_DOT_PRECISION = tl.constexpr('tf32')``
    ``else: ... tl.constexpr('ieee')``, where the condition is computed by torch at import.

Calibrate never runs that code, so it cannot evaluate the conditions. A name bound to a Triton object is
re-bound by trying each alternative import in turn against the installed Triton (vendor-specific paths
last), which is what the package's own fallbacks do. A constant bound differently per branch takes the
first branch whose value is portable, and the builder states that assumption in the calibrate output.
"""
from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from kernlint.frontend.names import NameResolver

# Paths of other vendors' backends: tried after the generic and CUDA ones (the scratch module is compiled
# for NVIDIA targets)
_OTHER_VENDORS = (".intel.", ".hip.", ".amd.", ".ascend.", ".npu.", ".musa.")


def code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def global_refs(node: cst.CSTNode, names: NameResolver) -> list[tuple[str, str]]:
    """(local name, qualified name) of every module-level or imported name an expression/function reads."""
    found: list[tuple[str, str]] = []

    class _V(cst.CSTVisitor):
        def visit_Attribute(self, n: cst.Attribute) -> bool:
            n.value.visit(self)  # `tl.load`: only `tl` is a reference; `.load` is an attribute name
            return False

        def visit_Arg(self, n: cst.Arg) -> bool:
            n.value.visit(self)  # skip the keyword name of `f(x=1)`
            return False

        def visit_FunctionDef(self, n: cst.FunctionDef) -> bool:
            # not its own name: a method `NS.ka` would otherwise read as a reference to a module-level `ka`
            for part in (*n.decorators, n.params, n.body, *([n.returns] if n.returns else [])):
                part.visit(self)
            return False

        def visit_Param(self, n: cst.Param) -> bool:
            for part in (n.annotation, n.default):
                if part is not None:
                    part.visit(self)
            return False

        def visit_Name(self, n: cst.Name) -> None:
            for qn in sorted(names.qualnames(n)):
                if "<" not in qn and not qn.startswith("builtins."):
                    found.append((n.value, qn))

    node.visit(_V())
    return list(dict.fromkeys(found))


def module_attribute_reads(node: cst.CSTNode) -> dict[str, set[str]]:
    """Name → the attributes read from it directly (`tle.program_id` → {"tle": {"program_id"}})."""
    out: dict[str, set[str]] = {}
    todo: list[cst.CSTNode] = [node]
    while todo:
        n = todo.pop()
        if isinstance(n, cst.Attribute) and isinstance(n.value, cst.Name):
            out.setdefault(n.value.value, set()).add(n.attr.value)
        todo.extend(n.children)
    return out


def is_triton(qn: str) -> bool:
    return qn == "triton" or qn.startswith("triton.")


def module_level_statements(module: cst.Module) -> Iterator[tuple[cst.BaseSmallStatement, tuple[str, ...]]]:
    """Every small statement run at import time (inside ``if``/``try`` blocks too, not inside functions or
    classes), with the conditions it runs under: the code of the enclosing ``if`` tests, ``not (...)`` for
    an ``else`` branch, ``try``/``except`` for exception handlers."""

    def walk(body: object, conds: tuple[str, ...]) -> Iterator[tuple[cst.BaseSmallStatement, tuple[str, ...]]]:
        for stmt in getattr(body, "body", ()):
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    yield small, conds
            elif isinstance(stmt, cst.If):
                yield from _walk_if(stmt, conds)
            elif isinstance(stmt, cst.Try):
                yield from walk(stmt.body, (*conds, "try"))
                for handler in stmt.handlers:
                    yield from walk(handler.body, (*conds, "except"))
                if stmt.orelse is not None:
                    yield from walk(stmt.orelse.body, (*conds, "try"))

    def _walk_if(stmt: cst.If, conds: tuple[str, ...]) -> Iterator[tuple[cst.BaseSmallStatement, tuple[str, ...]]]:
        test = code(stmt.test)
        yield from walk(stmt.body, (*conds, test))
        other = stmt.orelse
        if isinstance(other, cst.If):
            yield from _walk_if(other, (*conds, f"not ({test})"))
        elif isinstance(other, cst.Else):
            yield from walk(other.body, (*conds, f"not ({test})"))

    yield from walk(module, ())


def import_targets(small: cst.BaseSmallStatement) -> Iterator[tuple[str, str]]:
    """(local name, qualified name) bound by an import statement of triton names."""
    if isinstance(small, cst.Import):
        for alias in small.names:
            full = code(alias.name)
            if alias.asname is not None:
                yield code(alias.asname.name), full
            else:
                yield full.split(".")[0], full.split(".")[0]
    elif isinstance(small, cst.ImportFrom) and not small.relative and small.module is not None \
            and not isinstance(small.names, cst.ImportStar):
        mod = code(small.module)
        for alias in small.names:
            local = code(alias.asname.name) if alias.asname is not None else code(alias.name)
            yield local, f"{mod}.{code(alias.name)}"


def triton_bindings(module: cst.Module, names: NameResolver) -> dict[str, list[str]]:
    """Local name → the Triton objects module-level code may bind it to, in source order: imports of
    triton names and assignments of a triton attribute (``triton_tanh = libdevice.tanh``), top level or
    inside ``if``/``try`` blocks."""
    out: dict[str, list[str]] = {}
    for small, _ in module_level_statements(module):
        pairs: list[tuple[str, str]] = []
        if isinstance(small, (cst.Import, cst.ImportFrom)):
            pairs = [(local, qn) for local, qn in import_targets(small) if is_triton(qn)]
        elif isinstance(small, cst.Assign) and len(small.targets) == 1 \
                and isinstance(small.targets[0].target, cst.Name) \
                and isinstance(small.value, (cst.Name, cst.Attribute)):
            qns = sorted(q for q in names.qualnames(small.value) if is_triton(q))
            pairs = [(small.targets[0].target.value, q) for q in qns]
        for local, qn in pairs:
            alternatives = out.setdefault(local, [])
            if qn not in alternatives:
                alternatives.append(qn)
    return out


def alias_import(local: str, alternatives: list[str]) -> str:
    """Source that binds ``local`` to the first of ``alternatives`` the installed Triton has."""
    ordered = sorted(alternatives, key=lambda qn: any(v in qn + "." for v in _OTHER_VENDORS))

    def one(qn: str) -> str:
        if "." not in qn:
            return f"import {qn} as {local}" if qn != local else f"import {qn}"
        parent, _, attr = qn.rpartition(".")
        return f"from {parent} import {attr}" + (f" as {local}" if attr != local else "")

    if len(ordered) == 1:
        return one(ordered[0])
    lines: list[str] = []
    for depth, qn in enumerate(ordered):
        pad = "    " * depth
        if depth < len(ordered) - 1:
            lines += [f"{pad}try:", f"{pad}    {one(qn)}", f"{pad}except ImportError:"]
        else:
            lines.append(f"{pad}{one(qn)}")
    return "\n".join(lines)


def conditional_assignment(module: cst.Module, name: str) -> tuple[cst.Assign | cst.AnnAssign, str] | None:
    """The first assignment of ``name`` that only runs under a condition (``if``/``else``, ``try``), with
    that condition as code; None when the name is not bound that way."""
    for small, conds in module_level_statements(module):
        if not conds:
            continue
        if isinstance(small, cst.Assign) and len(small.targets) == 1 \
                and isinstance(small.targets[0].target, cst.Name) and small.targets[0].target.value == name:
            return small, " and ".join(conds)
        if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name) \
                and small.target.value == name and small.value is not None:
            return small, " and ".join(conds)
    return None
