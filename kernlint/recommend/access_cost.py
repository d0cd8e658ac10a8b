"""What one memory access costs the L1: is it vectorised, and how many 128-B wavefronts does it take.

Used by the time model (model.py): Triton vectorises a masked access only when AxisInfo can prove the mask
constant over 16-element runs, and an unvectorised one walks each thread's chunk one element per instruction.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from kernlint.ir.nodes import Op, OpKind
from kernlint.ir.walk import bounded_walk
from kernlint.frontend.host_facts import KernelSource


def mask_aligned(mask: Any, defs: Mapping[int, Op], src: KernelSource, env: Mapping[str, Any]) -> bool:
    """Can Triton prove the mask constant over 16-element runs? Not when it compares against an integer
    argument that gets no divisibility-16 specialisation: a `do_not_specialize` parameter, or a value in the
    bucket that is not a multiple of 16 (Triton's AxisInfo gives the mask constancy 1, so every element is a
    separate predicated scalar load)."""
    def operands(v: Any) -> tuple[Any, ...]:
        d = defs.get(v.id)
        return d.operands if d is not None and d.kind not in (OpKind.LOAD, OpKind.PARAM, OpKind.FOR) else ()

    for v in bounded_walk([mask] if mask is not None else [], operands, bound=33):
        if v.name and (v.name in src.unspecialized or
                       (isinstance(env.get(v.name), int) and not isinstance(env.get(v.name), bool)
                        and env[v.name] % 16 != 0)):
            return False
    return True


def access_wavefronts(numel: float, ebytes: int, num_warps: int, vectorised: bool) -> float:
    """L1 wavefronts (one 128-B line per cycle per SM) that one CTA needs for one tile access.

    Triton's blocked layout gives each thread a contiguous chunk of up to 16 bytes (`sizePerThread`).
    Vectorised, one instruction moves the whole chunk: a warp instruction covers 32 × 16 B = 4 full lines.
    Not vectorised, the chunk is walked one element per instruction, and every instruction still spans
    32 chunks: 8 fp16 elements per thread → each instruction touches 4 lines for 64 useful bytes, 8× the
    L1 work of the vectorised load. Fewer elements per thread (more warps, smaller blocks) shrink the span.
    """
    per_thread = numel / (32.0 * num_warps)
    chunk = max(1.0, min(per_thread, 16.0 / max(1, ebytes)))
    threads = min(32.0, numel / chunk) if per_thread < 1 else 32.0
    span_lines = max(1.0, math.ceil(threads * chunk * ebytes / 128.0))
    instr = max(1.0, per_thread / (chunk if vectorised else 1.0)) if per_thread >= 1 else (1.0 if vectorised else chunk)
    lines_per_instr = span_lines if not vectorised else max(1.0, threads * chunk * ebytes / 128.0)
    return num_warps * instr * lines_per_instr
