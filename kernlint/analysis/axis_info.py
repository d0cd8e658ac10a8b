"""Contiguity and constancy of index/pointer tiles per dim, the way Triton's AxisInfo analysis sees them.

Triton's layouts and vector widths follow from this (lib/Analysis/AxisInfo.cpp): an `arange` is contiguous,
adding a value constant along a dim keeps the other side's contiguity, `%` by a divisible integer keeps
gcd(contiguity, divisor), `tl.where`, products and `tl.minimum`/`tl.maximum` clamps lose it, and
`tl.max_contiguous` replaces what was inferred.
Used by the layout-conversion scratch (smem_convert.py) and by dot-operand placement (a load whose threads
get under 4 contiguous bytes is not copied asynchronously).
"""
from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from math import gcd
from typing import Any

from kernlint.ir.nodes import Op, OpKind, Value, element_bytes, pointee
from kernlint.ir.symbolic import as_int


def tile_shape(value: Value, env: Mapping[str, Any]) -> tuple[int, ...] | None:
    dims = tuple(as_int(d.evaluate(env)) for d in value.shape)
    if any(d is None or d < 1 for d in dims):
        return None
    return dims  # type: ignore[return-value]


Memo = dict[int, "tuple[tuple[int, ...], tuple[int, ...]] | None"]
# A config sweep asks the same questions of one kernel under one constexpr binding for every num_warps and
# num_stages (42 configs per binding in `recommend`), from several call sites that each build a Contiguity:
# the answers depend only on the producer map, the binding, `optimistic` and `carried`, so instances with
# equal inputs share one memo. The producer map is held by the entry, so its id cannot be reused while the
# entry lives (a recommend search of liger's fused MoE kernels spent half its time recomputing these).
_SHARED: OrderedDict[tuple[Any, ...], tuple[object, Memo]] = OrderedDict()
_SHARED_ENTRIES = 256


def _shared_memo(producers: Mapping[int, Op], env: Mapping[str, Any], optimistic: bool,
                 carried: Mapping[int, Value]) -> Memo:
    try:
        key = (id(producers), frozenset((k, type(v), v) for k, v in env.items()), optimistic,
               tuple(sorted((k, v.id) for k, v in carried.items())))
        hit = _SHARED.get(key)
    except TypeError:  # an unhashable value in the binding: a memo of its own
        return {}
    if hit is not None and hit[0] is producers:
        _SHARED.move_to_end(key)
        return hit[1]
    memo: Memo = {}
    _SHARED[key] = (producers, memo)
    if len(_SHARED) > _SHARED_ENTRIES:
        _SHARED.popitem(last=False)
    return memo


class Contiguity:
    """AxisInfo-style contiguity/constancy per dim (triton lib/Analysis/AxisInfo.cpp: add keeps the
    contiguity of one side where the other is constant; mul and comparisons keep only constancy)."""

    def __init__(self, producers: Mapping[int, Op], env: Mapping[str, Any], optimistic: bool = False,
                 carried: Mapping[int, Value] | None = None) -> None:
        self.producers = producers
        # loop-carried block argument id → the value entering the loop (pointers advanced by a scalar each
        # trip keep their entry value's contiguity, as AxisInfo's join of init and yield finds)
        self.carried = carried or {}
        self.env = env
        # optimistic: an op this pass does not model keeps its operands' contiguity (used to decide that a
        # load is NOT vectorised, which needs positive evidence such as a `tl.where` clamp)
        self.optimistic = optimistic
        self.memo = _shared_memo(producers, env, optimistic, self.carried)

    def info(self, value: Value, depth: int = 0) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
        if value.id in self.memo:
            return self.memo[value.id]
        shape = tile_shape(value, self.env) if value.shape else ()
        if shape is None:
            return None
        self.memo[value.id] = None
        result = self._compute(value, shape, depth)
        op = self.producers.get(value.id)
        if result is not None and op is not None and op.attrs.max_contiguous is not None:
            hint = self._hint(op.attrs.max_contiguous, len(shape))
            if hint is not None:  # the user's hint replaces what AxisInfo inferred (AxisInfo.cpp, hints)
                result = (tuple(min(n, h) if h else c for n, h, c in zip(shape, hint, result[0])), result[1])
        self.memo[value.id] = result
        return result

    def _hint(self, raw: Any, rank: int) -> tuple[int | None, ...] | None:
        items = list(raw) if isinstance(raw, (tuple, list)) else [raw]
        vals: list[int | None] = []
        for item in items:
            expr = getattr(item, "expr", item)
            v = as_int(expr.evaluate(self.env)) if hasattr(expr, "evaluate") else expr
            vals.append(v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else None)
        return tuple(vals) if len(vals) == rank else None

    def _aligned(self, operand: Value, shape: tuple[int, ...], depth: int
                 ) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
        info = self.info(operand, depth + 1)
        if info is None:
            return None
        contig, const = info
        pad = len(shape) - len(contig)
        if pad < 0:
            return None
        contig = (1,) * pad + contig
        const = shape[:pad] + const
        # size-1 dims broadcast: constant along them
        own = (1,) * pad + (tile_shape(operand, self.env) or (1,) * len(info[0]))
        contig = tuple(1 if o == 1 and n > 1 else c for c, o, n in zip(contig, own, shape))
        const = tuple(n if o == 1 else k for k, o, n in zip(const, own, shape))
        return contig, const

    def _compute(self, value: Value, shape: tuple[int, ...], depth: int
                 ) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
        ones = (1,) * len(shape)
        op = self.producers.get(value.id)
        if not shape:
            return (), ()
        if op is None and value.id in self.carried and depth <= 64:
            return self._aligned(self.carried[value.id], shape, depth)
        if op is None or depth > 64:
            # no producer in view (a loop-carried tile when the map holds only op results)
            return (shape if self.optimistic else ones), ones
        if op.kind == OpKind.FOR:
            # a loop-carried tile (pointers advanced by a scalar each iteration): AxisInfo joins the entry
            # value with what the body yields; advancing by a scalar keeps the entry value's contiguity
            for c in op.carried:
                if c.arg.id == value.id:
                    return self._aligned(c.init, shape, depth)
            return ones, ones
        if op.kind == OpKind.ARANGE and len(shape) == 1:
            return shape, (1,)
        if op.kind == OpKind.FULL:
            return ones, shape
        if op.kind in (OpKind.CAST,) and op.operands:
            return self._aligned(op.operands[0], shape, depth)
        if op.kind == OpKind.VIEW and op.operands:
            src = op.operands[0]
            src_shape = tile_shape(src, self.env) if src.shape else ()
            info = self.info(src, depth + 1)
            if src_shape is None or info is None:
                return ones, ones
            kept = [i for i, n in enumerate(shape) if n != 1]
            if [n for n in src_shape if n != 1] != [shape[i] for i in kept]:
                return ones, ones
            src_kept = [i for i, n in enumerate(src_shape) if n != 1]
            contig, const = list(ones), list(shape)
            for i, j in zip(kept, src_kept):
                contig[i], const[i] = info[0][j], info[1][j]
            return tuple(contig), tuple(const)
        if op.kind != OpKind.ELEMENTWISE:
            return ones, ones
        attrs = op.elementwise_attrs()
        fn = attrs.fn
        parts = [self._aligned(x, shape, depth) for x in op.operands]
        if any(p is None for p in parts) or not parts:
            return ones, ones
        const = tuple(gcd(*(p[1][d] for p in parts)) if len(parts) > 1 else parts[0][1][d]  # type: ignore[index]
                      for d in range(len(shape)))
        if fn in ("+", "-") and len(parts) == 1:
            return parts[0][0], const  # type: ignore[index]
        if fn == "%":
            # AxisInfo.cpp (rem): contiguity gcd(lhs contiguity, rhs divisibility); integer arguments are
            # assumed divisible by 16 (Triton's specialisation, kernlint's stated default)
            scalar = as_int(attrs.scalar.evaluate(self.env)) if attrs.scalar is not None else None
            div = scalar if len(parts) == 1 and scalar else 16 if len(parts) == 2 and parts[1][1] == shape else 1
            return tuple(gcd(parts[0][0][d], div) for d in range(len(shape))), const  # type: ignore[index]
        if fn in ("maximum", "minimum"):
            # AxisInfo.cpp MaxMinOpAxisInfoVisitor: the smaller contiguity of the two sides (a scalar bound,
            # `tl.minimum(offs, n - 1)`, is a splat: contiguity 1), so a clamped index is not vectorised.
            # Measured (Triton 3.9, sm_80/90/100): [64, 64] fp16 rows loaded at `tl.minimum(arange, n - 1)`
            # get sizePerThread [1, 1], threadsPerWarp [1, 32], warpsPerCTA [2, 2] at 4 warps, and their
            # row sum takes 256 B of reduction scratch (128 B unclamped; tests/analysis/test_smem_scratch_mechanisms.py)
            contig = tuple(min(p[0][d] for p in parts) for d in range(len(shape)))  # type: ignore[index]
            return (contig if len(parts) > 1 else ones), const
        if self.optimistic and fn not in ("where", "*", "//", "/"):
            return tuple(max(p[0][d] for p in parts) for d in range(len(shape))), const  # type: ignore[index]
        if fn == "*" and len(parts) == 1 and attrs.scalar is not None \
                and as_int(attrs.scalar.evaluate(self.env)) == 1:
            return parts[0][0], const  # type: ignore[index]  # offsets × a stride specialised to 1
        if fn == "+" and len(parts) == 2:
            (ca, ka), (cb, kb) = parts  # type: ignore[misc]
            return tuple(max(gcd(ca[d], kb[d]), gcd(cb[d], ka[d])) for d in range(len(shape))), const
        if fn == "-" and len(parts) == 2:
            (ca, _), (_, kb) = parts  # type: ignore[misc]
            return tuple(gcd(ca[d], kb[d]) for d in range(len(shape))), const
        return ones, const


def order_from_contiguity(contig: tuple[int, ...]) -> tuple[int, ...]:
    """getOrderFromContiguity: dims by decreasing contiguity, ties to the later dim."""
    dims = list(reversed(range(len(contig))))
    return tuple(sorted(dims, key=lambda d: -contig[d]))


def load_vector_bytes(load: Op, producers: Mapping[int, Op], env: Mapping[str, Any],
                      carried: Mapping[int, Value] | None = None) -> int | None:
    """Contiguous bytes one thread can move per instruction for a pointer-tile load: the pointer's contiguity
    along its most contiguous dim (AxisInfo, including `tl.max_contiguous` hints), capped at 16 B. None when
    the pointer is not a tile of plain pointers or its shape is unknown. A loop-carried pointer (`p += BK`)
    is judged by the value it enters the loop with, when `carried` maps its block argument to it."""
    if not load.operands:
        return None
    pointer = load.operands[0]
    if carried is not None:
        pointer = carried.get(pointer.id, pointer)
    if not pointer.shape or not pointer.dtype.startswith("ptr<"):
        return None
    info = Contiguity(producers, env, optimistic=True, carried=carried).info(pointer)
    if info is None:
        return None
    order = order_from_contiguity(info[0])
    nbytes = max(1, int(element_bytes(pointee(pointer.dtype))))
    return min(info[0][order[0]] * nbytes, 16)
