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

import math
from collections.abc import Callable, Mapping
from typing import Any

from kernlint.analysis.liveness import Liveness, producers as producers_of, readers as readers_of, step_positions
from kernlint.analysis.placement import DotPlacement, _source_load, mma_family, numel
from kernlint.analysis.register_merges import merge_sources
from kernlint.hardware.specs import MMA_FAMILIES
from kernlint.ir.nodes import Op, OpKind, Value, element_bytes
from kernlint.ir.symbolic import as_int
from kernlint.ir.walk import walk_upstream

TCGEN05_LD_MAX_WORDS = 128  # .32x32b.x128: the widest tcgen05.ld, 128 registers per thread
FOLDED_READ_SHARE = 0.75    # the earlier fitted tcgen05 epilogue share, kept for `acc += dot` (see above)


def epilogue_registers(live: Liveness, in_tmem: set[int], env: Mapping[str, Any], threads: int,
                       fragment: Callable[[Value], float]) -> dict[int, float]:
    """Registers the epilogue of a TMEM accumulator holds at each step, by step index: the landed reads
    (tcgen05.ld lands a fragment whole), row vectors combined with them and the layout conversion of a store."""
    out = tmem_reads(live, in_tmem, fragment)
    for i, words in (*row_vector_operands(live, in_tmem, env, threads).items(),
                     *epilogue_store_conversions(live, in_tmem, env, fragment).items()):
        out[i] = out.get(i, 0.0) + words
    return out


def tmem_reads(live: Liveness, in_tmem: set[int], fragment: Callable[[Value], float]) -> dict[int, float]:
    """Registers of TMEM fragments read at each step, by step index."""
    out: dict[int, float] = {}
    for i, step in enumerate(live.steps):
        op = step.op
        if step.is_end or op.kind in (OpKind.DOT, OpKind.FOR):
            continue
        for v in op.operands:
            if v.id not in in_tmem:
                continue
            words = fragment(v)
            landed = min(words, TCGEN05_LD_MAX_WORDS)
            narrowing = 1.0
            if op.kind == OpKind.CAST and op.result is not None and element_bytes(v.dtype) > 0:
                narrowing = min(1.0, element_bytes(op.result.dtype) / element_bytes(v.dtype))
            read = landed + (words - landed) * narrowing
            if op.result is not None and op.result.id in in_tmem:  # `acc += dot`: stays in TMEM
                read = words * FOLDED_READ_SHARE
            out[i] = out.get(i, 0.0) + read
    return out


def row_vector_operands(live: Liveness, in_tmem: set[int], env: Mapping[str, Any], threads: int) -> dict[int, float]:
    """Registers of a row vector (`bias[None, :]`, shape [1, N]) combined element-wise with a TMEM read, by
    step index. Triton loads the vector in the slice of the tcgen05.ld register layout, in which a thread holds
    whole rows of the fragment: min(N, M·N / threads) columns, one word each (fp32), where the blocked layout
    of a 1-D load spreads N over all threads. The vector is loaded before the read and both are live at the add.
    Measured (Triton 3.9, sm_100, sgemm_kernel tf32 + bias; TTGIR: `tt.load ... #ttg.slice<{dim = 0, parent =
    #linear}>` with 6 / 5 register bases): 128×128 w8 holds 64 bias words per thread, 64×64 w4 holds 32;
    ptxas allocates 148 / 80 registers against 64 / 32 accumulator words.
    Only a load with fewer elements than threads is loaded in that layout: Triton's layout propagation treats
    it as cheap, not an anchor, and rematerialises it in its user's layout (triton lib/Dialect/TritonGPU/
    Transforms/Utility.cpp, isExpensiveLoadOrStore: `getNumElements() < numWarps * threadsPerWarp`). A larger
    vector keeps its blocked load and reaches the slice through a convert_layout in shared memory, which ptxas
    re-reads at each use (128×256 w8: 256-element bias, `ttg.convert_layout` in the TTGIR, 200 registers, not
    128 + 128 words)."""
    producers = producers_of(live)
    out: dict[int, float] = {}
    for i, step in enumerate(live.steps):
        op = step.op
        if step.is_end or op.kind != OpKind.ELEMENTWISE or not any(v.id in in_tmem for v in op.operands):
            continue
        acc = next(v for v in op.operands if v.id in in_tmem)
        for v in op.operands:
            if v.id in in_tmem or len(v.shape) != 2 or len(acc.shape) != 2 or as_int(v.shape[0].evaluate(env)) != 1:
                continue
            m, n = (as_int(d.evaluate(env)) for d in acc.shape)
            load = _viewed_load(v, producers)
            if m is None or n is None or load is None or (numel(load.operands[0], env) or threads) >= threads:
                continue
            columns = min(n, math.ceil(m * n / threads))
            out[i] = out.get(i, 0.0) + columns * max(1.0, element_bytes(v.dtype) / 4)
    return out


def _viewed_load(value: Value, producers: Mapping[int, Op]) -> Op | None:
    """The load a value is a view or cast of (`bias[None, :]`, `bias.to(tl.float32)[None, :]`)."""
    op = producers.get(value.id)
    while op is not None and op.kind in (OpKind.VIEW, OpKind.CAST, OpKind.RESHAPE) and op.operands:
        op = producers.get(op.operands[0].id)
    return op if op is not None and op.kind == OpKind.LOAD else None


def staged_async_operands(live: Liveness, dots: list[DotPlacement]) -> set[int]:
    """Loop-invariant tiles loaded before a loop and read by a tcgen05 MMA inside it (attention's Q, the
    backward's K and V): Triton copies them once into shared memory (ttg.local_alloc before the loop, measured
    in the Triton 3.9 TTGIR of the attention kernels) and the MMA reads them from there, so the register copy
    dies at the copy instead of living across the loop. Not applied to wgmma: the sm_90 truth did not improve
    with it (suite register median error 0.143 → 0.188), the wgmma register model is calibrated with them."""
    producers = producers_of(live)
    step_loops = {s.op.id: s.loops for s in live.steps if not s.is_end}
    out: set[int] = set()
    for d in dots:
        if not d.async_mma or d.in_loop is None:
            continue
        for operand in d.op.operands[:2]:
            load = _source_load(operand, producers)
            if load is None or load.result is None or d.in_loop in step_loops.get(load.id, ()):
                continue
            out.add(load.result.id)
            value = operand
            while value.id != load.result.id and value.id not in out:  # trans/view copies of it
                out.add(value.id)
                op = producers.get(value.id)
                if op is None or not op.operands:
                    break
                value = op.operands[0]
    return out


def folded_accumulations(live: Liveness, dot_results: set[int]) -> set[int]:
    """`acc += tl.dot(a, b)`: the sum of a loop-carried tile and a dot result. Triton folds it into the dot's
    accumulator operand (lib/Dialect/Triton/Transforms/Combine.td, `add(acc, dot(a, b, 0)) → dot(a, b, acc)`),
    so on sm_100 the running sum stays in tensor memory like a `tl.dot(a, b, acc)` accumulator (dK/dV/dQ of
    the attention backward: measured b200 dK/dV 32×64 w4 s3 126 registers, not two 64×128 fp32 tiles)."""
    carried_args = {c.arg.id for s in live.steps if s.op.kind == OpKind.FOR and not s.is_end
                    for c in s.op.carried}
    out: set[int] = set()
    for step in live.steps:
        op = step.op
        if step.is_end or op.kind != OpKind.ELEMENTWISE or op.fn != "+" or op.result is None:
            continue
        ids = {v.id for v in op.operands}
        if len(op.operands) == 2 and ids & dot_results and ids & carried_args:
            out.add(op.result.id)
    return out


# The store of a TMEM-read tile goes through `ttg.convert_layout` (in shared memory) from the tcgen05.ld
# layout, where a thread holds a row, to the blocked layout of the store, and ptxas keeps most of the
# destination registers allocated while the source is still live. Measured (Triton 3.9, sm_100,
# tests/truth/suite_kernels/matmul_variants.py splitk_matmul_kernel SPLIT_K=1, the fp32 accumulator stored
# as it is; TTGIR: tmem_load -> convert_layout #linear -> #blocked -> tt.store): 32 / 64 / 128 accumulator
# words per thread (64×64 w4, 128×128 w8, 128×256 w8 and 128×128 w4) -> 65 / 122 / 234 registers, i.e.
# source + 0.75-0.78 × destination + addressing, where the same kernel storing fp16 (the convert moves the
# narrowed half) allocates 50 / 98 / 150-166, at or below the landed fp32 read the model already counts;
# examples/matmul.py at 256 fp32 words (256×256 w8, 128×256 w4: four tcgen05.ld, narrowed to 128 fp16 words)
# allocates 222-255 against 207 without the rule. Only casts and views are followed from the read: sgemm's
# epilogue adds a bias (acc + bias[None, :]) before its fp32 store and allocates 178 / 200 registers at
# 128×128 w4 / 128×256 w8, well under the 232 the rule would give -- ptxas seems to interleave that add with
# the conversion (not measured further).
CONVERT_DESTINATION_SHARE = 0.75
_EPILOGUE_CHAIN = (OpKind.CAST, OpKind.VIEW)


def epilogue_store_conversions(live: Liveness, in_tmem: set[int], env: Mapping[str, Any],
                               fragment: Callable[[Value], float]) -> dict[int, float]:
    """Registers a store of a TMEM-derived tile holds at the store step, by step index: the stored tile in the
    TMEM-load layout (its landed read is counted by `tmem_reads` when it is stored straight from TMEM) and
    CONVERT_DESTINATION_SHARE of its copy in the store's layout."""
    producers = producers_of(live)
    out: dict[int, float] = {}
    for i, step in enumerate(live.steps):
        op = step.op
        if step.is_end or op.kind != OpKind.STORE or len(op.operands) < 2:
            continue
        value = op.operands[1]
        if not value.shape or not _reaches_tmem(value, in_tmem, producers, env):
            continue
        words = fragment(value)
        # the source copy: a TMEM read's landed fragment is `tmem_reads`' share; a register tile whose last use
        # is this store is no longer counted here by the liveness (a merged `if` result may cost nothing at all)
        ends_here = live.intervals.get(value.id, (0, -1))[1] == i
        source = words if value.id not in in_tmem and ends_here else 0.0
        out[i] = source + CONVERT_DESTINATION_SHARE * words
    return out


def _reaches_tmem(value: Value, in_tmem: set[int], producers: Mapping[int, Op], env: Mapping[str, Any]) -> bool:
    """Whether a tile is a TMEM value, or one converted from it by casts and views (through the taken branch of
    a constexpr `if`)."""
    found = value.id in in_tmem

    def visit(op: Op, v: Value) -> tuple[Value, ...]:
        nonlocal found
        if v.id in in_tmem:
            found = True
            return ()
        if op.kind in _EPILOGUE_CHAIN:
            return tuple(o for o in op.operands if o.shape)
        if op.kind == OpKind.IF:   # `if HAS_BIAS: acc += bias[None, :]`: the branch taken
            return tuple(b for phi, sources in merge_sources(op, env) if phi.id == v.id for b in sources)
        return ()

    if not found:
        walk_upstream(value, producers, visit, bound=32)
    return found


def deferred_row_sums(live: Liveness, dots: list[DotPlacement], env: Mapping[str, Any], num_warps: int,
                      tensor_core: str) -> dict[int, tuple[int, int]]:
    """Second copies of softmax probabilities that sm_100 attention keeps for a row sum deferred by one iteration:
    value id → (first, last) step of the copy, the whole body of the loop it is carried around.

    What Triton 3.9 emits for `p = exp2(qk); l_ij = tl.sum(p, 1); acc = tl.dot(p.to(f16), v, acc)` when the dot
    is a tcgen05 MMA with a TMEM accumulator: the loop is rotated, p becomes a loop-carried value (`scf.for`
    iter_args) and `tl.sum(p, 1)` is computed at the top of the next iteration, so the previous iteration's p
    lives next to the new S, p, its fp16 copy and the rescaled accumulator. Measured where each thread owns a
    whole row of the tile (BLOCK_M = 32 × num_warps: the 32x32b TMEM message gives a thread one lane = one row),
    tests/truth/suite_kernels/attention.py, HEAD_DIM 64, sm_100: 128 × 64 at 4 warps and 256 × 64 at 8 warps
    spill (255 registers + 20 / 44 B); the same 128 × 64 × 4 warps without the row sum allocates 167
    (tests/analysis/test_register_deferred_row_sum.py compiles both when Triton is installed). With two
    threads per row (128 × 64 at 8 warps) the sum goes through shared memory and nothing extra is held: 113
    registers with or without it. So the copy is counted only where a thread owns a row."""
    if not MMA_FAMILIES[mma_family(tensor_core, num_warps)].tmem_accumulator:   # 16 warps: mma.sync fallback
        return {}
    users = readers_of(live)
    producers = producers_of(live)
    step_of = step_positions(live)
    end_of = {s.op.id: i for i, s in enumerate(live.steps) if s.is_end}
    out: dict[int, tuple[int, int]] = {}
    for d in dots:
        if not d.tmem_accumulator or d.in_loop not in end_of or not d.op.operands:
            continue
        cast = producers.get(d.op.operands[0].id)
        if cast is None or cast.kind != OpKind.CAST or not cast.operands:
            continue
        p = cast.operands[0]
        if p.dtype != "fp32" or len(p.shape) != 2 or p.id not in live.intervals:
            continue
        if as_int(p.shape[0].evaluate(env)) != 32 * num_warps:
            continue
        if any(u.kind == OpKind.REDUCE for u in users.get(p.id, [])):
            out[p.id] = (step_of[d.in_loop], end_of[d.in_loop])
    return out
