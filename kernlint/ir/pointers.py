"""Which kernel parameters are pointers, from how the source uses them (no naming conventions).

A parameter is a pointer when it reaches the pointer operand of `tl.load`/`tl.store`/`tl.atomic_*`, or the
base of `tl.make_block_ptr`/`tl.make_tensor_descriptor`, through `+`/`-` and local aliases
(`X += row * stride`, `a_ptrs = a_ptr + offs`). Multiplied names (strides) are integers.
"""
from __future__ import annotations

import libcst as cst

from kernlint.frontend.facts import JitFunction
from kernlint.frontend.walk import iter_nodes

_POINTER_CALLS = ("load", "store", "atomic_add", "atomic_max", "atomic_min", "atomic_cas", "atomic_xchg",
                  "atomic_and", "atomic_or", "atomic_xor", "make_block_ptr", "make_tensor_descriptor")


def _additive_names(node: cst.BaseExpression) -> set[str]:
    if isinstance(node, cst.Name):
        return {node.value}
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Add, cst.Subtract)):
        return _additive_names(node.left) | _additive_names(node.right)
    if isinstance(node, cst.Subscript):
        return _additive_names(node.value)
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in (
            "to", "multiple_of", "max_contiguous"):
        return _additive_names(node.func.value)
    return set()


def pointer_params(jit: JitFunction) -> set[str]:
    roots: set[str] = set()
    assigns: list[tuple[str, cst.BaseExpression]] = []

    for node in iter_nodes(jit.node.body):
        # `type(...) is`: libcst nodes are final classes, and isinstance through their ABC metaclass
        # costs several times more on every node of the kernel.
        kind = type(node)
        if kind is cst.Call:
            func = node.func
            name = func.attr.value if isinstance(func, cst.Attribute) else (
                func.value if isinstance(func, cst.Name) else "")
            if name not in _POINTER_CALLS:
                continue
            target = next((a.value for a in node.args if a.keyword is not None
                           and a.keyword.value in ("pointer", "base")), None)
            if target is None:
                positional = [a for a in node.args if a.keyword is None]
                target = positional[0].value if positional else None
            if target is not None:
                roots.update(_additive_names(target))
        elif kind is cst.Assign:
            for t in node.targets:  # type: ignore[attr-defined]
                if isinstance(t.target, cst.Name):
                    assigns.append((t.target.value, node.value))
        elif kind is cst.AugAssign and isinstance(node.target, cst.Name):  # type: ignore[attr-defined]
            assigns.append((node.target.value, node.value))
    changed = True
    while changed:
        changed = False
        for name, value in assigns:
            if name in roots:
                new = _additive_names(value) - roots
                if new:
                    roots |= new
                    changed = True
    params = {p.name for p in jit.params if not p.is_constexpr}
    return roots & params
