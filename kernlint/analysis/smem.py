"""Shared memory and tensor memory per (kernel, config, target), broken down per buffer.

Rules measured with Triton 3.9 / ptxas 13.4 (shared/reference/triton_truth.md) and on an H200 with
Triton 3.6 (DESIGN.md §5):
* pipelined dot operands: num_stages buffers of (BM·BK + BK·BN)·bytes when the dot runs on wgmma/tcgen05
  (sm_90/sm_100, ≥ 4 warps, BM ≥ 64), num_stages − 1 buffers on cp.async targets (sm_80/89/120) and for
  the mma.sync fallback on sm_90; exact for every measured matmul config;
* sm_100 adds 16 B of mbarriers per pipelined loop (24,592 = 24,576 + 16);
* loads in a `tl.range(..., num_stages=S)` loop without a dot: S − 1 buffers (softmax: BLOCK·4 B at S = 2);
* cross-warp reductions: element bytes × num_warps of scratch (softmax, layernorm: 4·num_warps B);
* buffers are reused between loops (Triton's allocator is liveness based), so the total is a peak.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kernlint.analysis.dot_buffers import loop_dot_buffers, multi_dot_loops
from kernlint.analysis.liveness import Liveness
from kernlint.analysis.placement import DotPlacement, numel
from kernlint.hardware.specs import GpuSpec
from kernlint.ir.nodes import Op, Value, element_bytes, pointee
from kernlint.ir.symbolic import as_int

SM100_BARRIER_BYTES = 16
# One 8-byte mbarrier per pipeline stage for TMA copies (measured, Triton 3.9 sm_90: 3 stages → +24 B,
# 4 → +32, 5 → +40 over the operand buffers of a tensor-descriptor matmul).
TMA_BARRIER_BYTES = 8


@dataclass(frozen=True, slots=True)
class SmemBuffer:
    label: str
    bytes: int
    detail: str
    line: int


@dataclass(frozen=True, slots=True)
class SmemEstimate:
    total: int
    buffers: tuple[SmemBuffer, ...]   # the buffers alive at the peak
    tmem_columns: int
    complete: bool                    # False when a shape was unknown


def _stages_for(loop_stages: int, spec: GpuSpec, async_mma: bool) -> int:
    if spec.pipeline_rule == "async_all_stages" and async_mma:
        return max(1, loop_stages)
    return max(1, loop_stages - 1)


def estimate_smem(live: Liveness, dots: list[DotPlacement], env: Mapping[str, Any], spec: GpuSpec,
                  num_warps: int, num_stages: int) -> SmemEstimate:
    complete = True
    loop_ops = {s.op.id: s.op for s in live.steps if s.op.kind == "for" and not s.is_end}
    per_loop: dict[int | None, list[SmemBuffer]] = {}

    def loop_stages(loop_id: int) -> tuple[int, bool]:
        explicit = loop_ops[loop_id].attrs.get("num_stages")
        if explicit is not None:
            value = as_int(explicit.evaluate(env))
            if value is not None:
                return value, True
        return num_stages, False

    # Loops with several dots (attention) count their buffers per loaded tile (kernlint/analysis/dot_buffers.py).
    shared_tile_loops = multi_dot_loops(dots)
    for loop_id in shared_tile_loops:
        stages, _ = loop_stages(loop_id)
        per_loop[loop_id] = [SmemBuffer(*b) for b in loop_dot_buffers(live, dots, loop_id, env, spec, num_warps,
                                                                       stages)]
    dot_loops: set[int] = set(shared_tile_loops)
    for d in dots:
        if d.in_loop in shared_tile_loops:
            continue
        if d.in_loop is not None and d.pipelined_operands:
            dot_loops.add(d.in_loop)
            stages, _ = loop_stages(d.in_loop)
            # TMA (tensor-descriptor) copies keep num_stages buffers on sm_90/sm_100 even when the MMA is
            # mma.sync (measured: 64×64×16, 2 warps, 2 stages → 8,192 B + barriers on sm_90).
            buffers = _stages_for(stages, spec, d.async_mma or (d.tma and spec.tensor_core != "mma_sync"))
            if d.operand_bytes == 0:
                complete = False
            per_loop.setdefault(d.in_loop, []).append(SmemBuffer(
                "dot operands", buffers * d.operand_bytes,
                f"{buffers} × {d.operand_bytes:,} B ({'wgmma' if d.async_mma and spec.tensor_core == 'wgmma' else spec.tensor_core if d.async_mma else 'mma.sync'}, num_stages={stages})",
                d.op.line))
        if d.in_loop is not None and d.computed_operand_bytes:
            stages, _ = loop_stages(d.in_loop)
            group = per_loop.setdefault(d.in_loop, [])
            if d.feeding_load_bytes and stages > 1:
                group.append(SmemBuffer("pipelined loads feeding a computed operand",
                                        (stages - 1) * d.feeding_load_bytes,
                                        f"{stages - 1} × {d.feeding_load_bytes:,} B", d.op.line))
            group.append(SmemBuffer("computed dot operand", d.computed_operand_bytes,
                                    f"1 × {d.computed_operand_bytes:,} B", d.op.line))
            dot_loops.add(d.in_loop)
        if d.staged_bytes:
            per_loop.setdefault(d.in_loop, []).append(SmemBuffer(
                "loop-invariant dot operand", d.staged_bytes, f"1 × {d.staged_bytes:,} B", d.op.line))
    # Loads pipelined by an explicit tl.range(num_stages=...) loop without a dot.
    for step in live.steps:
        op = step.op
        if step.is_end or op.kind != "load" or not step.loops or op.result is None or not op.result.shape:
            continue
        loop_id = step.loops[-1]
        if loop_id in dot_loops:
            continue
        stages, explicit = loop_stages(loop_id)
        if not explicit or stages < 2:
            continue
        size = numel(op.result, env)
        if size is None:
            complete = False
            continue
        nbytes = int(size * element_bytes(op.result.dtype)) * (stages - 1)
        per_loop.setdefault(loop_id, []).append(SmemBuffer(
            "pipelined load", nbytes, f"{stages - 1} × {size:,} × {element_bytes(op.result.dtype):g} B", op.line))
    if spec.tensor_core == "tcgen05":
        for loop_id in {d.in_loop for d in dots if d.async_mma and d.in_loop in dot_loops} - shared_tile_loops:
            nbytes = SM100_BARRIER_BYTES
            if any(d.tma for d in dots if d.in_loop == loop_id):
                stages, _ = loop_stages(loop_id)  # + one 8-B TMA mbarrier per stage, 16-B aligned
                nbytes = -(-(SM100_BARRIER_BYTES + TMA_BARRIER_BYTES * stages) // 16) * 16
            per_loop[loop_id].append(SmemBuffer("mbarriers", nbytes, "pipeline barriers", loop_ops[loop_id].line))
    elif spec.tensor_core == "wgmma":
        for loop_id in {d.in_loop for d in dots if d.tma and d.in_loop in dot_loops}:
            stages, _ = loop_stages(loop_id)
            per_loop[loop_id].append(SmemBuffer("mbarriers", TMA_BARRIER_BYTES * stages, "TMA barriers, one per stage",
                                                loop_ops[loop_id].line))
    # Reduction scratch (reused; the largest one counts, alongside the buffers of its loop).
    producers = {v.id: s.op for s in live.steps if not s.is_end for v in s.op.all_results()}
    scratch: dict[int | None, SmemBuffer] = {}
    for step in live.steps:
        op = step.op
        if step.is_end or op.kind != "reduce":
            continue
        nbytes = _reduce_scratch(op.attrs, op.operands[0].dtype, env, num_warps,
                                 _from_dot(op.operands[0], producers))
        key = step.loops[-1] if step.loops else None
        if nbytes and (key not in scratch or scratch[key].bytes < nbytes):
            scratch[key] = SmemBuffer("reduction scratch", nbytes, f"cross-warp {op.attrs.get('fn')}", op.line)
    for step in live.steps:
        op = step.op
        if step.is_end or op.kind != "store" or num_warps < 2:
            continue
        nbytes = _store_conversion_scratch(op, live, producers, env, num_warps)
        key = step.loops[-1] if step.loops else None
        if nbytes and (key not in scratch or scratch[key].bytes < nbytes):
            scratch[key] = SmemBuffer("layout conversion", nbytes, "fp32 store of a tile computed from 16-bit loads",
                                      op.line)
    best: tuple[SmemBuffer, ...] = ()
    best_total = 0
    for key in set(per_loop) | set(scratch):
        group = list(per_loop.get(key, []))
        if key in scratch:
            group.append(scratch[key])
        total = sum(b.bytes for b in group)
        if total > best_total:
            best, best_total = tuple(group), total
    tmem = _tmem_columns(dots)
    return SmemEstimate(best_total, best, tmem, complete)


def _store_conversion_scratch(store: Op, live: Liveness, producers: Mapping[int, Op], env: Mapping[str, Any],
                              num_warps: int) -> int:
    """Layout conversion before a 1-D fp32 store of values computed from 8-bit/16-bit loads.

    Triton picks each access's layout from its vector width (16 B: 8 halves, 4 floats), so such a tile is
    converted through shared memory, one 32-thread × 8-element × 4-B slab per warp. Measured (Triton 3.9,
    layernorm/rmsnorm backward, sm_80/90/100): num_warps × 1,024 B (2 warps 2,048 … 16 warps 16,384); a
    single warp converts with shuffles (0 B).
    """
    value = store.operands[1] if len(store.operands) > 1 else None
    pointer = store.operands[0]
    # what is written is the pointer's element type (Triton casts the value at the store)
    if value is None or len(value.shape) != 1 or element_bytes(pointee(pointer.dtype)) != 4:
        return 0
    carried = {c.arg.id: (c.init, c.yielded) for s in live.steps if s.op.kind == "for" and not s.is_end
               for c in s.op.attrs.get("carried", ())}
    narrow = 0
    stack, seen = [value], set()
    while stack and len(seen) < 64:
        v = stack.pop()
        if v.id in seen:
            continue
        seen.add(v.id)
        if v.id in carried:
            stack.extend(carried[v.id])
            continue
        op = producers.get(v.id)
        if op is None:
            continue
        if op.kind == "load":
            if op.result is not None and op.result.shape and element_bytes(op.result.dtype) < 4:
                narrow = max(narrow, int(16 // element_bytes(op.result.dtype)))
            continue
        if op.kind in ("elementwise", "cast", "view"):
            stack.extend(x for x in op.operands if x.shape)
    if not narrow:
        return 0
    size = numel(value, env)
    slab = 32 * num_warps * min(narrow, 8)
    return 4 * min(size, slab) if size else 0


def _from_dot(value: Value, producers: Mapping[int, Op]) -> bool:
    """Whether a tile is (element-wise) derived from a dot result, i.e. still in the MMA layout."""
    for _ in range(8):
        op = producers.get(value.id)
        if op is None or not op.operands:
            return False
        if op.kind == "dot":
            return True
        if op.kind not in ("elementwise", "cast", "view"):
            return False
        # follow the data operand (not a mask) of the widest rank
        value = max(op.operands, key=lambda v: (len(v.shape), v.dtype != "i1"))
    return False


def _reduce_scratch(attrs: Mapping[str, Any], dtype: str, env: Mapping[str, Any], num_warps: int,
                    mma_layout: bool = False) -> int:
    if num_warps <= 1:
        return 0
    in_shape = attrs.get("in_shape", ())
    axis = attrs.get("axis")
    dims = [as_int(d.evaluate(env)) for d in in_shape]
    if any(d is None for d in dims):
        return 0
    nbytes = int(max(4, element_bytes(dtype)))
    if len(dims) <= 1 or axis is None:
        return nbytes * num_warps
    # 2-D blocked layouts put warps along dim 0: reducing axis 0 crosses warps, axis 1 stays in a warp.
    rows = dims[0] or 1
    if axis == 0:
        warps_on_axis = min(num_warps, rows)
        out = 1
        for i, d in enumerate(dims):
            if i != axis:
                out *= d or 1
        return nbytes * out * warps_on_axis if warps_on_axis > 1 else 0
    if mma_layout:
        return 0  # MMA layouts keep a row inside one warp (attention's row max/sum needs no scratch)
    # Blocked layouts from loads spread a wide row over warps: one partial per row and warp group.
    # Measured (Triton 3.9): fp8 quantizer absmax over [G, 128] → 4·G B for G = 2…128, 1–16 warps.
    return nbytes * rows * max(1, num_warps // rows)


def _tmem_columns(dots: list[DotPlacement]) -> int:
    cols_by_loop: dict[int | None, int] = {}
    for d in dots:
        if d.tmem_accumulator and d.m is not None and d.n is not None:
            cols = -(-d.m // 128) * d.n  # 128 lanes; a 256-row tile takes two column blocks
            cols_by_loop[d.in_loop] = cols_by_loop.get(d.in_loop, 0) + cols
    peak = max(cols_by_loop.values(), default=0)
    if peak == 0:
        return 0
    alloc = 32  # tcgen05.alloc hands out powers of two, at least 32 columns (PTX ISA, tcgen05.alloc)
    while alloc < peak:
        alloc *= 2
    return alloc
