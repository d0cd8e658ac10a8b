"""Chained dots (attention): the first dot's tile is replicated across warps when the tile is short.

When a dot's result feeds, through element-wise ops, an operand of another dot (``p = softmax(q @ k)``,
then ``p @ v``), Triton gives the first dot's accumulator layout every warp along M, so that each row's
max and sum stay inside one warp (triton lib/Dialect/TritonGPU/Transforms/AccelerateMatmul.cpp,
warpsPerTileV2 / warpsPerTileV3: a dot with a dot in its forward slice gets warpsPerCTA = [num_warps, 1];
mma.sync gives [1, num_warps] instead when the product is wider than tall).
An MMA instruction covers 16 rows per warp, so a tile of M rows keeps only M / 16 warps busy; the others
hold copies of the same rows, and each thread's share of that tile is num_warps / (M / 16) times what an
even split gives. Checked in Triton 3.9 TTGIR: attention 64×64 · 8 warps on sm_90 →
``#mma warpsPerCTA = [8, 1], instrShape = [16, 32, 16]`` for q @ k (the second dot keeps [4, 2]); sm_80
gives [num_warps, 1] as well. ptxas (suite attn_fwd_causal, sm_90): 64×64 · 8 warps 114 registers and
128×64 · 16 warps 111, where the even split (half of 64×64 · 4 warps' 142, of 128×64 · 8 warps' 128)
would leave about 70.

On sm_100 up to 8 warps the product lives in tensor memory and is read back with a layout of its own (the
records above give 83 and 128 there): not applied. 16-warp sm_100 dots are mma.sync
(placement.mma_family), so there it is.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kernlint.analysis.liveness import Liveness, readers
from kernlint.analysis.placement import DotPlacement
from kernlint.ir.nodes import Op, OpKind, Value
from kernlint.ir.symbolic import as_int
from kernlint.ir.walk import walk_downstream

MMA_ROWS_PER_WARP = 16   # m16 of mma.sync; a wgmma warp group's 64 rows are 4 warps × 16
MMA_COLS_PER_WARP = 8    # n8 of mma.sync
_SAME_LAYOUT_OPS = (OpKind.ELEMENTWISE, OpKind.CAST)


def _dims(value: Value, env: Mapping[str, Any]) -> tuple[int | None, ...]:
    return tuple(as_int(d.evaluate(env)) for d in value.shape)


def _busy_warps(d: DotPlacement, num_warps: int) -> int:
    """Warps that hold distinct elements of a chained dot's product. wgmma: all warps along M. mma.sync:
    along M when M ≥ N, else along N, 8 columns per warp (Triton 3.9 TTGIR, fused-MLP probe: 32×64 · 4 warps
    `warpsPerCTA = [1, 4]`, 64×64 · 8 warps `[8, 1]`, on sm_80 and, below 64 rows, sm_90)."""
    m = d.m or 0
    if d.async_mma or m >= (d.n or 0):
        return max(1, min(num_warps, m // MMA_ROWS_PER_WARP))
    return max(1, min(num_warps, (d.n or 0) // MMA_COLS_PER_WARP))


def chained_replication(live: Liveness, dots: list[DotPlacement], env: Mapping[str, Any], num_warps: int,
                        tensor_core: str) -> dict[int, float]:
    """Value id → factor on its per-thread registers, for the tiles of a chained dot's first product."""
    if tensor_core not in ("mma_sync", "wgmma") or num_warps <= 1:
        return {}
    dot_operands = {v.id for d in dots for v in d.op.operands[:2]}
    users = readers(live)
    out: dict[int, float] = {}
    for d in dots:
        result = d.op.result
        if result is None or d.fma or not d.m or not d.n or len(result.shape) != 2:
            continue
        busy = _busy_warps(d, num_warps)
        if busy >= num_warps:
            continue
        shape = _dims(result, env)
        feeds_dot = False

        def visit(op: Op, value: Value) -> tuple[Value, ...]:
            nonlocal feeds_dot
            if op.kind == OpKind.DOT:
                feeds_dot = feeds_dot or (value.id in dot_operands and op is not d.op)  # A or B, not the acc
                return ()
            nxt = op.result
            return (nxt,) if op.kind in _SAME_LAYOUT_OPS and nxt is not None and _dims(nxt, env) == shape else ()

        # the element-wise forward slice that keeps the product's shape (and layout)
        slice_ids = {v.id for v in walk_downstream((result,), users, visit, bound=None)}
        if feeds_dot:
            for vid in slice_ids:
                out[vid] = max(out.get(vid, 1.0), num_warps / busy)
    return out
