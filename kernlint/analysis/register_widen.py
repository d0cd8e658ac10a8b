"""A widened load reduced row by row keeps its narrow form.

`xg = tl.load(p).to(tl.float32)` reshaped to [G, 128], reduced per row (`amax = max(abs(xg), axis=1)`) and
read again after the reduction (`xg / amax[:, None]`): when each thread holds several of the reduced rows,
ptxas finishes one row (convert, reduce, divide) before it converts the next, so the rows not yet started
stay in their loaded packed bf16/fp16 registers instead of as the fp32 tile. Measured (Triton 3.9,
examples/quantize_fp8.py, bf16 → fp32, GROUPS_PER_PROGRAM 64 · 4 warps: 4 rows × 16 elements per thread):
48 registers on sm_90 and 52 on sm_100, the 32 packed words plus the working set; holding the fp32 tile
put kernlint at 79 / 81. With one row per thread (softmax, layernorm: the whole row is reduced before any
element is read again) the fp32 copy is held: applying this to every widened load put the suite's sm_90
share within 20 % from 79 % to 63 %.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kernlint.analysis.liveness import Liveness, readers, producers as producers_of
from kernlint.analysis.access_layout import Access, memory_shapes
from kernlint.analysis.smem_reduce import tile_layout
from kernlint.ir.nodes import Op, OpKind, Value, element_bytes
from kernlint.ir.walk import bounded_walk

# ops that rename a tile without touching its registers (the widened value may pass through them)
_RENAMING = (OpKind.VIEW, OpKind.RESHAPE)


def _rows_per_thread(reduce: Op, producers: Mapping[int, Op], env: Mapping[str, Any],
                     memory: list[Access], num_warps: int) -> int:
    """Independent reduction rows one thread holds and finishes without a barrier: the register bits of the
    layout off the reduced axis, when the axis lies within one warp (1 otherwise)."""
    axis = reduce.reduce_attrs().axis
    if not isinstance(axis, int) or not reduce.operands:
        return 1
    layout = tile_layout(reduce.operands[0], producers, env, memory, num_warps)
    if layout is None or not 0 <= axis < len(layout.bits) or "warp" in layout.bits[axis]:
        return 1   # across warps: all rows' partials meet at one barrier, so every row is converted before it
    return 2 ** sum(kinds.count("reg") + kinds.count("rep") for d, kinds in enumerate(layout.bits) if d != axis)


def _reduced_row_by_row(value: Value, read_by: Mapping[int, list[Op]], order: Mapping[int, int],
                        producers: Mapping[int, Op], env: Mapping[str, Any],
                        memory: list[Access], num_warps: int) -> bool:
    """Is `value` reduced (through element-wise ops) by a reduction with ≥ 2 rows per thread, and read again
    after that reduction? (`order`: op id → its step in program order.)"""
    last_read = max((order.get(op.id, -1) for op in read_by.get(value.id, [])), default=-1)
    def computed(v: Value) -> list[Value]:   # what element-wise readers make of it
        return [op.result for op in read_by.get(v.id, [])
                if op.kind in (OpKind.ELEMENTWISE, OpKind.CAST) and op.result is not None]

    for v in bounded_walk((value,), computed, bound=16):
        for op in read_by.get(v.id, []):
            if op.kind == OpKind.REDUCE and order.get(op.id, last_read) < last_read \
                    and _rows_per_thread(op, producers, env, memory, num_warps) >= 2:
                return True
    return False


def hold_widened_loads_narrow(live: Liveness, costs: dict[int, float], loaded: set[int], env: Mapping[str, Any],
                              num_warps: int) -> None:
    """Cap the cost of a widened copy of a loaded tile at the loaded tile's cost when it is reduced row by
    row (in place)."""
    read_by = readers(live)
    producers = producers_of(live)
    order = {s.op.id: i for i, s in enumerate(live.steps) if not s.is_end}
    memory: list[Access] | None = None
    for index, step in enumerate(live.steps):
        op = step.op
        if step.is_end or op.kind != OpKind.CAST or op.result is None or not op.operands:
            continue
        src = op.operands[0]
        if src.id not in loaded or live.intervals.get(src.id, (0, -1))[1] != index:
            continue   # the narrow form must die at the conversion (no other reader keeps it)
        if element_bytes(src.dtype) >= element_bytes(op.result.dtype) or not costs.get(src.id):
            continue
        value: Value = op.result
        for _ in range(4):   # through single-reader renamings to the value that is held
            if costs.get(value.id, 0.0) > 0.0:
                break
            users = read_by.get(value.id, [])
            if len(users) != 1 or users[0].kind not in _RENAMING or users[0].result is None:
                break
            value = users[0].result
        if costs.get(value.id, 0.0) <= costs[src.id]:
            continue
        memory = memory if memory is not None else memory_shapes(live, env, producers)
        if _reduced_row_by_row(value, read_by, order, producers, env, memory, num_warps):
            costs[value.id] = costs[src.id]
