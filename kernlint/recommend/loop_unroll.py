"""How many iterations of an unpipelined row loop ptxas keeps in flight at once (its ×4 unroll).

Split from model.py: the time model asks this once per loop; the facts behind it are SASS read-offs."""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from kernlint.analysis.liveness import walk_ops
from kernlint.ir.nodes import Op, OpKind, element_bytes


def numel_of(shape: tuple[Any, ...], env: Mapping[str, Any]) -> float:
    """Elements of a tile shape under the config's constexprs (an unknown dimension counts 1)."""
    n = 1.0
    for d in shape:
        v = d.evaluate(env)
        n *= v if isinstance(v, (int, float)) and not isinstance(v, bool) else 1
    return n


PTXAS_UNROLL = 4               # ptxas unrolls small runtime-bound loops by 4 (then a 2- and a 1-iteration tail)
UNROLL_MAX_BYTES_PER_THREAD = 16
# ptxas issues at most ~9 of an unrolled body's load instructions before the first use of their data; the
# rest wait for that round trip. SASS of examples/rmsnorm.py pass 1 (Triton 3.9, sm_90, scalar fp16 loads,
# 4 elements per thread at 4, 8, 16 and 32 warps): 16 LDG.U16 per unrolled body, 9-10 issued before the first
# HADD2 that converts a loaded value, the other 6-7 after it; at 2 elements per thread all 8 go first
# (Triton 3.6 at 32 warps: 9 of 16, and 8 of 8).
HOISTED_LOADS = 9


def ptxas_unroll(loop: Op, trips: int, num_warps: int, env: Mapping[str, Any], dot_inputs: set[int],
                 vectorised: Callable[[Any], bool] = lambda mask: True) -> float:
    """How many iterations of an unpipelined loop have their loads in flight at once (per round trip).

    ptxas unrolls a small loop body by 4 and hoists the loads of the 4 iterations above their uses, so one
    round trip brings 4 iterations' data. Read off the SASS of examples/layernorm.py (Triton 3.6, sm_90,
    nvdisasm): passes 1-2 at 4-8 fp16 elements per thread (≤ 16 B loaded per thread per iteration) are
    unrolled ×4, at 16 fp16 or fp32 elements (32-64 B) they are not; a body that stores (pass 3) is unrolled
    too, but its next loads are issued after the store (they may alias it), so nothing is gained there.
    A body that reduces across the tile (cross-entropy's online max/sum: shuffles and a barrier per
    iteration) is not counted either: replaying the saved H200 timings with it counted picked 0.72 of the
    best cross-entropy config instead of 0.96.
    The limit is on registers filled, not bytes moved: an unvectorised (scalar) load puts each fp16 element in
    its own 32-bit register. SASS of examples/rmsnorm.py (Triton 3.6 and 3.9, sm_90, n_cols do_not_specialize,
    32 warps): pass 1 at 4 elements per thread (16 B of registers) is unrolled ×4, at 8 elements (32 B) not.
    Unrolled, the loads still go out in batches of at most HOISTED_LOADS instructions: 4 unrolled iterations
    of 4 scalar loads (16 instructions) take two round trips, so 2 iterations are in flight per round trip,
    the same 8 loads as 4 iterations at 2 elements per thread.
    Dot loops are Triton's software pipeline's business (num_stages), not this."""
    body = [op for region in loop.regions for op in region.ops]
    if any(op.kind in (OpKind.STORE, OpKind.ATOMIC, OpKind.FOR, OpKind.REDUCE, OpKind.SCAN, OpKind.DOT) for op in walk_ops(body)):
        return 1
    per_thread = 0.0
    instructions = 0.0   # load instructions per thread per iteration
    for op in body:
        if op.kind != OpKind.LOAD or op.result is None or not op.result.is_tile:
            continue
        if op.result.id in dot_inputs:
            return 1
        v = op.result
        # bytes of registers the loads fill: an unvectorised access loads each element into its own 32-bit
        # register (fp16 via LDG.U16), so 4 fp16 elements per thread fill 16 B of registers, not 8
        mask = op.operands[1] if len(op.operands) > 1 else None
        vec = vectorised(mask)
        ebytes = element_bytes(v.dtype) if vec else max(4, element_bytes(v.dtype))
        elems = numel_of(v.shape, env) / (32.0 * max(1, num_warps))
        per_thread += elems * ebytes
        # vectorised: one instruction per 16-B chunk; scalar: one per element
        instructions += max(1.0, math.ceil(elems * element_bytes(v.dtype) / 16.0) if vec else elems)
    if per_thread == 0 or per_thread > UNROLL_MAX_BYTES_PER_THREAD:
        return 1
    unroll = max(1, min(PTXAS_UNROLL, trips))
    return unroll / math.ceil(unroll * instructions / HOISTED_LOADS)
