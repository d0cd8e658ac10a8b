"""Which kernel parameters are pointers, from how the source uses them (no naming conventions).

A parameter is a pointer when it reaches the pointer operand of `tl.load`/`tl.store`/`tl.atomic_*`, or the
base of `tl.make_block_ptr`/`tl.make_tensor_descriptor`, through `+`/`-` and local aliases
(`X += row * stride`, `a_ptrs = a_ptr + offs`), or an argument of a jit helper whose own parameter is a
pointer by the same rule (flash attention's `k_ptrs = K + ...` handed to the helper that loads them).
Multiplied names (strides) are integers.
"""
from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from kernlint.frontend.facts import JitFunction
from kernlint.lowering.entries import HelperIndex, ModuleRef
from kernlint.frontend.walk import iter_nodes

_POINTER_CALLS = ("load", "store", "atomic_add", "atomic_max", "atomic_min", "atomic_cas", "atomic_xchg",
                  "atomic_and", "atomic_or", "atomic_xor", "make_block_ptr", "make_tensor_descriptor")


def additive_names(node: cst.BaseExpression) -> set[str]:
    """Names an address expression is a sum of (`X + row * stride` → X), through casts and hints."""
    if isinstance(node, cst.Name):
        return {node.value}
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
        return additive_names(node.left) | additive_names(node.right)
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Subtract):
        return additive_names(node.left)   # `int - pointer` is not an address: only the minuend can be one
    if isinstance(node, cst.Subscript):
        return additive_names(node.value)
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in (
            "to", "multiple_of", "max_contiguous"):
        return additive_names(node.func.value)
    return set()


# A call's callee when it is a jit helper: the helper and the names of its pointer parameters
HelperPointers = Callable[[cst.Call], "tuple[JitFunction, set[str]] | None"]


def pointer_params(jit: JitFunction, helper_pointers: HelperPointers | None = None) -> set[str]:
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
                helper = helper_pointers(node) if helper_pointers is not None else None
                if helper is not None:
                    roots.update(args_passed_as(node, *helper))
                continue
            target = next((a.value for a in node.args if a.keyword is not None
                           and a.keyword.value in ("pointer", "base")), None)
            if target is None:
                positional = [a for a in node.args if a.keyword is None]
                target = positional[0].value if positional else None
            if target is not None:
                roots.update(additive_names(target))
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
                new = additive_names(value) - roots
                if new:
                    roots |= new
                    changed = True
    params = {p.name for p in jit.params if not p.is_constexpr}
    return roots & params


def args_passed_as(call: cst.Call, helper: JitFunction, params: set[str]) -> set[str]:
    """Names whose sum a call passes to the helper's parameters `params` (positional by index, or by keyword):
    for `params` the helper's pointers, the caller's names that are pointers too."""
    by_index = {p.index: p.name for p in helper.params}
    out: set[str] = set()
    for i, arg in enumerate(call.args):
        if arg.star:
            break  # *args: positions past it are unknown
        param = arg.keyword.value if arg.keyword is not None else by_index.get(i)
        if param in params:
            out |= additive_names(arg.value)
    return out


def helper_lookup(helpers: HelperIndex, module: ModuleRef, max_depth: int, depth: int = 0,
                  memo: dict[str, set[str]] | None = None) -> HelperPointers:
    """Resolves a call in `module` to a jit helper and its pointer parameters, found the same way through the
    helper's own helpers (as deep as inlining goes), so a kernel parameter that only a helper loads through
    is a pointer too."""
    seen: dict[str, set[str]] = {} if memo is None else memo

    def lookup(call: cst.Call) -> tuple[JitFunction, set[str]] | None:
        for qn in module.names.qualnames(call.func):
            for full in (qn, f"{module.module_name}.{qn}"):
                if full not in helpers or depth >= max_depth:
                    continue
                helper, home = helpers[full]
                if full not in seen:
                    seen[full] = set()   # a helper that calls itself sees no pointers through itself
                    seen[full] = pointer_params(helper, helper_lookup(helpers, home, max_depth, depth + 1, seen))
                return helper, seen[full]
        return None
    return lookup



# -- element types the source implies --------------------------------------------------------------------------
# What a pointer points to, when no `--arg` says: evidence in the kernel body, before the fp16 default.


def _dtype_name(node: cst.BaseExpression | None) -> str | None:
    """`tl.int32` / `triton.language.float8e4nv` / `int32` (imported) → the short name, else None."""
    from kernlint.ir.dtypes import DTYPE_NAMES
    if isinstance(node, cst.Attribute):
        return DTYPE_NAMES.get(node.attr.value)
    if isinstance(node, cst.Name):
        return DTYPE_NAMES.get(node.value)
    return None


def _arg(call: cst.Call, index: int, keyword: str) -> cst.BaseExpression | None:
    for a in call.args:
        if a.keyword is not None and a.keyword.value == keyword:
            return a.value
    positional = [a for a in call.args if a.keyword is None and not a.star]
    return positional[index].value if index < len(positional) else None


def _callee(call: cst.Call) -> str:
    func = call.func
    return func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""


def infer_pointees(jit: JitFunction) -> dict[str, tuple[str, str]]:
    """Pointer parameter → (element type, why) from the kernel body:
    * an int32 accumulator fed by `tl.dot` of loaded tiles (`acc = tl.zeros(..., dtype=tl.int32)`,
      `acc += tl.dot(a, b)`, or `out_dtype=tl.int32`): the operands are 8-bit integers (Triton's integer
      dot takes int8 operands only, and accumulates them in int32);
    * a value converted with `.to(tl.X)` and stored through a pointer (`tl.store(C + offs, c.to(tl.float8e4nv))`):
      the pointer holds X."""
    assigns: dict[str, list[cst.BaseExpression]] = {}
    calls: list[cst.Call] = []
    accumulated: list[tuple[str, cst.Call]] = []   # (accumulator name, the dot added into it)
    for node in iter_nodes(jit.node.body):
        kind = type(node)
        if kind is cst.Call:
            calls.append(node)  # type: ignore[arg-type]
        elif kind is cst.Assign:
            for t in node.targets:  # type: ignore[attr-defined]
                if isinstance(t.target, cst.Name):
                    assigns.setdefault(t.target.value, []).append(node.value)  # type: ignore[attr-defined]
                    value = node.value  # type: ignore[attr-defined]
                    if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Add):
                        for side in (value.left, value.right):
                            if isinstance(side, cst.Call) and _callee(side) == "dot":
                                accumulated.append((t.target.value, side))
        elif kind is cst.AugAssign and isinstance(node.target, cst.Name):  # type: ignore[attr-defined]
            assigns.setdefault(node.target.value, []).append(node.value)  # type: ignore[attr-defined]
            if isinstance(node.value, cst.Call) and _callee(node.value) == "dot":  # type: ignore[attr-defined]
                accumulated.append((node.target.value, node.value))  # type: ignore[attr-defined]

    def int32_acc(name: str) -> bool:
        return any(isinstance(v, cst.Call) and _callee(v) in ("zeros", "full")
                   and _dtype_name(_arg(v, 1 if _callee(v) == "zeros" else 2, "dtype")) == "i32"
                   for v in assigns.get(name, ()))

    def roots(expr: cst.BaseExpression, depth: int = 0) -> set[str]:
        """Parameters an address expression is a sum of, through local aliases."""
        out: set[str] = set()
        for name in additive_names(expr):
            out.add(name)
            if depth < 8:
                for value in assigns.get(name, ()):
                    out |= roots(value, depth + 1)
        return out

    def loaded_from(expr: cst.BaseExpression | None, depth: int = 0) -> set[str]:
        """Pointers a tile was loaded through (`a = tl.load(a_ptrs, ...)`, `tl.dot(tl.load(p), ...)`)."""
        if isinstance(expr, cst.Call) and _callee(expr) == "load":
            target = _arg(expr, 0, "pointer")
            return roots(target) if target is not None else set()
        if isinstance(expr, cst.Name) and depth < 8:
            return {r for v in assigns.get(expr.value, ()) for r in loaded_from(v, depth + 1)}
        return set()

    def converted_to(expr: cst.BaseExpression | None, depth: int = 0) -> str | None:
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "to":
            return _dtype_name(_arg(expr, 0, "dtype"))
        if isinstance(expr, cst.Name) and depth < 8:
            found = {converted_to(v, depth + 1) for v in assigns.get(expr.value, ())}
            return found.pop() if len(found) == 1 else None
        return None

    params = {p.name for p in jit.params if not p.is_constexpr}
    out: dict[str, tuple[str, str]] = {}
    for call in calls:
        name = _callee(call)
        if name == "dot":
            acc = _arg(call, 2, "acc")
            int_dot = _dtype_name(_arg(call, 4, "out_dtype")) == "i32" or (
                isinstance(acc, cst.Name) and int32_acc(acc.value)) or any(
                d is call and int32_acc(a) for a, d in accumulated)
            if int_dot:
                for operand in (_arg(call, 0, "input"), _arg(call, 1, "other")):
                    for p in loaded_from(operand) & params:
                        out.setdefault(p, ("i8", "an operand of tl.dot into an int32 accumulator"))
        elif name == "store":
            dtype = converted_to(_arg(call, 1, "value"))
            target = _arg(call, 0, "pointer")
            if dtype is not None and target is not None:
                for p in roots(target) & params:
                    out.setdefault(p, (dtype, f"stores a value converted with .to({dtype})"))
    return out
