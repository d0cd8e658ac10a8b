"""Calls inside Helion device loops: `hl.*`, torch functions and tensor methods → graph ops.

Helion traces device code with PyTorch semantics (torch.addmm, torch.sum(dim=, keepdim=), `.to()`),
then emits Triton; each call maps onto the op Triton would get (dot, reduce, elementwise, cast, full).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import libcst as cst

from kernlint.lowering import tl_calls, tl_reductions
from kernlint.lowering.lower import CV, DT, HelperRef, Tup
from kernlint.ir.nodes import OpKind, Value
from kernlint.ir.symbolic import Const, Expr, Unknown

if TYPE_CHECKING:
    from kernlint.lowering.helion_lower import HelionLowerer

POINTWISE = {
    "exp", "exp2", "log", "log2", "log1p", "sqrt", "rsqrt", "abs", "sigmoid", "sin", "cos", "tanh", "erf",
    "floor", "ceil", "maximum", "minimum", "relu", "silu", "gelu", "neg", "reciprocal", "pow", "square",
    "clamp", "clip", "sign", "expm1", "add", "sub", "mul", "div", "true_divide", "where", "leaky_relu",
    "softplus", "logsigmoid", "fma", "lerp", "triu", "tril",
}
REDUCE = {"sum": "sum", "amax": "max", "amin": "min", "max": "max", "min": "min", "argmax": "argmax",
          "argmin": "argmin", "prod": "prod", "mean": "sum", "var": "sum", "logsumexp": "max", "norm": "sum"}
CASTS = {"float": "fp32", "half": "fp16", "bfloat16": "bf16", "double": "fp64", "int": "i32", "long": "i64",
         "bool": "i1"}
VIEWS = {"view", "reshape", "unsqueeze", "squeeze", "expand", "permute", "transpose", "t", "contiguous",
         "flatten", "broadcast_to", "expand_as"}
_PREFIXES = ("helion.language.", "torch.nn.functional.", "torch.special.", "torch.")


def _short(names: frozenset[str]) -> tuple[str, str] | None:
    for qn in sorted(names):
        for prefix in _PREFIXES:
            if qn.startswith(prefix):
                return prefix, qn[len(prefix):].rpartition(".")[2]
    return None


def _kw(kwargs: dict[str, Any], *names: str) -> Any:
    return next((kwargs[n] for n in names if n in kwargs), None)


def _dims(lo: "HelionLowerer", shape: Any) -> tuple[Expr, ...] | None:
    from kernlint.lowering.helion_lower import HTile

    items = shape.items if isinstance(shape, Tup) else (shape,)
    out: list[Expr] = []
    for it in items:
        if isinstance(it, HTile):
            out.append(it.block)
        elif isinstance(it, CV):
            # `hl.zeros([tile, n])` with a host extent: a full-extent dimension, i.e. a reduction dim.
            syms = it.expr.free_symbols()
            out.append(lo.rdim_for(it.expr, 0) if syms and syms <= set(lo.extents) else it.expr)
        else:
            return None
    return tuple(out)


def reduce(lo: "HelionLowerer", x: Any, fn: str, args: tuple[Any, ...], kwargs: dict[str, Any], line: int) -> Any:
    if not isinstance(x, Value):
        return Unknown(fn)
    dim = _kw(kwargs, "dim", "axis")
    if dim is None and args:
        dim = args[0]
    if isinstance(dim, Tup) and len(dim.items) == 1:
        dim = dim.items[0]
    keep = _kw(kwargs, "keepdim", "keep_dims")
    if dim is None:  # a full reduction: flatten then reduce (Triton reduces axis None the same way)
        dim = CV(Const(None))
    out = tl_reductions.reduce(lo, (x, dim), {"keep_dims": keep} if keep is not None else {}, line, fn=REDUCE[fn])
    if fn in ("mean", "var", "norm") and isinstance(out, Value):
        out = tl_calls.tile(lo, OpKind.ELEMENTWISE, (out,), line, out.shape, out.dtype, fn="/")
    if fn == "logsumexp" and isinstance(out, Value):  # max, exp(x - max), sum, log
        e = tl_calls.tile(lo, OpKind.ELEMENTWISE, (x,), line, x.shape, x.dtype, fn="exp")
        out = tl_reductions.reduce(lo, (e, dim), {"keep_dims": keep} if keep is not None else {}, line, fn="sum")
    if (fn in ("max", "min") and _kw(kwargs, "dim") is not None) or (fn in ("max", "min") and args):
        idx = tl_reductions.reduce(lo, (x, dim), {"keep_dims": keep} if keep is not None else {}, line, fn="argmax")
        return Tup((out, idx))  # torch.max(x, dim) returns (values, indices)
    return out


def softmax(lo: "HelionLowerer", x: Any, args: tuple[Any, ...], kwargs: dict[str, Any], line: int) -> Any:
    if not isinstance(x, Value):
        return Unknown("softmax")
    dim = _kw(kwargs, "dim") or (args[0] if args else CV(Const(-1)))
    keep = {"keep_dims": CV(Const(True))}
    m = tl_reductions.reduce(lo, (x, dim), keep, line, fn="max")
    e = tl_calls.tile(lo, OpKind.ELEMENTWISE, (x, m), line, x.shape, "fp32", fn="exp")
    s = tl_reductions.reduce(lo, (e, dim), keep, line, fn="sum")
    return tl_calls.tile(lo, OpKind.ELEMENTWISE, (e, s), line, x.shape, "fp32", fn="/")


def matmul(lo: "HelionLowerer", a: Any, b: Any, acc: Any, line: int, out_dtype: Any = None, cast_back: bool = False) -> Any:
    kw = {"out_dtype": out_dtype} if isinstance(out_dtype, DT) else {}
    out = tl_calls.dot(lo, (a, b, acc if isinstance(acc, Value) else None), kw, line)
    if cast_back and isinstance(out, Value) and isinstance(a, Value) and acc is None and out.dtype != a.dtype:
        # torch.matmul of fp16 tensors is fp16: Helion accumulates in fp32 and casts the result.
        out = tl_calls.tile(lo, OpKind.CAST, (out,), line, out.shape, a.dtype)
    return out


def torch_op(lo: "HelionLowerer", name: str, x: Any, args: tuple[Any, ...], kwargs: dict[str, Any],
             line: int) -> Any:
    """`name` applied to `x` (function first argument or method receiver); None when not handled."""
    if name in ("to", "type"):
        dt = args[0] if args else _kw(kwargs, "dtype")
        return tl_calls.cast(lo, (x, dt), {}, line)
    if name in CASTS:
        return tl_calls.cast(lo, (x, DT(CASTS[name])), {}, line)
    if name in REDUCE:
        if name in ("max", "min") and args and isinstance(args[0], Value):
            return tl_calls.elementwise(lo, (x, args[0]), {}, line, fn="maximum" if name == "max" else "minimum")
        return reduce(lo, x, name, args, kwargs, line)
    if name in ("softmax", "log_softmax"):
        return softmax(lo, x, args, kwargs, line)
    if name in ("matmul", "mm", "bmm"):
        return matmul(lo, x, args[0] if args else None, None, line, cast_back=True)
    if name in ("addmm", "baddbmm"):
        return matmul(lo, args[0] if args else None, args[1] if len(args) > 1 else None, x, line)
    if name in ("zeros_like", "ones_like", "full_like", "empty_like", "new_zeros", "new_empty", "new_full"):
        return tl_calls.like(lo, (x,), {k: v for k, v in kwargs.items() if k == "dtype"}, line)
    if name == "transpose" and isinstance(x, Value) and len(args) == 2 and x.shape:
        # Fix (helion truth, benchmarks/helion_truth.py): torch's transpose(d0, d1) swaps two dims; reversing
        # them all turned attention's k[b, n, d].transpose(1, 2) into [d, n, b], so bmm got N = the batch tile.
        d0, d1 = (a.expr.evaluate({}) if isinstance(a, CV) else None for a in args)
        if isinstance(d0, int) and isinstance(d1, int):
            shape = list(x.shape)
            i, j = d0 % len(shape), d1 % len(shape)
            shape[i], shape[j] = shape[j], shape[i]
            return tl_calls.tile(lo, OpKind.TRANS, (x,), line, tuple(shape), x.dtype)
    if name == "permute" and isinstance(x, Value) and args:  # same fix: permute keeps its order
        return tl_calls.reshape_like(lo, (x, *args), {}, line, kind="permute")
    if name in ("t", "transpose", "permute") and isinstance(x, Value):
        return tl_calls.transpose(lo, x, line)
    if name in ("unsqueeze",) and isinstance(x, Value) and args:
        return tl_calls.reshape_like(lo, (x, args[0]), {}, line, kind="expand_dims")
    if name in VIEWS and isinstance(x, Value):
        shape = _dims(lo, Tup(args) if len(args) != 1 else args[0]) if args else None
        if shape is None or name in ("contiguous", "squeeze", "flatten", "expand_as"):
            return tl_calls.tile(lo, OpKind.VIEW, (x,), line, x.shape, x.dtype)
        return tl_calls.tile(lo, OpKind.VIEW if name in ("expand", "broadcast_to") else "reshape", (x,), line, shape,
                             x.dtype)
    if name == "where":
        return tl_calls.where(lo, (x, *args), {}, line)
    if name in POINTWISE:
        return tl_calls.elementwise(lo, (x, *args, *kwargs.values()), {}, line, fn=name)
    return None


def device_call(lo: "HelionLowerer", node: cst.Call, env: dict[str, Any]) -> Any:
    if not lo.device:
        return lo.host_expr(node, env)  # host arithmetic (`1 / math.sqrt(d)`): not device code
    line = lo.line(node)
    func = node.func
    names = lo.module.names.qualnames(func)
    short = _short(names)
    # Host-only helpers used where they make sense (a size call inside a loop bound, a nested hl.tile
    # outside a for): defer to the host evaluator.
    if short and short[0] == "helion.language." and short[1] in ("specialize", "register_block_size"):
        return lo.host_expr(node, env)
    if isinstance(func, cst.Attribute) and func.attr.value == "size":
        return lo.host_expr(node, env)
    args = tuple(lo.expr(a.value, env) for a in node.args if a.keyword is None and not a.star)
    kwargs = {a.keyword.value: lo.expr(a.value, env) for a in node.args if a.keyword is not None}
    # Method on a device value: x.to(torch.float32), x.sum(-1), acc.exp()
    if isinstance(func, cst.Attribute) and (short is None or not names):
        obj = lo.expr(func.value, env)
        if isinstance(obj, Value):
            out = torch_op(lo, func.attr.value, obj, args, kwargs, line)
            if out is not None:
                return out
            lo.note(line, f"method `.{func.attr.value}()` in a Helion device loop")
            return Unknown(func.attr.value)
    if short is None:
        target = lo.expr(func, env) if isinstance(func, cst.Name) and func.value in env else None
        if isinstance(target, HelperRef):
            return lo.inline(target.jit, list(args), kwargs, line)
        label = sorted(names)[0] if names else cst.Module([]).code_for_node(func)
        if label in ("builtins.float", "builtins.int") and len(args) == 1 and isinstance(args[0], CV):
            raw = args[0].expr.evaluate({})  # float("-inf") for a running max: a compile-time constant
            try:
                return CV(Const(float(raw) if label.endswith("float") else int(raw)))  # type: ignore[arg-type]
            except (TypeError, ValueError):
                return Unknown(label)
        if label in ("builtins.min", "builtins.max") and all(isinstance(a, CV) for a in args):
            return tl_calls.elementwise(lo, args, {}, line, fn="maximum" if label.endswith("max") else "minimum")
        lo.note(line, f"call to `{label}` in a Helion device loop")
        values = [a for a in (*args, *kwargs.values()) if isinstance(a, Value)]
        return tl_calls.elementwise(lo, tuple(values), {}, line, fn=label) if values else Unknown(label)
    prefix, name = short
    if prefix == "helion.language.":
        if name in ("zeros", "full"):
            shape = _dims(lo, args[0] if args else _kw(kwargs, "shape"))
            dt = _kw(kwargs, "dtype") or (args[2] if name == "full" and len(args) > 2 else None)
            if shape is None:
                lo.note(line, f"hl.{name} with a shape kernlint cannot read")
                return Unknown(name)
            return tl_calls.tile(lo, OpKind.FULL, (), line, shape, dt.dtype if isinstance(dt, DT) else "fp32")
        if name == "dot":
            acc = args[2] if len(args) > 2 else _kw(kwargs, "acc")
            return matmul(lo, args[0] if args else None, args[1] if len(args) > 1 else None, acc, line,
                          _kw(kwargs, "out_dtype"))
        if name == "tile_index" and args:
            from kernlint.lowering.helion_lower import HTile

            return lo.tile_index(args[0], line)[0] if isinstance(args[0], HTile) else Unknown("tile_index")
        if name in ("arange",) and args and isinstance(args[-1], CV):
            return tl_calls.tile(lo, OpKind.ARANGE, (), line, (args[-1].expr,), "i32")
        if name in ("tile", "grid"):
            lo.note(line, f"hl.{name} outside a `for` statement")
            return Unknown(name)
        lo.note(line, f"`hl.{name}`")
        values = tuple(a for a in (*args, *kwargs.values()) if isinstance(a, Value))
        return tl_calls.elementwise(lo, values, {}, line, fn=f"hl.{name}") if values else Unknown(name)
    x = args[0] if args else None
    out = torch_op(lo, name, x, args[1:], kwargs, line)
    if out is not None:
        return out
    lo.note(line, f"`{prefix}{name}` in a Helion device loop")
    values = tuple(a for a in (*args, *kwargs.values()) if isinstance(a, Value))
    return tl_calls.elementwise(lo, values, {}, line, fn=name) if values else Unknown(name)
