"""Registers that epilogue reads of a tensor-memory (TMEM) accumulator hold on sm_100.

`ttng.tmem_load` lowers to `tcgen05.ld` instructions whose destination registers land together: a
fragment of up to 128 words per thread (tcgen05.ld .32x32b.x128) is whole in registers at the reading op.
Measured (Triton 3.9, sm_100, nvdisasm --print-life-ranges): examples/batched_matmul.py 128×128×32 w4 s4,
128 fp32 words per thread: LDTM.x128 raises the live registers from 37 to 165 (ptxas allocates 185);
examples/matmul.py 128×128×128 w4 s5: 16 → 143 live (156 allocated).
A larger fragment is read in several tcgen05.ld (matmul 256×256 w8, 256 words: four .32x32b.x64 in the PTX)
and ptxas narrows each landed piece (cvt.rn.f16x2.f32) before the next lands, so beyond the first 128 words
the read holds the narrowed result: 256×256 w8 allocates 255 without spilling, not 256 words + addresses.

A loop that carries the accumulator (`for` with the TMEM value as init) reads nothing: the zero
initialisation is a `tcgen05.st` from the zero register (STTM.x128 tmem, RZ in the same compiles).
`acc += tl.dot(a, b)` is folded into the MMA by Triton (no LDTM of it in the loop), yet it keeps the share of
the fragment the register model charged before this rule (FOLDED_READ_SHARE, fitted with the rest of the
tcgen05 model in benchmarks/fit_registers.py): in the attention backward (dK/dV, dQ: 96-254 registers) it
stands in for in-loop registers the model does not see yet; dropping it moved 16 suite pairs by 40-90 %.
"""
from __future__ import annotations

from collections.abc import Callable

from kernlint.analysis.liveness import Liveness
from kernlint.ir.nodes import Value, element_bytes

TCGEN05_LD_MAX_WORDS = 128  # .32x32b.x128: the widest tcgen05.ld, 128 registers per thread
FOLDED_READ_SHARE = 0.75    # the earlier fitted tcgen05 epilogue share, kept for `acc += dot` (see above)


def tmem_reads(live: Liveness, in_tmem: set[int], fragment: Callable[[Value], float]) -> dict[int, float]:
    """Registers of TMEM fragments read at each step, by step index."""
    out: dict[int, float] = {}
    for i, step in enumerate(live.steps):
        op = step.op
        if step.is_end or op.kind in ("dot", "for"):
            continue
        for v in op.operands:
            if v.id not in in_tmem:
                continue
            words = fragment(v)
            landed = min(words, TCGEN05_LD_MAX_WORDS)
            narrowing = 1.0
            if op.kind == "cast" and op.result is not None and element_bytes(v.dtype) > 0:
                narrowing = min(1.0, element_bytes(op.result.dtype) / element_bytes(v.dtype))
            read = landed + (words - landed) * narrowing
            if op.result is not None and op.result.id in in_tmem:  # `acc += dot`: stays in TMEM
                read = words * FOLDED_READ_SHARE
            out[i] = out.get(i, 0.0) + read
    return out
