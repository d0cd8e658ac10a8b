"""Dispatch of calls inside a kernel: `triton.language` functions by qualified name, methods on tiles
(`x.to`, `desc.load`), inlined `@triton.jit` helpers, and subscripts (`x[:, None]`, tuple indexing)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import libcst as cst

from kernlint.ir.dtypes import PHILOX_RESULTS
from kernlint.ir.nodes import OpKind, Value, pointee
from kernlint.ir.symbolic import Const, Expr, Unknown, as_int
from kernlint.lowering.tl_calls import (
    _PREFIXES,
    ELEMENTWISE,
    HANDLERS,
    Handler,
    _values,
    cast,
    elementwise,
    tile,
)
from kernlint.lowering.tl_reductions import REDUCTIONS, SCANS, reduce, scan

if TYPE_CHECKING:
    from kernlint.lowering.lower import Lowerer


def _handler(short: str) -> Handler | None:
    if short in HANDLERS:
        return HANDLERS[short]
    if short in REDUCTIONS:
        return lambda lo, a, k, l: reduce(lo, a, k, l, fn=short)
    if short in SCANS:
        return lambda lo, a, k, l: scan(lo, a, k, l, fn=short)
    if short in ELEMENTWISE:
        return lambda lo, a, k, l: elementwise(lo, a, k, l, fn=short)
    if short in PHILOX_RESULTS:
        return lambda lo, a, k, l: _random(lo, a, k, l, fn=short)
    if short == "pointer_type":
        return _pointer_type
    return None


def _pointer_type(lo: "Lowerer", args: tuple[Any, ...], kw: dict[str, Any], line: int) -> Any:
    """`tl.pointer_type(tl.float16)`: the dtype of `int_value.to(tl.pointer_type(...))` (grouped GEMMs load their
    operand addresses as int64 and cast them)."""
    from kernlint.lowering.lower import DT

    element = args[0] if args else kw.get("element_ty")
    return DT(f"ptr<{element.dtype}>") if isinstance(element, DT) else Unknown("pointer_type")


def _random(lo: "Lowerer", args: tuple[Any, ...], kw: dict[str, Any], line: int, *, fn: str) -> Any:
    values = _values(*args, *kw.values())
    if not values:
        return Unknown(fn)
    shape = max((v.shape for v in values), key=len)
    return tile(lo, OpKind.ELEMENTWISE, values, line, shape, PHILOX_RESULTS[fn], fn=fn)


def _short(qualname: str) -> str | None:
    for prefix in _PREFIXES:
        if qualname.startswith(prefix):
            return qualname[len(prefix):]
    if qualname in ("builtins.min", "builtins.max"):
        return {"builtins.min": "minimum", "builtins.max": "maximum"}[qualname]
    return None


def call(lo: "Lowerer", node: cst.Call, env: dict[str, Any]) -> Any:
    from kernlint.lowering.lower import CV, HelperRef

    line = lo.line(node)
    args = tuple(lo.expr(a.value, env) for a in node.args if a.keyword is None and not a.star)
    kwargs = {a.keyword.value: lo.expr(a.value, env) for a in node.args if a.keyword is not None}
    func = node.func
    # Method call on a tile: x.to(...), x.sum(axis), desc.load([...]), ptr.dtype...
    if isinstance(func, cst.Attribute):
        obj = None
        root = func.value
        while isinstance(root, cst.Attribute):
            root = root.value
        # `x.to(...)`, `tl.load(p).to(...)`: the receiver is a local or an expression, not a module path.
        if not isinstance(root, cst.Name) or root.value in env or not lo.module.names.qualnames(func):
            obj = lo.expr(func.value, env)
        if isinstance(obj, Value):
            method = func.attr.value
            if method == "to":
                return cast(lo, (obj, *args), kwargs, line)
            if obj.dtype.startswith("desc<") and method in ("load", "store"):
                if method == "load":
                    return tile(lo, OpKind.LOAD, (obj,), line, obj.shape, pointee(obj.dtype), block_ptr=True)
                lo.emit(OpKind.STORE, _values(obj, *args), line, None)
                return None
            handler = _handler(method)
            if handler is not None:
                return handler(lo, (obj, *args), kwargs, line)
            lo.note(line, f"method `.{method}()` on a tile")
            return Unknown(method)
    target = lo.expr(func, env) if isinstance(func, cst.Name) and func.value in env else None
    if target is None:
        target = lo.global_name(func)
    if isinstance(target, HelperRef):
        return lo.inline(target.jit, list(args), kwargs, line)
    names = lo.module.names.qualnames(func)
    for qn in sorted(names):
        short = _short(qn)
        handler = _handler(short) if short is not None else None
        if handler is not None:
            return handler(lo, args, kwargs, line)
    if "builtins.range" in names or "builtins.len" in names:
        return Unknown("range")
    if "builtins.print" in names:
        return None  # host-side print inside a kernel (interpreter debugging): no device op
    values = _values(*args, *kwargs.values())
    label = sorted(names)[0] if names else cst.Module([]).code_for_node(func)
    if values:
        # A function from outside the linted tree whose name is a known element-wise math function
        # (`fla.ops.utils.op.exp2`, libdevice wrappers): element-wise, and exactly what it is modelled as.
        last = label.rsplit(".", 1)[-1]
        if last not in ELEMENTWISE and last.removesuffix("_rn").removesuffix("f").removeprefix("fast_") not in ELEMENTWISE:
            lo.note(line, f"call to `{label}` (treated as elementwise)")
        return elementwise(lo, args, kwargs, line, fn=label)
    if all(isinstance(a, CV) for a in args):
        return Unknown(f"call to {label}")
    lo.note(line, f"call to `{label}`")
    return Unknown(label)


def subscript(lo: "Lowerer", node: cst.Subscript, env: dict[str, Any]) -> Any:
    from kernlint.lowering.lower import CV, Tup

    base = lo.expr(node.value, env)
    line = lo.line(node)
    if isinstance(base, Tup) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
        index = lo.expr(node.slice[0].slice.value, env)
        i = as_int(index.expr.evaluate({})) if isinstance(index, CV) else None
        if i is not None and -len(base.items) <= i < len(base.items):
            return base.items[i]
        return Unknown("tuple index")
    if not isinstance(base, Value):
        return base if isinstance(base, Unknown) else Unknown("subscript")
    shape: list[Expr] = []
    dims = iter(base.shape)
    for el in node.slice:
        sl = el.slice
        if isinstance(sl, cst.Index) and isinstance(sl.value, cst.Name) and sl.value.value == "None":
            shape.append(Const(1))
        elif isinstance(sl, cst.Slice):
            shape.append(next(dims, Const(1)))
        else:
            lo.note(line, "indexing a tile with a value")
            return Unknown("tile index")
    shape.extend(dims)
    return tile(lo, OpKind.VIEW, (base,), line, tuple(shape), base.dtype)
