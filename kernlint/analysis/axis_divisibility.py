"""Divisibility of index/pointer values and constancy of masks, the way Triton's AxisInfo sees them, and from
them the width the software pipeliner sees for a load.

Triton's pipeliner copies a loop load asynchronously (cp.async / TMA-less async copy into shared memory) only
when each thread moves at least 32 bits (triton lib/Dialect/TritonGPU/Transforms/Pipeliner/AssignLatencies.cpp,
isSmallLoad): the vector is the pointer's contiguity, capped by its alignment — the divisibility of the
addresses along the contiguous dim (lib/Analysis/AxisInfo.cpp, ModuleAxisInfoAnalysis::getAlignment) — and by
the mask's constancy along that dim (getMaskAlignment). A run-time value read from memory has divisibility 1
(LoadOpAxisInfoVisitor), so a tile offset by a loaded integer (a MoE expert's first row, a varlen sequence
start) is copied one 2-byte element at a time: not pipelinable, the tile stays a register load staged once
through shared memory. A mask comparing against a loaded bound has constancy 1 (CmpOpAxisInfoVisitor: a
contiguous lhs against a constant rhs keeps gcd(contiguity, both divisibilities)), with the same effect.

Measured (Triton 3.9, 64×64×64 fp16 dot loop, 4 warps, 3 stages; tests/analysis/test_smem_unaligned_operands.py):
A offset by a loaded i32: sm_80 2 × 8,192 (B) + 8,192 (A staged) = 24,576 B, sm_90 32,768, where the aligned
loop takes 32,768 / 49,152; the same offset × 16 is aligned again (32,768 / 49,152); a mask `k < n` with n
loaded gives 24,576 / 32,768, with n an i32 argument (divisible by 16) 32,768 / 49,152.

Rules (AxisInfo.cpp visitors): arange → divisibility of its start (0: unbounded); an i32 or pointer argument →
16 (Triton's specialisation, kernlint's stated default); a constant → its largest power-of-two divisor; a
load, program_id or any op AxisInfo does not model → 1; + and − → gcd (a pointer adds offset × element
bytes); × → product, a contiguous side counting 1; // by a power of two divides a non-contiguous lhs;
% by a constant → gcd; where/min/max and loop-carried merges → gcd, also with the contiguities when they
differ; a loop's induction variable → gcd(lower bound, step).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from math import gcd
from typing import Any

from kernlint.analysis.axis_info import Contiguity, tile_shape
from kernlint.ir.nodes import Op, OpKind, Value, element_bytes, pointee
from kernlint.ir.symbolic import as_int

KMAX = 1 << 62  # AxisInfo's kMaxDivisor: highestPowOf2Divisor(0)
_COMPARISONS = ("<", "<=", ">", ">=", "==", "!=")
_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}


def pow2_divisor(n: int) -> int:
    """The largest power of two dividing n (AxisInfo's highestPowOf2Divisor; 0 divides by anything)."""
    return KMAX if n == 0 else min(abs(n) & -abs(n), KMAX)


class Divisibility:
    """Per-dim divisibility (a scalar: one entry) and mask constancy of values of one kernel and config."""

    def __init__(self, producers: Mapping[int, Op], env: Mapping[str, Any], loops: Sequence[Op] = ()) -> None:
        self.producers = producers
        self.env = env
        self.contig = Contiguity(producers, env, optimistic=True)
        self.memo: dict[int, tuple[int, ...]] = {}
        self.ivs: dict[int, Op] = {}
        self.carried: dict[int, tuple[Value, Value]] = {}
        self.arg_hints: dict[int, Mapping[str, Any]] = {}   # block argument → hints set on it in the loop
        # `loops`: a producer map names the body's ops, not the loop, as producers of what a loop yields
        for op in {id(o): o for o in (*producers.values(), *loops)}.values():
            if op.kind != OpKind.FOR:
                continue
            iv = op.for_attrs().iv
            if isinstance(iv, Value):
                self.ivs[iv.id] = op
            self.arg_hints.update(op.for_attrs().arg_hints)
            for c in op.carried:
                self.carried[c.arg.id] = (c.init, c.yielded)
        # a carried value's contiguity is its entry value's (AxisInfo's fixed point for a pointer advanced by a
        # scalar), so the join of entry and yield does not mix in a full contiguity assumed for the argument
        self.contig = Contiguity(producers, env, optimistic=True, carried={k: v[0] for k, v in self.carried.items()})

    # -- helpers ----------------------------------------------------------------------------------
    def _shape(self, value: Value) -> tuple[int, ...] | None:
        return tile_shape(value, self.env) if value.shape else ()

    def _contig(self, value: Value, rank: int) -> tuple[int, ...]:
        info = self.contig.info(value) if value.shape else None
        return info[0] if info is not None and len(info[0]) == rank else (1,) * rank

    def _const(self, value: Value, rank: int) -> tuple[int, ...]:
        info = self.contig.info(value) if value.shape else None
        return info[1] if info is not None and len(info[1]) == rank else (1,) * rank

    def _scalar_attr(self, op: Op) -> int | None:
        expr = op.elementwise_attrs().scalar if op.kind == OpKind.ELEMENTWISE else None
        if expr is None:
            return None
        value = expr.evaluate(self.env)
        if isinstance(value, bool):
            return int(value)
        return as_int(value) if not isinstance(value, int) else value

    def _aligned(self, operand: Value, shape: tuple[int, ...]) -> tuple[int, ...]:
        """An operand's divisibility on the result's dims: a scalar is splat to every dim (SplatOp), a tile of
        lower rank gains leading dims (ExpandDims: gcd of its non-contiguous dims), size-1 dims broadcast."""
        div = self.of(operand)
        if not operand.shape:
            return (div[0],) * len(shape)
        pad = len(shape) - len(div)
        if pad < 0:
            return (1,) * len(shape)
        return (_expanded(div, self._contig(operand, len(div))),) * pad + div

    # -- divisibility -----------------------------------------------------------------------------
    def of(self, value: Value) -> tuple[int, ...]:
        """Divisibility per dim (bytes for pointers, elements otherwise); a scalar gives a 1-tuple."""
        if value.id in self.memo:
            return self.memo[value.id]
        shape = self._shape(value)
        rank = max(1, len(shape)) if shape is not None else max(1, len(value.shape))
        # a loop-carried value under evaluation: the lattice starts at "unknown" (AxisInfo's join keeps the
        # other side), so the increment decides
        self.memo[value.id] = (KMAX,) * rank
        result = self._compute(value, shape, rank) if shape is not None else (KMAX,) * rank
        self.memo[value.id] = result
        return result

    def _compute(self, value: Value, shape: tuple[int, ...], rank: int) -> tuple[int, ...]:
        op = self.producers.get(value.id)
        if value.id in self.carried:
            # `tl.multiple_of` on the argument inside the loop holds for it (Triton 3.9: a carried pointer from a
            # loaded base, hinted [16, 16] in the body, is pipelined: 32,768 / 49,152 B at 64³ on sm_80 / sm_90,
            # 24,576 / 32,768 without the hint)
            hint = _hint_values(self.arg_hints.get(value.id, {}).get("multiple_of"), self.env, rank)
            if hint is not None:
                return hint
            init, yielded = self.carried[value.id]
            return self._join(init, yielded, shape or (1,))
        if op is None:
            loop = self.ivs.get(value.id)
            return _full(rank, self._induction(loop)) if loop is not None else _full(rank, KMAX)
        if op.attrs.multiple_of is not None:
            hint = _hint_values(op.attrs.multiple_of, self.env, rank)
            if hint is not None:
                return hint
        kind = op.kind
        if kind == OpKind.PARAM:
            return _full(rank, 16 if value.dtype.startswith(("ptr<", "i", "u")) else KMAX)
        if kind in (OpKind.LOAD, OpKind.PROGRAM_ID, OpKind.ATOMIC, OpKind.DOT, OpKind.REDUCE):
            return _full(rank, 1)
        if kind == OpKind.ARANGE:
            start_expr = op.arange_attrs().start
            start = as_int(start_expr.evaluate(self.env)) if start_expr is not None else None
            return _full(rank, pow2_divisor(start) if start is not None else 1)
        if kind == OpKind.FULL:
            return _full(rank, KMAX)
        if kind == OpKind.CAST and op.operands:
            src = op.operands[0]
            if src.dtype.startswith(("fp", "bf")) or value.dtype.startswith(("fp", "bf")):
                return _full(rank, 1)
            return self._aligned(src, shape) if shape else (self.of(src)[0],)
        if kind in (OpKind.VIEW, OpKind.RESHAPE) and op.operands:
            return self._view(op.operands[0], shape)
        if kind == OpKind.IF:
            merged = [(t, e) for phi, t, e in op.merges if phi.id == value.id]
            branches = [v for t, e in merged for v in (t, e) if v is not None and v.id in self.producers]
            if not branches:
                return _full(rank, KMAX)
            out = self._aligned(branches[0], shape) if shape else (self.of(branches[0])[0],)
            for b in branches[1:]:
                other = self._aligned(b, shape) if shape else (self.of(b)[0],)
                out = tuple(gcd(x, y) for x, y in zip(out, other))
            return out
        if kind != OpKind.ELEMENTWISE:
            return _full(rank, 1)
        if op.elementwise_attrs().unscaled and op.operands:  # offsets whose stride factor the graph leaves out
            base = op.operands[0]
            return self._aligned(base, shape) if shape else (self.of(base)[0],)
        return self._elementwise(op, value, shape, rank)

    def _elementwise(self, op: Op, value: Value, shape: tuple[int, ...], rank: int) -> tuple[int, ...]:
        attrs = op.elementwise_attrs()
        fn = attrs.fn
        dims = shape or (1,)
        # (divisibility, contiguity, is a pointer) per operand, the constant one (scalar attr) in its place
        parts = [(self._aligned(x, dims) if shape else (self.of(x)[0],),
                  self._contig(x, rank) if x.shape and shape else (1,) * rank,
                  x.dtype.startswith("ptr<")) for x in op.operands]
        scalar = self._scalar_attr(op)
        if scalar is not None:
            parts.insert(0 if attrs.scalar_first else len(parts),
                         (_full(rank, pow2_divisor(scalar)), (1,) * rank, False))
        if fn == "where" and attrs.choice is not None:  # `x if CONSTEXPR else y`: the branch this config takes
            taken = _taken_side(op, self.env)
            if isinstance(taken, Value):
                return self._aligned(taken, dims) if shape else (self.of(taken)[0],)
            if isinstance(taken, int):
                return _full(rank, pow2_divisor(taken))
        if fn == "where":
            # select: the two values (a dropped Python literal is constant: contiguity 1), not the condition
            values = [p for x, p in zip(op.operands, parts) if x.dtype != "i1"][-2:]
            if len(values) == 1:
                (d, c, _), = values
                return tuple(x if k == 1 else 1 for x, k in zip(d, c))
            parts = values
        if len(parts) == 1 and fn in ("+", "-"):  # unary sign
            return parts[0][0]
        if len(parts) != 2:
            return _full(rank, 1)
        (da, ca, pa), (db, cb, pb) = parts
        const_b = scalar if scalar is not None and not attrs.scalar_first else None
        if fn in ("+", "-"):
            if pb and not pa:
                (da, ca, pa), (db, cb, pb) = (db, cb, pb), (da, ca, pa)
            if pa:  # addptr: the offset counts in element bytes
                elem = max(1, int(element_bytes(pointee(value.dtype))))
                db = tuple(min(KMAX, d * elem) for d in db)
            return tuple(gcd(x, y) for x, y in zip(da, db))
        if fn == "*":
            const_a = scalar if scalar is not None and attrs.scalar_first else None
            a = tuple(1 if c > 1 and const_b != 1 else d for d, c in zip(da, ca))
            b = tuple(1 if c > 1 and const_a != 1 else d for d, c in zip(db, cb))
            return tuple(min(KMAX, x * y) for x, y in zip(a, b))
        if fn == "//" and const_b is not None:
            if const_b == 1:
                return da
            if const_b > 0 and const_b & (const_b - 1) == 0:
                return tuple(max(1, d // const_b) if c == 1 else 1 for d, c in zip(da, ca))
            return _full(rank, 1)
        if fn == "%" and (const_b is not None or not op.operands[-1].shape):
            return tuple(gcd(x, y) for x, y in zip(da, db))
        if fn in ("where", "minimum", "maximum", "min", "max"):
            return tuple(_from_contiguity(x, y, p, q) for x, y, p, q in zip(da, db, ca, cb))
        if fn == "<<" and const_b is not None:
            return tuple(min(KMAX, (1 if c > 1 and const_b else d) << const_b) for d, c in zip(da, ca))
        if fn == ">>" and const_b is not None:
            return tuple(max(1, (1 if c > 1 and const_b else d) >> const_b) for d, c in zip(da, ca))
        return _full(rank, 1)

    def _view(self, src: Value, shape: tuple[int, ...]) -> tuple[int, ...]:
        """expand_dims / broadcast / reshape between the same non-1 dims: kept dims keep their divisibility,
        inserted size-1 dims take ExpandDims' gcd of the non-contiguous dims."""
        src_shape = self._shape(src)
        div = self.of(src)
        if src_shape is None or not shape:
            return (div[0],) * max(1, len(shape))
        if not src.shape:
            return (div[0],) * len(shape)
        kept = [i for i, n in enumerate(shape) if n != 1]
        src_kept = [i for i, n in enumerate(src_shape) if n != 1]
        if [shape[i] for i in kept] != [src_shape[j] for j in src_kept]:
            return (1,) * len(shape)
        new = _expanded(div, self._contig(src, len(div)))
        out = [new] * len(shape)
        for i, j in zip(kept, src_kept):
            out[i] = div[j]
        return tuple(out)

    def _join(self, a: Value, b: Value, shape: tuple[int, ...]) -> tuple[int, ...]:
        rank = len(shape)
        da = self._aligned(a, shape) if a.shape else (self.of(a)[0],) * rank
        db = self._aligned(b, shape) if b.shape else (self.of(b)[0],) * rank
        ca, cb = self._contig(a, rank), self._contig(b, rank)
        return tuple(_from_contiguity(x, y, p, q) for x, y, p, q in zip(da, db, ca, cb))

    def _induction(self, loop: Op) -> int:
        """AxisInfo.visitForOpInductionVar: gcd(divisibility of the lower bound, of the step)."""
        exprs = list(loop.for_attrs().bounds)
        values = list(loop.for_attrs().bound_values or (None,) * len(exprs))
        if not exprs or len(exprs) > 3:
            return 1
        divs: list[int] = []
        for expr, val in zip(exprs, values):
            if isinstance(val, Value):
                divs.append(self.of(val)[0])
            else:
                n = as_int(expr.evaluate(self.env)) if expr is not None else None
                divs.append(pow2_divisor(n) if n is not None else 1)
        lower = divs[0] if len(divs) >= 2 else KMAX
        step = divs[2] if len(divs) == 3 else 1
        return gcd(lower, step)

    # -- mask constancy ---------------------------------------------------------------------------
    def mask_constancy(self, mask: Value, shape: tuple[int, ...], depth: int = 0) -> tuple[int, ...]:
        """Constancy per dim of a boolean mask (CmpOpAxisInfoVisitor, LogicalOpAxisInfoVisitor)."""
        rank = len(shape)
        if not mask.shape:
            return shape
        own = self._shape(mask)
        if own is None or depth > 32:
            return (1,) * rank
        pad = rank - len(own)
        if pad < 0:
            return (1,) * rank
        inner = self._mask_own(mask, own, depth)
        padded = tuple(shape[:pad]) + inner
        return tuple(n if o == 1 else c for c, o, n in zip(padded, (1,) * pad + own, shape))

    def _mask_own(self, mask: Value, shape: tuple[int, ...], depth: int) -> tuple[int, ...]:
        op = self.producers.get(mask.id)
        rank = len(shape)
        if op is None or op.kind != OpKind.ELEMENTWISE:
            if op is not None and op.kind == OpKind.VIEW and op.operands and op.operands[0].shape:
                src = op.operands[0]
                src_shape = self._shape(src)
                if src_shape is not None:
                    src_const = self.mask_constancy(src, src_shape, depth + 1)
                    kept = [i for i, n in enumerate(shape) if n != 1]
                    src_kept = [i for i, n in enumerate(src_shape) if n != 1]
                    if [shape[i] for i in kept] == [src_shape[j] for j in src_kept]:
                        out = list(shape)
                        for i, j in zip(kept, src_kept):
                            out[i] = src_const[j]
                        return tuple(out)
            # a loaded mask: constancy of its pointers (LoadOpAxisInfoVisitor); an op this model does not
            # follow is not taken as evidence against vectorising
            return self._const(mask, rank) if op is not None and op.kind == OpKind.LOAD else shape
        fn = op.fn
        if fn in ("&", "|", "^", "and", "or"):
            parts = [self.mask_constancy(x, shape, depth + 1) for x in op.operands]
            return tuple(gcd(*(p[d] for p in parts)) if parts else 1 for d in range(rank))
        if fn not in _COMPARISONS:
            return shape
        scalar = self._scalar_attr(op)
        sides = list(op.operands)
        if len(sides) == 1 and scalar is not None:
            sides.insert(0 if op.elementwise_attrs().scalar_first else 1, None)  # type: ignore[arg-type]
        if len(sides) != 2:  # a bound the graph does not hold (Helion's tile masks): no evidence
            return shape
        lhs, rhs = sides

        def info(side: Value | None) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
            if side is None:  # the constant operand
                return (1,) * rank, shape, (pow2_divisor(scalar or 0),) * rank
            if not side.shape:
                return (1,) * rank, shape, (self.of(side)[0],) * rank
            div = self._aligned(side, shape)
            pad = rank - len(side.shape)
            own = self._shape(side) or ()
            contig = (1,) * pad + self._contig(side, len(side.shape))
            const = tuple(shape[:pad]) + self._const(side, len(side.shape))
            contig = tuple(1 if o == 1 and n > 1 else c for c, o, n in zip(contig, (1,) * pad + own, shape))
            const = tuple(n if o == 1 else k for k, o, n in zip(const, (1,) * pad + own, shape))
            return contig, const, div

        (cl, kl, dl), (cr, kr, dr) = info(lhs), info(rhs)
        out = []
        for d in range(rank):
            hint = gcd(kl[d], kr[d])
            if fn in (">", "<=") and kl[d] == shape[d]:       # constant lhs against a contiguous rhs
                hint = max(hint, gcd(cr[d], dl[d], dr[d]))
            elif fn in ("<", ">=") and kr[d] == shape[d]:     # contiguous lhs against a constant rhs
                hint = max(hint, gcd(cl[d], dl[d], dr[d]))
            out.append(hint)
        return tuple(out)


def _full(rank: int, divisor: int) -> tuple[int, ...]:
    return (divisor,) * rank


def _taken_side(op: Op, env: Mapping[str, Any]) -> Value | int | None:
    attrs = op.elementwise_attrs()
    assert attrs.choice is not None
    cond = attrs.choice.evaluate(env)
    if not isinstance(cond, (bool, int)):
        return None
    side = attrs.sides[0 if cond else 1]
    if isinstance(side, Value) or side is None:
        return side
    value = as_int(side.evaluate(env)) if hasattr(side, "evaluate") else None
    return value


def _expanded(div: tuple[int, ...], contig: tuple[int, ...]) -> int:
    """ExpandDimsOpAxisInfoVisitor: the new dim's divisibility, gcd over dims, a contiguous dim counting 1."""
    out = 0
    for d, c in zip(div, contig):
        out = gcd(out, 1 if c > 1 else d)
    return out or KMAX


def _from_contiguity(da: int, db: int, ca: int, cb: int) -> int:
    """getDivisibilityFromContiguity: the gcd, also with both contiguities when they differ."""
    return gcd(da, db) if ca == cb else gcd(da, db, ca, cb)


def _hint_values(raw: Any, env: Mapping[str, Any], rank: int) -> tuple[int, ...] | None:
    raw = raw.items if hasattr(raw, "items") and isinstance(raw.items, tuple) else raw   # a `[16, 16]` literal
    items = list(raw) if isinstance(raw, (tuple, list)) else [raw] * rank
    vals: list[int] = []
    for item in items:
        expr = getattr(item, "expr", item)
        v = as_int(expr.evaluate(env)) if hasattr(expr, "evaluate") else expr
        if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
            return None
        vals.append(v)
    return tuple(vals) if len(vals) == rank else None
