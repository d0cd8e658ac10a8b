"""Lowering of `triton.language` calls, method calls on tiles and subscripts into graph ops."""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any
from collections.abc import Callable

from kernlint.ir.dtypes import literal_dtype, promote
from kernlint.ir.nodes import OpKind, Value, is_pointer, pointee
from kernlint.ir.symbolic import Const, Expr, Unknown, as_int, binary

if TYPE_CHECKING:
    from kernlint.lowering.lower import Lowerer

Handler = Callable[["Lowerer", tuple[Any, ...], dict[str, Any], int], Any]

_PREFIXES = ("triton.language.extra.cuda.libdevice.", "triton.language.extra.libdevice.",
             "triton.language.math.", "triton.language.standard.", "triton.language.core.",
             "triton.language.", "triton.")
ELEMENTWISE = {
    "exp", "exp2", "log", "log2", "log1p", "sqrt", "sqrt_rn", "rsqrt", "abs", "sigmoid", "sin", "cos", "tan",
    "tanh", "erf", "floor", "ceil", "maximum", "minimum", "fma", "div_rn", "fdiv", "clamp", "umulhi",
    "softplus", "pow", "fast_expf", "fast_dividef", "isnan", "isinf", "signbit", "round", "trunc", "expm1",
    "silu", "gelu", "relu", "llrint", "rint", "nearbyint", "copysign", "cdiv_t",
    # libdevice / vendor spellings seen in real kernels (liger, fla, mamba, unsloth)
    "mul", "add", "sub", "div", "int2float", "float2int", "sigmoid_approx", "tanh_approx", "cosf", "sinf",
    "expf", "logf", "exp2f", "log2f", "inline_asm_elementwise", "rsqrtf", "sqrtf", "powf",
}
PASSTHROUGH = {"max_constancy", "constexpr", "assume_aligned"}
NO_RESULT = {"static_assert", "device_assert", "device_print", "static_print", "debug_barrier", "assume",
             "inline_asm_elementwise_noresult"}
ATOMICS = {"atomic_add", "atomic_max", "atomic_min", "atomic_cas", "atomic_xchg", "atomic_and", "atomic_or",
           "atomic_xor"}


def broadcast_shapes(*shapes: tuple[Expr, ...]) -> tuple[Expr, ...]:
    rank = max((len(s) for s in shapes), default=0)
    out: list[Expr] = []
    for i in range(rank):
        dim: Expr = Const(1)
        for s in shapes:
            j = i - (rank - len(s))
            if j < 0:
                continue
            d = s[j]
            if isinstance(dim, Const) and dim.value == 1:
                dim = d
        out.append(dim)
    return tuple(out)


def _arg(args: tuple[Any, ...], kwargs: dict[str, Any], index: int, name: str, default: Any = None) -> Any:
    if name in kwargs:
        return kwargs[name]
    return args[index] if index < len(args) else default


def _shape_of(lo: "Lowerer", entry: Any) -> tuple[Expr, ...] | None:
    from kernlint.lowering.lower import CV, Tup

    if isinstance(entry, CV):
        return (entry.expr,)
    if isinstance(entry, Tup) and all(isinstance(i, CV) for i in entry.items):
        return tuple(i.expr for i in entry.items)
    return None


def _dtype_arg(entry: Any, default: str) -> str:
    from kernlint.lowering.lower import DT

    return entry.dtype if isinstance(entry, DT) else default


def tile(lo: "Lowerer", kind: OpKind, operands: tuple[Value, ...], line: int, shape: tuple[Expr, ...], dtype: str,
         **attrs: Any) -> Value:
    result = lo.emit(kind, operands, line, lo.new_value(shape, dtype), **attrs)
    assert result is not None
    return result


def _values(*entries: Any) -> tuple[Value, ...]:
    return tuple(e for e in entries if isinstance(e, Value))


# -- handlers ---------------------------------------------------------------------------------------
def program_id(lo: "Lowerer", args: tuple[Any, ...], kw: dict[str, Any], line: int, *,
               fn: str = "program_id") -> Any:
    from kernlint.lowering.lower import CV

    axis = _arg(args, kw, 0, "axis")
    ax = as_int(axis.expr.evaluate({})) if isinstance(axis, CV) else None
    return tile(lo, OpKind.PROGRAM_ID, (), line, (), "i32", fn=fn, axis=ax)


def arange(lo: "Lowerer", args: tuple[Any, ...], kw: dict[str, Any], line: int) -> Any:
    from kernlint.lowering.lower import CV

    start, end = _arg(args, kw, 0, "start"), _arg(args, kw, 1, "end")
    if not (isinstance(start, CV) and isinstance(end, CV)):
        lo.note(line, "tl.arange with non-constexpr bounds")
        return Unknown("arange bounds")
    size = binary("-", end.expr, start.expr)
    return tile(lo, OpKind.ARANGE, (), line, (size,), "i32", start=start.expr, end=end.expr)


def full(lo: "Lowerer", args: tuple[Any, ...], kw: dict[str, Any], line: int, *, fill: bool) -> Any:
    shape = _shape_of(lo, _arg(args, kw, 0, "shape"))
    dtype = _dtype_arg(_arg(args, kw, 2 if fill else 1, "dtype"), "fp32")
    if shape is None:
        lo.note(line, "tl.zeros/tl.full with a shape that is not constexpr")
        return Unknown("shape")
    # tl.zeros: a zero accumulator lets Triton's combine move a dot to the add it feeds (smem_straight.py)
    return tile(lo, OpKind.FULL, (), line, shape, dtype, zeros=not fill)


def like(lo: "Lowerer", args: tuple[Any, ...], kw: dict[str, Any], line: int) -> Any:
    src = _arg(args, kw, 0, "input")
    if not isinstance(src, Value):
        return Unknown("zeros_like of unknown")
    return tile(lo, OpKind.FULL, (), line, src.shape, _dtype_arg(kw.get("dtype"), src.dtype))


def load(lo: "Lowerer", args: tuple[Any, ...], kw: dict[str, Any], line: int) -> Any:
    ptr = _arg(args, kw, 0, "pointer")
    mask, other = _arg(args, kw, 1, "mask"), _arg(args, kw, 2, "other")
    if not isinstance(ptr, Value):
        lo.note(line, "tl.load from something not recognised as a pointer")
        return Unknown("load")
    if not is_pointer(ptr.dtype):
        # A pointer that reached here through a helper's parameter (pointer detection is per function):
        # treat it as a pointer of the default element type, and say so.
        note = f"pointer at line {line}: *{lo.default_pointee} (default pointer dtype)"
        if note not in lo.assumptions:
            lo.assumptions.append(note)
        ptr = Value(ptr.id, ptr.shape, f"ptr<{lo.default_pointee}>", ptr.name)
    block_ptr = ptr.dtype.startswith(("blockptr<", "desc<"))
    shape = ptr.shape
    if shape and not block_ptr:
        # Triton broadcasts the pointer block with the mask and `other` (semantic.load): a `(1, R)` address
        # block loaded under a `(BLOCK_M, 1)` mask is a (BLOCK_M, R) tile
        shape = broadcast_shapes(shape, *(v.shape for v in _values(mask, other) if v.shape))
    return tile(lo, OpKind.LOAD, _values(ptr, mask, other), line, shape, pointee(ptr.dtype),
                block_ptr=block_ptr, masked=mask is not None)


def store(lo: "Lowerer", args: tuple[Any, ...], kw: dict[str, Any], line: int) -> Any:
    ptr, value, mask = _arg(args, kw, 0, "pointer"), _arg(args, kw, 1, "value"), _arg(args, kw, 2, "mask")
    if not isinstance(ptr, Value):
        # a store op's first operand is its pointer (every analysis reads it so): without one there is no
        # access to model (a shared-memory pointer from an extension module, `tle.gpu.local_ptr`)
        lo.note(line, "tl.store to something not recognised as a pointer")
        return None
    lo.emit(OpKind.STORE, _values(ptr, value, mask), line, None)
    return None


def atomic(lo: "Lowerer", args: tuple[Any, ...], kw: dict[str, Any], line: int) -> Any:
    ptr = _arg(args, kw, 0, "pointer")
    operands = _values(*args, *kw.values())
    if not isinstance(ptr, Value):
        return Unknown("atomic")
    return tile(lo, OpKind.ATOMIC, operands, line, ptr.shape, pointee(ptr.dtype))


def dot(lo: "Lowerer", args: tuple[Any, ...], kw: dict[str, Any], line: int) -> Any:
    a, b = _arg(args, kw, 0, "input"), _arg(args, kw, 1, "other")
    acc = _arg(args, kw, 2, "acc")
    if not (isinstance(a, Value) and isinstance(b, Value) and len(a.shape) >= 2 and len(b.shape) >= 2):
        lo.note(line, "tl.dot operands not understood")
        return Unknown("dot")
    out = _dtype_arg(kw.get("out_dtype"), "i32" if a.dtype in ("i8", "u8") else "fp32")
    if isinstance(acc, Value):
        out = acc.dtype
    shape = (*a.shape[:-1], b.shape[-1])
    from kernlint.lowering.lower import CV
    # input_precision / allow_tf32 decide whether an fp32 dot runs on tensor cores or as FMA (placement.py)
    precision = kw.get("input_precision")
    allow_tf32 = kw.get("allow_tf32")
    return tile(lo, OpKind.DOT, _values(a, b, acc), line, shape, out, M=a.shape[-2], N=b.shape[-1], K=a.shape[-1],
                a_dtype=a.dtype, b_dtype=b.dtype,
                input_precision=precision.expr if isinstance(precision, CV) else None,
                allow_tf32=allow_tf32.expr if isinstance(allow_tf32, CV) else None)


def dot_scaled(lo: "Lowerer", args: tuple[Any, ...], kw: dict[str, Any], line: int) -> Any:
    lhs, rhs = _arg(args, kw, 0, "lhs"), _arg(args, kw, 3, "rhs")
    acc = _arg(args, kw, 6, "acc")
    return dot(lo, (lhs, rhs, acc), {}, line)


def where(lo: "Lowerer", args: tuple[Any, ...], kw: dict[str, Any], line: int) -> Any:
    cond, x, y = (_arg(args, kw, i, n) for i, n in enumerate(("condition", "x", "y")))
    values = _values(cond, x, y)
    if not values:
        return x
    shape = broadcast_shapes(*(v.shape for v in values))
    if isinstance(x, Value) or isinstance(y, Value):  # a Python scalar next to a tile takes the tile's type
        dtype = promote(x.dtype if isinstance(x, Value) else None, y.dtype if isinstance(y, Value) else None)
    else:  # both scalars become tensors of their own type: tl.where(c, -1.0, 1.0) is fp32 (bitsandbytes fp4)
        dtype = literal_dtype(x) or literal_dtype(y) or "i32"
    return tile(lo, OpKind.ELEMENTWISE, values, line, shape, dtype, fn="where")



def elementwise(lo: "Lowerer", args: tuple[Any, ...], kw: dict[str, Any], line: int, *, fn: str) -> Any:
    values = _values(*args, *kw.values())
    if not values:
        from kernlint.lowering.lower import CV

        cvs = [a for a in args if isinstance(a, CV)]
        if fn in ("maximum", "minimum") and len(cvs) == 2:
            return CV(binary("max" if fn == "maximum" else "min", cvs[0].expr, cvs[1].expr))
        return Unknown(fn)
    shape = broadcast_shapes(*(v.shape for v in values))
    dtype = values[0].dtype
    for v in values[1:]:
        dtype = promote(dtype, v.dtype)
    if fn in ("isnan", "isinf", "signbit"):
        dtype = "i1"
    return tile(lo, OpKind.ELEMENTWISE, values, line, shape, dtype, fn=fn)


def cast(lo: "Lowerer", args: tuple[Any, ...], kw: dict[str, Any], line: int) -> Any:
    x, dtype = _arg(args, kw, 0, "input"), _arg(args, kw, 1, "dtype")
    if not isinstance(x, Value):
        return x
    return tile(lo, OpKind.CAST, (x,), line, x.shape, _dtype_arg(dtype, x.dtype))


def transpose(lo: "Lowerer", x: Value, line: int) -> Value:
    return tile(lo, OpKind.TRANS, (x,), line, tuple(reversed(x.shape)), x.dtype)


def reshape_like(lo: "Lowerer", args: tuple[Any, ...], kw: dict[str, Any], line: int, *, kind: str) -> Any:
    from kernlint.lowering.lower import CV, Tup

    x = _arg(args, kw, 0, "input")
    if not isinstance(x, Value):
        return Unknown(kind)
    if kind in ("trans", "permute"):
        dims = [a for a in args[1:]]
        if len(dims) == 1 and isinstance(dims[0], Tup):
            dims = list(dims[0].items)
        order = [as_int(d.expr.evaluate({})) for d in dims if isinstance(d, CV)]
        if order and all(o is not None for o in order) and len(order) == len(x.shape):
            return tile(lo, OpKind.TRANS, (x,), line, tuple(x.shape[o] for o in order if o is not None), x.dtype)
        return transpose(lo, x, line)
    if kind == "expand_dims":
        axis = _arg(args, kw, 1, "axis")
        ax = as_int(axis.expr.evaluate({})) if isinstance(axis, CV) else None
        if ax is None:
            return Unknown("expand_dims axis")
        shape = list(x.shape)
        shape.insert(ax % (len(shape) + 1), Const(1))
        return tile(lo, OpKind.VIEW, (x,), line, tuple(shape), x.dtype)
    if kind == "join":
        y = _arg(args, kw, 1, "b")
        return tile(lo, OpKind.JOIN, _values(x, y), line, (*x.shape, Const(2)), x.dtype)
    if kind == "interleave":  # join + reshape of the last dim: [..., N] × 2 → [..., 2N]
        joined = tile(lo, OpKind.JOIN, _values(x, _arg(args, kw, 1, "b")), line, (*x.shape, Const(2)), x.dtype)
        if not x.shape:   # two scalars: Triton's interleave returns their join, a [2] tile, as it is
            return joined
        return tile(lo, OpKind.RESHAPE, (joined,), line, (*x.shape[:-1], binary("*", x.shape[-1], Const(2))), x.dtype)
    if kind == "split":
        from kernlint.lowering.lower import Tup as _Tup

        a = tile(lo, OpKind.SPLIT, (x,), line, x.shape[:-1], x.dtype)
        b = tile(lo, OpKind.SPLIT, (x,), line, x.shape[:-1], x.dtype)
        return _Tup((a, b))
    if len(args) > 2:  # x.reshape(BLOCK_M, BLOCK_K): the dims as separate arguments
        dims = args[1:]
        shape = tuple(a.expr for a in dims if isinstance(a, CV)) if all(isinstance(a, CV) for a in dims) else None
    else:
        shape = _shape_of(lo, _arg(args, kw, 1, "shape"))
    if shape is None:
        lo.note(line, f"tl.{kind} with a shape that is not constexpr")
        return Unknown(kind)
    return tile(lo, OpKind.VIEW if kind == "broadcast_to" else "reshape", (x,), line, shape, x.dtype)


def gather(lo: "Lowerer", args: tuple[Any, ...], kw: dict[str, Any], line: int) -> Any:
    """`tl.gather(src, index, axis)`: a tile of the index's shape and the source's dtype."""
    from kernlint.lowering.lower import CV

    src, index, axis = _arg(args, kw, 0, "src"), _arg(args, kw, 1, "index"), _arg(args, kw, 2, "axis")
    ax = as_int(axis.expr.evaluate({})) if isinstance(axis, CV) else None
    if not isinstance(src, Value) or not isinstance(index, Value) or ax is None or not src.shape:
        return Unknown("gather")
    return tile(lo, OpKind.GATHER, (src, index), line, index.shape, src.dtype, axis=ax % len(src.shape))


def make_block_ptr(lo: "Lowerer", args: tuple[Any, ...], kw: dict[str, Any], line: int) -> Any:
    base = _arg(args, kw, 0, "base")
    block_shape = _shape_of(lo, _arg(args, kw, 4, "block_shape"))
    if not isinstance(base, Value) or block_shape is None:
        lo.note(line, "tl.make_block_ptr not understood")
        return Unknown("block ptr")
    return tile(lo, OpKind.MAKE_BLOCK_PTR, (base,), line, block_shape, f"blockptr<{pointee(base.dtype)}>")


def make_descriptor(lo: "Lowerer", args: tuple[Any, ...], kw: dict[str, Any], line: int) -> Any:
    base = _arg(args, kw, 0, "base")
    block_shape = _shape_of(lo, _arg(args, kw, 3, "block_shape"))
    if not isinstance(base, Value) or block_shape is None:
        lo.note(line, "tensor descriptor not understood")
        return Unknown("descriptor")
    return tile(lo, OpKind.MAKE_DESCRIPTOR, (base,), line, block_shape, f"desc<{pointee(base.dtype)}>")


def advance(lo: "Lowerer", args: tuple[Any, ...], kw: dict[str, Any], line: int) -> Any:
    ptr = _arg(args, kw, 0, "base")
    if not isinstance(ptr, Value):
        return Unknown("advance")
    return tile(lo, OpKind.ADVANCE, _values(*args), line, ptr.shape, ptr.dtype)


def cdiv(lo: "Lowerer", args: tuple[Any, ...], kw: dict[str, Any], line: int) -> Any:
    from kernlint.lowering.lower import CV

    a, b = _arg(args, kw, 0, "x"), _arg(args, kw, 1, "div")
    if isinstance(a, CV) and isinstance(b, CV):
        return CV(binary("cdiv", a.expr, b.expr))
    values = _values(a, b)
    return tile(lo, OpKind.ELEMENTWISE, values, line, (), "i32", fn="cdiv") if values else Unknown("cdiv")


def _passthrough(lo: "Lowerer", args: tuple[Any, ...], kw: dict[str, Any], line: int) -> Any:
    return args[0] if args else None


def _hint(attr: str) -> Handler:
    """`tl.max_contiguous` / `tl.multiple_of(x, n)`: x with a hint, recorded on the op that produced x. Triton
    sets it on that op in place (a dropped result still counts) and AxisInfo takes it over what it inferred:
    contiguity after `tl.where` clamps (smem placement), alignment of a loaded address (register_unaligned)."""
    def record(lo: "Lowerer", args: tuple[Any, ...], kw: dict[str, Any], line: int) -> Any:
        x = args[0] if args else None
        hint = args[1] if len(args) > 1 else kw.get("values")
        if isinstance(x, Value) and hint is not None:
            for block in reversed(lo.blocks):
                at = next((i for i in range(len(block) - 1, -1, -1)
                           if block[i].result is not None and block[i].result.id == x.id), None)
                if at is not None:   # ops are immutable: the op is replaced by one with the hint
                    block[at] = dataclasses.replace(block[at], attrs=block[at].attrs.with_hint(attr, hint))
                    break
            else:   # a loop's block argument (a carried pointer): recorded on the loop (control_flow.loop)
                lo.value_hints.setdefault(x.id, {})[attr] = hint
        return x
    return record


def _nothing(lo: "Lowerer", args: tuple[Any, ...], kw: dict[str, Any], line: int) -> Any:
    return None


HANDLERS: dict[str, Handler] = {
    "program_id": program_id,
    "num_programs": lambda lo, a, k, l: program_id(lo, a, k, l, fn="num_programs"), "arange": arange,
    "zeros": lambda lo, a, k, l: full(lo, a, k, l, fill=False),
    "full": lambda lo, a, k, l: full(lo, a, k, l, fill=True),
    "zeros_like": like, "full_like": like, "ones_like": like,
    "load": load, "store": store, "dot": dot, "dot_scaled": dot_scaled, "where": where, "cast": cast,
    "trans": lambda lo, a, k, l: reshape_like(lo, a, k, l, kind="trans"),
    "permute": lambda lo, a, k, l: reshape_like(lo, a, k, l, kind="permute"),
    "reshape": lambda lo, a, k, l: reshape_like(lo, a, k, l, kind="reshape"),
    "view": lambda lo, a, k, l: reshape_like(lo, a, k, l, kind="reshape"),
    "broadcast_to": lambda lo, a, k, l: reshape_like(lo, a, k, l, kind="broadcast_to"),
    "expand_dims": lambda lo, a, k, l: reshape_like(lo, a, k, l, kind="expand_dims"),
    "join": lambda lo, a, k, l: reshape_like(lo, a, k, l, kind="join"),
    "split": lambda lo, a, k, l: reshape_like(lo, a, k, l, kind="split"),
    "interleave": lambda lo, a, k, l: reshape_like(lo, a, k, l, kind="interleave"), "gather": gather,
    "make_block_ptr": make_block_ptr, "advance": advance, "make_tensor_descriptor": make_descriptor,
    "cdiv": cdiv,
    **{name: _passthrough for name in PASSTHROUGH},
    "max_contiguous": _hint("max_contiguous"), "multiple_of": _hint("multiple_of"),
    **{name: _nothing for name in NO_RESULT},
    **{name: atomic for name in ATOMICS},
}
