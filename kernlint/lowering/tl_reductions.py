"""`tl.sum`/`tl.max`/`tl.reduce`/`tl.cumsum`/`tl.associative_scan` and friends: one `reduce` or `scan` op per
call, on the dtype Triton converts the input to first (dtypes.reduction_input_dtype)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kernlint.ir.dtypes import reduction_input_dtype
from kernlint.ir.nodes import OpKind, Value
from kernlint.ir.symbolic import Const, Expr, Unknown, as_int
from kernlint.lowering.tl_calls import _arg, _dtype_arg, tile

if TYPE_CHECKING:
    from kernlint.lowering.lower import Lowerer

REDUCTIONS = {"sum", "max", "min", "argmax", "argmin", "reduce", "xor_sum", "prod"}
SCANS = {"cumsum", "cumprod", "associative_scan"}


def _axis_of(axis: Any, rank: int) -> int | None:
    from kernlint.lowering.lower import CV

    ax = as_int(axis.expr.evaluate({})) if isinstance(axis, CV) else None
    return None if ax is None or rank == 0 else ax % rank


def _tiles(x: Any) -> tuple[Value, ...] | None:
    """The operand(s) of a reduce/scan: one tile, or a tuple of same-shape tiles (`tl.reduce((a, b), …)`)."""
    from kernlint.lowering.lower import Tup

    if isinstance(x, Value):
        return (x,)
    if isinstance(x, Tup) and x.items and all(isinstance(i, Value) for i in x.items):
        return tuple(x.items)
    return None


def _multi(lo: "Lowerer", kind: OpKind, operands: tuple[Value, ...], line: int, shape: tuple[Expr, ...],
           dtypes: tuple[str, ...], **attrs: Any) -> Any:
    """One op with a result per operand (a tuple reduce/scan is one tt.reduce/tt.scan in Triton)."""
    from kernlint.lowering.lower import Tup

    results = tuple(lo.new_value(shape, d) for d in dtypes)
    lo.emit(kind, operands, line, results[0], extra_results=results[1:], **attrs)
    return results[0] if len(results) == 1 else Tup(results)


def reduce(lo: "Lowerer", args: tuple[Any, ...], kw: dict[str, Any], line: int, *, fn: str) -> Any:
    from kernlint.lowering.lower import CV

    xs = _tiles(_arg(args, kw, 0, "input"))
    axis = _arg(args, kw, 1, "axis")
    keep = kw.get("keep_dims")
    if xs is None:
        return Unknown("reduce")
    with_indices = kw.get("return_indices")
    if fn in ("max", "min", "sum") and len(xs) == 1 and not (
            isinstance(with_indices, CV) and with_indices.expr.evaluate({})):
        xs = (_promoted(lo, xs[0], fn, kw, line),)
    x = xs[0]
    ax = _axis_of(axis, len(x.shape))
    keep_dims = isinstance(keep, CV) and bool(keep.expr.evaluate({}))
    if ax is None:
        shape: tuple[Expr, ...] = ()
    else:
        shape = tuple(Const(1) if (i == ax and keep_dims) else d for i, d in enumerate(x.shape)
                      if i != ax or keep_dims)
    dtypes = ("i32",) if fn in ("argmax", "argmin") else tuple(v.dtype for v in xs)
    if fn in ("max", "min") and len(xs) == 1 and isinstance(with_indices, CV) and with_indices.expr.evaluate({}):
        # `tl.max(x, return_indices=True)` is the reduction `tl.argmax` runs (triton/language/standard.py): the
        # value and its i32 index travel together, unpromoted, and both are results
        fn, dtypes = f"arg{fn}", (x.dtype, "i32")
    return _multi(lo, OpKind.REDUCE, xs, line, shape, dtypes, axis=ax, fn=fn, in_shape=x.shape)


def _promoted(lo: "Lowerer", x: Value, fn: str, kw: dict[str, Any], line: int) -> Value:
    """The reduction's or scan's input after Triton's own conversion (dtypes.reduction_input_dtype): an
    explicit cast of the whole tile, as `x.to(tl.float32)` in triton/language/standard.py emits it."""
    requested = kw.get("dtype")
    want = reduction_input_dtype(fn, x.dtype, _dtype_arg(requested, x.dtype) if requested is not None else None)
    return x if want == x.dtype else tile(lo, OpKind.CAST, (x,), line, x.shape, want)


def scan(lo: "Lowerer", args: tuple[Any, ...], kw: dict[str, Any], line: int, *, fn: str = "associative_scan") -> Any:
    xs = _tiles(_arg(args, kw, 0, "input"))
    if xs is None:
        return Unknown("scan")
    if fn in ("cumsum", "cumprod") and len(xs) == 1:
        xs = (_promoted(lo, xs[0], fn, kw, line),)
    ax = _axis_of(_arg(args, kw, 1, "axis"), len(xs[0].shape))
    return _multi(lo, OpKind.SCAN, xs, line, xs[0].shape, tuple(v.dtype for v in xs), axis=ax)
