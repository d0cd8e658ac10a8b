"""Which computed tiles never exist whole in registers: Triton lowers element-wise chains element by element,
so a single-use intermediate (or one read only by element-wise ops with no whole-tile op in between) lives in
the registers of the operands it replaces. Split out of registers.py, which prices the tiles that stay live.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kernlint.analysis.liveness import Liveness
from kernlint.analysis.register_streams import scaled_products, scan_results
from kernlint.ir.nodes import Op, OpKind, Value, is_pointer
from kernlint.ir.symbolic import Unknown


# A reshape whose layouts agree is a renaming of registers (no shared-memory round trip: measured Triton 3.9,
# examples/quantize_fp8.py reshapes [G·128] <-> [G, 128] with only the reduction's scratch in shared memory).
_STREAMING_USERS = (OpKind.ELEMENTWISE, OpKind.CAST, OpKind.STORE, OpKind.REDUCE, OpKind.VIEW, OpKind.RESHAPE)


def streamed_values(live: Liveness, loaded: set[int], env: Mapping[str, Any]) -> set[int]:
    """Computed tiles that never exist whole: Triton emits element-wise chains per element, so a
    single-use intermediate feeding another element-wise op, a store or a reduction lives in the
    registers of the operands it replaces (measured: swiglu BLOCK 16384 w4 needs 116 registers, about
    its two loaded bf16 tiles, not the five fp32 intermediates)."""
    uses: dict[int, dict[int, str]] = {}   # value → {using op id: op kind, or "yield"}; `x * x` is one use
    for step in live.steps:
        if step.is_end:
            continue
        for v in step.op.operands:
            uses.setdefault(v.id, {})[step.op.id] = step.op.kind
        for c in step.op.carried if step.op.kind == OpKind.FOR else ():
            uses.setdefault(c.yielded.id, {})[-step.op.id] = "yield"
        for merge in step.op.merges if step.op.kind == OpKind.IF else ():
            for v in merge[1:]:  # an if-branch value renamed to the merged result: a view of it
                if isinstance(v, Value):
                    uses.setdefault(v.id, {})[-step.op.id] = OpKind.VIEW
    out: set[int] = set()
    held = held_across_iterations(live)
    scanned = scan_results(live)   # written whole by a scan before any element is read
    scanned |= scaled_products(live, uses)
    # an MMA writes its whole product at once: read by two ops (`h * tl.sigmoid(h)`) it is held whole until the
    # last (probe fused MLP, tests/truth/chained_dots.py, 64×64 · 4 warps: 75 → 106 against ptxas 125 on sm_90)
    scanned |= {s.op.result.id for s in live.steps if not s.is_end and s.op.kind == OpKind.DOT and s.op.result is not None
                and len(uses.get(s.op.result.id, {})) > 1}
    for vid, value in live.values.items():
        if not value.shape or vid in loaded or is_pointer(value.dtype) or vid in held or vid in scanned:
            continue
        kinds = list(uses.get(vid, {}).values())
        if len(kinds) == 1 and kinds[0] in _STREAMING_USERS:
            out.add(vid)
        elif kinds and all(k in _ELEMENTWISE_USERS for k in kinds) and _elementwise_span(live, vid, env):
            out.add(vid)
    return out


def held_across_iterations(live: Liveness) -> set[int]:
    """Values no element-wise chain can stream: a loop-carried block argument holds the previous
    iteration's tile, and a tile defined before a loop and read inside it (the weight row of a row loop)
    is read again by every iteration, so both exist whole in registers for the loop's duration. Measured
    (Triton 3.9, rmsnorm_bwd: W_row loaded before the row loop, dW_row carried, bf16, 32 fp32 elements per
    thread): 162-208 registers, not the 95 of the two per-row tiles alone."""
    out = {c.arg.id for s in live.steps if s.op.kind == OpKind.FOR and not s.is_end for c in s.op.carried}
    for vid, (start, end) in live.intervals.items():  # a use inside a loop ends the interval at its end marker
        last = live.steps[end] if end < len(live.steps) else None
        if last is not None and last.is_end and last.op.kind == OpKind.FOR and last.op.id not in live.steps[start].loops:
            out.add(vid)
    return out


# Ops that need a whole tile at once (or split the element-wise chain): a value live across one of them
# is materialised, not recomputed per element.
_ELEMENTWISE_USERS = (OpKind.ELEMENTWISE, OpKind.CAST, OpKind.STORE, OpKind.VIEW)
_TILE_BARRIERS = (OpKind.REDUCE, OpKind.SCAN, OpKind.DOT, OpKind.FOR, OpKind.IF, OpKind.LOAD, OpKind.ATOMIC, OpKind.TRANS,
                  OpKind.RESHAPE)


def _elementwise_span(live: Liveness, vid: int, env: Mapping[str, Any]) -> bool:
    """A computed tile read only by element-wise ops (e.g. `x` in `x * sigmoid(x)`) with no whole-tile op
    between its definition and its last use: Triton lowers the chain element by element, and ptxas
    keeps one element of it at a time, not the tile. Measured (Triton 3.9, swiglu_fwd: silu(a) · b,
    bf16, 16 elements per thread): 32 registers — the two loaded tiles, the packed output and
    addressing — not the 16 extra words of the fp32 `a` that silu reads twice."""
    start, end = live.intervals[vid]
    return all(live.steps[i].op.kind not in _TILE_BARRIERS or _resolved_if(live.steps[i].op, env)
               for i in range(start + 1, end))


def _resolved_if(op: Op, env: Mapping[str, Any]) -> bool:
    """An `if` on a constexpr is resolved by Triton's code generator: only the taken branch is emitted, inline,
    so it splits no element-wise chain (cross_entropy_bwd's `if HAS_SMOOTHING` between exp and where)."""
    cond = op.if_attrs().cond if op.kind == OpKind.IF else None
    return cond is not None and not op.operands and not isinstance(cond.evaluate(env), Unknown)


def carry_streamed_data(live: Liveness, streamed: set[int], costs: dict[int, float],
                        own_size: Callable[[Value], float] | None = None) -> None:
    """A streamed value held across a whole-tile op (typically `x = tl.load(...).to(tl.float32)` followed by
    more loads before `x` is used) still holds its data: the operands that die where it is defined hand
    their registers to it. It costs the smaller of its own size and theirs (ptxas keeps the narrow loaded
    form and converts at the use). Measured (Triton 3.9, sm_90, residual_dropout: x and residual fp16
    loads, 16 elements per thread, tl.rand replaced by an affine term): 45 registers — both loaded tiles
    (16) are live together with the addresses, not one of them. It never holds more than its own tile
    (`own_size`): `partial_dw += tl.load(DW)` writes the sum over both dying operands, it does not keep them both
    (suite layernorm_bwd_dx_fused_kernel, whose `if count == 0: ... else: partial_dw += ...` lets the old
    partial_dw die in the else branch)."""
    step_index = {s.op.id: i for i, s in enumerate(live.steps) if not s.is_end}
    for vid in streamed:
        start, end = live.intervals[vid]
        if not any(live.steps[i].op.kind == OpKind.LOAD and live.steps[i].loops == live.steps[start].loops
                   for i in range(start + 1, end)):
            continue
        op = live.steps[start].op
        dying = [v for v in op.operands if v.shape and v.id in costs and v.id not in streamed
                 and live.intervals.get(v.id, (0, -1))[1] == step_index.get(op.id)]
        inherited = sum(costs[v.id] for v in dying)
        if inherited:
            own = costs.get(vid, 0.0)
            costs[vid] = inherited if own == 0.0 else min(own, inherited)
            if own_size is not None:
                costs[vid] = min(costs[vid], own_size(live.values[vid]))
