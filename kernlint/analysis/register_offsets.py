"""Registers of 1-D offset vectors that are not affine in the thread index (e.g. clamped with `tl.where`).

An offset vector built as `base + tl.arange` is one register (pair) per thread: every element a thread needs
is an immediate away from it. A clamped vector (`tl.where(offs < N, offs, 0)`: AxisInfo contiguity 1, Triton
lib/Analysis/AxisInfo.cpp) has no such relation: each element a thread uses is its own register, two for
int64. A thread uses the elements of its positions along that dim in the 2-D tile the vector is broadcast
into, i.e. the registers of the slice of that tile's blocked layout (#ttg.slice<{dim, parent = #blocked}>,
sizePerThread a 16-byte vector along the contiguous dim). Measured (Triton 3.9, sm_100,
examples/persistent_matmul.py 64×64×64 w4: offs_bn clamped and widened to int64, tensor<64xi64,
#ttg.slice<{dim = 0, parent = #blocked [1, 8] / [4, 8] / [4, 1]}>>): 8 elements per thread, held as eight
64-bit column bases (IMAD.WIDE R, row, 0x2, R4..R19 before each LDG.E.U16 in the SASS).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kernlint.analysis.axis_info import Contiguity, tile_shape
from kernlint.analysis.linear_layout import slice_of
from kernlint.analysis.liveness import Liveness, readers
from kernlint.analysis.placement import _producer_map
from kernlint.ir.nodes import Op, OpKind, Value, element_bytes, is_pointer, pointee
from kernlint.ir.walk import bounded_walk


def non_affine_offset_costs(live: Liveness, env: Mapping[str, Any], num_warps: int) -> dict[int, float]:
    """Registers per thread of each 1-D integer vector that AxisInfo finds not contiguous, by value id."""
    producers = _producer_map(live)
    users = readers(live)
    axis = Contiguity(producers, env)
    out: dict[int, float] = {}
    for vid, value in live.values.items():
        if not _read_in_inner_loop(live, vid):
            continue  # used where it is defined: the element-wise chain recomputes it per element
        if len(value.shape) != 1 or is_pointer(value.dtype) or not value.dtype.startswith(("i", "u")) \
                or value.dtype == "i1":
            continue
        shape = tile_shape(value, env)
        info = axis.info(value)
        if shape is None or shape[0] < 2 or info is None or info[0][0] != 1 or info[1][0] != 1:
            continue  # contiguous (affine) or constant: one register (pair) per thread
        per_thread = _elements_per_thread(value, users, env, num_warps)
        if per_thread is not None:
            out[vid] = per_thread * max(1.0, element_bytes(value.dtype) / 4)
    return out


def _read_in_inner_loop(live: Liveness, vid: int) -> bool:
    """Whether the value is defined outside a loop and read inside it (its live range ends at that loop's
    end): every iteration reads it again, so it is held, not streamed."""
    start, end = live.intervals[vid]
    if end >= len(live.steps):
        return False
    last = live.steps[end]
    return last.is_end and last.op.kind == OpKind.FOR and last.op.id not in live.steps[start].loops


def _elements_per_thread(value: Value, users: Mapping[int, list[Op]], env: Mapping[str, Any],
                         num_warps: int) -> int | None:
    """Elements of `value` one thread holds in the first pointer tile it is broadcast into."""
    sliced = None

    def computed(v: Value) -> list[Value]:   # results of the views, casts and arithmetic reading it
        return [op.result for op in users.get(v.id, ())
                if op.result is not None and op.kind in (OpKind.VIEW, OpKind.CAST, OpKind.ELEMENTWISE)]

    for v in bounded_walk((value,), computed, bound=None):
        for op in users.get(v.id, ()):
            r = op.result
            if r is None:
                continue
            shape = tile_shape(r, env) if r.shape else None
            if op.kind == OpKind.VIEW and shape is not None and len(shape) == 2 and sliced is None:
                sliced = 1 if shape[1] == 1 else 0 if shape[0] == 1 else None
            if shape is not None and len(shape) == 2 and min(shape) > 1 and sliced is not None \
                    and is_pointer(r.dtype):
                vec = max(1, min(shape[1], int(16 // max(1.0, element_bytes(pointee(r.dtype))))))
                layout = slice_of(shape, (1, vec), (1, 0), num_warps, sliced)
                return 2 ** len(layout.reg)
    return None


def tma_descriptor_costs(live: Liveness, has_tma: bool) -> dict[int, float]:
    """Registers of in-kernel tensor descriptors (`tl.make_tensor_descriptor`) on TMA targets (GpuSpec.has_tma:
    sm_90+).

    There the descriptor is a 128-byte tensormap written to global scratch (ttg.global_scratch_alloc +
    ttng.tensormap_create) and the kernel holds only its address, one 64-bit scalar shared by the CTA; the
    TMA copies take it from uniform registers (UTMALDG / UTMACCTL.IV [UR14] in the SASS). Measured (Triton
    3.9, sm_90, suite bmm_descriptor_kernel 128×128×64 w8 s3): at most 72 live general registers, the 64
    accumulator words and a few indices; not 8 per descriptor as for a block pointer's base and offsets.
    On sm_80 Triton rewrites descriptors to pointer tiles, which keep the block-pointer cost."""
    if not has_tma:
        return {}
    return {vid: 2.0 for vid, v in live.values.items() if v.dtype.startswith("desc<")}
