"""Registers of loads whose pointers are not contiguous: one address and one register per element."""
from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from kernlint.analysis.axis_info import load_vector_bytes
from kernlint.analysis.liveness import Liveness, producers as producers_of
from kernlint.analysis.placement import numel
from kernlint.ir.nodes import element_bytes, pointee


def element_wise_load_costs(live: Liveness, env: Mapping[str, Any], threads: int) -> dict[int, float]:
    """Unscaled register costs of the pointer tile and the result of each load that moves one element per
    instruction (AxisInfo contiguity 1 along every dim, e.g. offsets clamped with `tl.where` and no
    `tl.max_contiguous` hint). Such a load cannot share one base address per 16-byte vector: every element
    gets its own 64-bit address (2 registers) and lands in its own 32-bit register, even when it is 8 or 16
    bits wide (ld.global.b16 writes a full register). Measured (Triton 3.9, sm_90, examples/persistent_matmul.py,
    B offsets clamped, bf16): 16/32/64 B elements per thread -> 108-126 / 158-175 / 241-245 registers, about 3
    per B element, almost independent of the accumulator size; the contiguous-load model gave 59-198."""
    producers = producers_of(live)
    out: dict[int, float] = {}
    for step in live.steps:
        op = step.op
        if step.is_end or op.kind != "load" or op.result is None or not op.operands:
            continue
        pointer = op.operands[0]
        if not pointer.shape or not pointer.dtype.startswith("ptr<"):
            continue
        width = load_vector_bytes(op, producers, env)
        nbytes = element_bytes(pointee(pointer.dtype))
        size = numel(pointer, env)
        if width is None or size is None or width > nbytes:
            continue
        per_thread = max(1, math.ceil(size / threads))
        out[pointer.id] = 2.0 * per_thread
        out[op.result.id] = per_thread * max(1.0, element_bytes(op.result.dtype) / 4)
    return out
