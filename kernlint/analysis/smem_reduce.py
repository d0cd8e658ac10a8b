"""Shared-memory scratch of reductions and scans (Triton 3.9), derived from the blocked layout of the operand.

Triton reduces and scans in registers, then lanes (shuffles); only partials of different warps meet in
shared memory, so the scratch follows the operand's blocked layout, rebuilt here as Triton builds it:

* Coalesce gives each global access `sizePerThread = min(16 B / element, contiguity)` along the last dim,
  the maximum over the memory ops of the same shape, capped at `numel / (32 · num_warps)` (triton lib/Dialect/
  TritonGPU/Transforms/Coalesce.cpp); a tile no access of its shape reaches keeps `sizePerThread = 1`;
* lanes then warps are spread from the contiguous dim outwards, each dim taking at most `shape / sizePerThread`
  threads, the last (slowest) dim taking what is left (triton lib/Dialect/TritonGPU/IR/Dialect.cpp,
  BlockedEncodingAttr::get / getDefaultBlockedEncoding);
* as a linear layout, bases that fall outside the shape are broadcast (zero) and a shape larger than the
  layout's coverage adds register bases on top (toLinearLayout, ensureLayoutNot{Larger,Smaller}Than).

Rules (read in triton lib/Analysis/Utility.cpp and lib/Tools/GenericSwizzling.cpp, checked against compiles):
* reduce (ReduceOpHelper::getScratchSizeInBytes): none when one warp holds the whole axis; otherwise the
  per-warp partials (non-axis elements × distinct warps on the axis) go through a swizzled layout conversion
  whose scratch is the tensor size divided by the "reps" (register bases neither vectorised nor needed to fill
  the 32 banks, which are moved in rounds), summed over the operands (a tuple `tl.reduce` has several,
  argmax/argmin add an i32 index). Measured Triton 3.9: welford [64, 512] bf16 tuple of 3, 2 warps → 384 B
  (32 partials × 12 B, reps 4); [1, 1024] 4 warps → 48 B;
* scan (ScanLoweringHelper::getScratchSizeInBytes): none when one warp holds the axis; otherwise
  Σ operand bytes × num_warps × lanes off the axis × elements per thread off the axis × blocks along the
  axis × blocks off the axis (linear recurrence [64, 32] fp32 pair, 4 warps → 2,048 B, measured);
* a reduced tile stored through its own 1-D pointers is converted from the sliced layout to the store's
  through shared memory when the warps hold different elements in the two (welford [8] fp32 mean, 4 warps
  → 32 B; fp8 quantizer per-group scale [G] → 4·G B): smem_reduced_store.py."""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kernlint.analysis.access_layout import Access, memory_order, memory_shapes, size_per_thread
from kernlint.analysis.axis_info import tile_shape
from kernlint.analysis.liveness import Liveness
from kernlint.hardware.specs import GpuSpec
from kernlint.ir.nodes import Op, OpKind, Value, element_bytes
from kernlint.ir.walk import bounded_walk

LANES = 32


@dataclass(frozen=True, slots=True)
class ScratchUse:
    loop: int | None      # innermost loop holding the op (None: top level)
    label: str
    bytes: int
    detail: str
    line: int


@dataclass(frozen=True, slots=True)
class Layout:
    """A blocked layout as per-dim lists of bit kinds, low to high: "reg" (sizePerThread), "lane", "warp",
    "rep" (register repeats beyond the layout's coverage); broadcast bits are left out."""
    bits: tuple[tuple[str, ...], ...]
    order: tuple[int, ...]          # fastest dim first


def _log2(n: int) -> int | None:
    return n.bit_length() - 1 if n > 0 and n & (n - 1) == 0 else None


def blocked_layout(shape: list[int], size_per_thread_last: int, num_warps: int,
                   order: tuple[int, ...] | None = None) -> Layout | None:
    """Triton's BlockedEncodingAttr::get for `spt` elements per thread along the fastest dim of `order`
    (default [rank-1, …, 0]: the last dim)."""
    rank = len(shape)
    if rank == 0 or any(_log2(d) is None for d in shape) or _log2(num_warps) is None:
        return None
    order = order if order is not None and len(order) == rank else tuple(range(rank - 1, -1, -1))
    spt = [1] * rank
    spt[order[0]] = size_per_thread_last
    tpw, wpc = [1] * rank, [1] * rank
    lanes_left, threads_left, warps_left = LANES, LANES * num_warps, num_warps
    prev_lanes = prev_warps = 1
    for i in order[:-1]:
        threads = max(1, min(threads_left, max(1, shape[i] // spt[i])))
        tpw[i] = max(1, min(threads, lanes_left))
        wpc[i] = max(1, min(threads // tpw[i], warps_left))
        warps_left //= wpc[i]
        lanes_left //= tpw[i]
        threads_left = max(1, threads_left // threads)
        prev_lanes *= tpw[i]
        prev_warps *= wpc[i]
    tpw[order[-1]] = max(1, LANES // prev_lanes)
    wpc[order[-1]] = max(1, num_warps // prev_warps)
    bits = []
    for d in range(rank):
        kinds = ["reg"] * (_log2(spt[d]) or 0) + ["lane"] * (_log2(tpw[d]) or 0) + ["warp"] * (_log2(wpc[d]) or 0)
        need = _log2(shape[d]) or 0
        kinds = kinds[:need] + ["rep"] * max(0, need - len(kinds))
        bits.append(tuple(kinds))
    return Layout(tuple(bits), order)


def _swizzled_cvt_elems(total_bits: int, regs: list[int], lanes_src: list[int], lanes_dst: list[int],
                        bitwidth: int) -> int:
    """Elements of scratch of a layout conversion whose source and destination share their register bases
    (the reduction's partials → lanes step): 2^total_bits / reps (GenericSwizzling.cpp optimalSwizzlingLdSt:
    vector = shared registers up to 128 bits; the lanes covered by the vector leave the bank tiles; the bank
    takes log2(1024 / (vector · bitwidth)) bases; the segment takes the lowest bases in neither tile, and
    those that are registers on both sides become reps)."""
    max_vec = _log2(max(1, 128 // bitwidth)) or 0
    vec = regs[:max_vec]
    tile_src, tile_dst = list(lanes_src), list(lanes_dst)
    if (1 << len(vec)) * bitwidth > 32:
        drop = _log2((1 << len(vec)) * bitwidth // 32) or 0
        tile_src, tile_dst = tile_src[:len(tile_src) - drop], tile_dst[:len(tile_dst) - drop]
    bank_src = {b for b in vec + tile_src if b >= 0}
    bank_dst = {b for b in vec + tile_dst if b >= 0}
    len_bank = min(_log2(max(1, 1024 // ((1 << len(vec)) * bitwidth))) or 0, total_bits - len(vec))
    len_segment = total_bits - len(vec) - len_bank
    free = [b for b in range(total_bits) if b not in bank_src and b not in bank_dst]
    segment = free[:len_segment]
    reps = sum(1 for b in segment if b in regs)
    return 1 << (total_bits - reps)


def reduce_scratch_bytes(layout: Layout, axis: int, operand_bits: list[int]) -> int:
    """ReduceOpHelper::getScratchSizeInBytes for a blocked operand layout."""
    if not layout.bits[axis].count("warp"):
        return 0
    # Flatten the reduced layout (dim 0 most minor): the axis keeps only its warp bits (partials), every
    # other dim keeps all its bits. Bases are bit positions; -1 marks a broadcast (zero) basis.
    pos = 0
    where: dict[tuple[int, int], int] = {}
    for d, kinds in enumerate(layout.bits):
        for j, kind in enumerate(kinds):
            if d == axis and kind != "warp":
                continue
            where[(d, j)] = pos
            pos += 1
    total_bits = pos

    def bases(kind_set: tuple[str, ...]) -> list[tuple[int, int]]:
        out = []
        for d in layout.order:
            out.extend((d, j) for j, k in enumerate(layout.bits[d]) if k in kind_set)
        return out

    regs = [where[b] for b in bases(("reg",)) if b[0] != axis] + \
           [where[b] for b in bases(("rep",)) if b[0] != axis]
    lane_src = [where[b] if b[0] != axis else -1 for b in bases(("lane",))]
    lane_src += [-1] * (5 - len(lane_src))               # broadcast lanes
    warp_axis = [where[b] for b in bases(("warp",)) if b[0] == axis]
    # getInterLayout: the axis warp bases move into zero lanes if there are enough, else into lanes 0…k-1.
    lane_dst = list(lane_src)
    zero = [i for i, b in enumerate(lane_src) if b < 0]
    slots = zero if len(zero) >= len(warp_axis) else list(range(len(warp_axis)))
    for slot, basis in zip(slots, warp_axis):
        lane_dst[slot] = basis
    total = 0
    for bits in operand_bits:
        total += _swizzled_cvt_elems(total_bits, regs, lane_src, lane_dst, bits) * max(1, bits // 8)
    return total


def scan_scratch_bytes(shape: list[int], layout: Layout, axis: int, operand_bytes: int, num_warps: int) -> int:
    """ScanLoweringHelper::getScratchSizeInBytes."""
    def count(d: int, kinds: tuple[str, ...]) -> int:
        return 1 << sum(1 for k in layout.bits[d] if k in kinds)

    if count(axis, ("warp",)) == 1:
        return 0
    warps = math.prod(count(d, ("warp",)) for d in range(len(shape)))
    lanes_off_axis = math.prod(count(d, ("lane",)) for d in range(len(shape)) if d != axis)
    elems_off_axis = math.prod(count(d, ("reg",)) for d in range(len(shape)) if d != axis)
    blocks_axis = count(axis, ("rep",))
    blocks_off_axis = math.prod(count(d, ("rep",)) for d in range(len(shape)) if d != axis)
    return operand_bytes * warps * lanes_off_axis * elems_off_axis * blocks_axis * blocks_off_axis


# -- layouts of the kernel's tiles ----------------------------------------------------------------------
def _dims(value: Value, env: Mapping[str, Any]) -> list[int] | None:
    dims = tile_shape(value, env)
    return list(dims) if dims is not None else None


def reshaped_layout(layout: Layout, dims: list[int]) -> Layout | None:
    """tt.reshape keeps each element in its thread: the row-major bit sequence (last dim lowest) of the source
    layout is re-split over the new shape (measured: fp8 quantizer [2048] spt 8 → [16, 128] as
    sizePerThread [1, 8], threadsPerWarp [2, 16], warpsPerCTA [8, 1])."""
    flat = [k for kinds in reversed(layout.bits) for k in kinds]
    bits: list[tuple[str, ...]] = []
    for d in reversed(dims):
        n = _log2(d)
        if n is None:
            return None
        bits.append(tuple(flat[:n]))
        flat = flat[n:]
    if flat:
        return None
    return Layout(tuple(reversed(bits)), tuple(range(len(dims) - 1, -1, -1)))


def tile_layout(value: Value, producers: Mapping[int, Op], env: Mapping[str, Any],
                memory: list[Access], num_warps: int, depth: int = 0) -> Layout | None:
    """The blocked layout of a tile: that of a reshaped tile when it comes (element-wise) from a tl.reshape,
    else the coalesced layout of the global accesses of its shape."""
    dims = _dims(value, env)
    if dims is None:
        return None
    def same_shape_operands(v: Value) -> list[Value]:
        op = producers.get(v.id)
        if op is None or op.kind not in (OpKind.ELEMENTWISE, OpKind.CAST):
            return []
        return [x for x in op.operands if x.shape == value.shape]

    for v in bounded_walk((value,), same_shape_operands, bound=32) if depth < 4 else ():
        op = producers.get(v.id)
        if op is not None and op.kind == OpKind.RESHAPE and op.operands and _dims(op.operands[0], env):
            src = tile_layout(op.operands[0], producers, env, memory, num_warps, depth + 1)
            return reshaped_layout(src, dims) if src is not None else None
    return blocked_layout(dims, size_per_thread(dims, memory, num_warps), num_warps, memory_order(dims, memory))


def from_dot(value: Value, producers: Mapping[int, Op]) -> bool:
    """Whether a tile is (element-wise) derived from a dot result, i.e. still in the MMA layout."""
    for _ in range(8):
        op = producers.get(value.id)
        if op is None or not op.operands:
            return False
        if op.kind == OpKind.DOT:
            return True
        if op.kind not in (OpKind.ELEMENTWISE, OpKind.CAST, OpKind.VIEW):
            return False
        # follow the data operand (not a mask) of the widest rank
        value = max(op.operands, key=lambda v: (len(v.shape), v.dtype != "i1"))
    return False


def _mma_reduce_scratch(dims: list[int], axis: int, nbytes: int, num_warps: int) -> int:
    """MMA layouts put warps along rows: a row reduction (axis 1) stays inside a warp (attention's row
    max/sum needs no scratch); a column reduction meets the warps of each column."""
    if axis != 0 or len(dims) < 2:
        return 0
    warps_on_axis = min(num_warps, dims[0])
    return nbytes * math.prod(dims[1:]) * warps_on_axis if warps_on_axis > 1 else 0


def _operand_bits(op: Op) -> list[int]:
    bits = [max(8, int(element_bytes(v.dtype) * 8)) for v in op.operands]
    if op.fn in ("argmax", "argmin"):
        bits.append(32)  # the i32 index travels with the value
    return bits


def reduction_scratch(live: Liveness, producers: Mapping[int, Op], env: Mapping[str, Any],
                      num_warps: int, spec: GpuSpec) -> list[ScratchUse]:
    """Scratch of every reduce and scan, and of the conversion of a reduced tile to its store's layout."""
    if num_warps <= 1:
        return []
    memory = memory_shapes(live, env, producers)
    uses: list[ScratchUse] = []
    reduce_layouts: dict[int, tuple[Layout, int]] = {}   # reduce result id → operand layout, axis
    for step in live.steps:
        op = step.op
        if step.is_end or op.kind not in (OpKind.REDUCE, OpKind.SCAN) or not op.operands:
            continue
        loop = step.loops[-1] if step.loops else None
        src = op.operands[0]
        dims = _dims(src, env)
        axis = op.reduce_attrs().axis if op.kind == OpKind.REDUCE else op.axis_attrs().axis
        if dims is None:
            continue
        if axis is None and op.kind == OpKind.SCAN:
            axis = 0  # tl.cumsum / tl.cumprod default
        elif axis is None:  # axis=None reduces the flattened tile
            dims, axis = [math.prod(dims)], 0
        layout = (tile_layout(src, producers, env, memory, num_warps) if len(dims) == len(src.shape)
                  else blocked_layout(dims, size_per_thread(dims, memory, num_warps), num_warps,
                                      memory_order(dims, memory)))
        if op.kind == OpKind.SCAN:
            if layout is None or from_dot(src, producers):
                continue
            nbytes = scan_scratch_bytes(dims, layout, axis, sum(int(element_bytes(v.dtype)) for v in op.operands),
                                        num_warps)
            if nbytes:
                uses.append(ScratchUse(loop, "scan scratch", nbytes, f"cross-warp scan of {len(op.operands)} "
                                       f"operand(s) over axis {axis}", op.line))
            continue
        if from_dot(src, producers):
            nbytes = _mma_reduce_scratch(dims, axis, int(max(4, element_bytes(src.dtype))), num_warps)
        elif layout is None:
            continue
        else:
            nbytes = reduce_scratch_bytes(layout, axis, _operand_bits(op))
            for result in op.all_results():
                reduce_layouts[result.id] = (layout, axis)
        if nbytes:
            uses.append(ScratchUse(loop, "reduction scratch", nbytes, f"cross-warp {op.fn}", op.line))
    if reduce_layouts:
        # imported here: smem_reduced_store builds on this module's layouts
        from kernlint.analysis.smem_reduced_store import reduced_store_conversions
        uses.extend(reduced_store_conversions(live, producers, env, num_warps, memory, reduce_layouts, spec))
    return uses
