"""Dot operands computed in registers (not loaded straight into the dot): where Triton keeps them.

An operand such as `(k * exp2(g)).to(f16)` reaches the MMA through a layout conversion. Triton first tries
to move that conversion back to the loads the operand is computed from (RemoveLayoutConversions.cpp,
hoistConvertDotOperand: only through element-wise ops, broadcasts and views, down to loads or constants),
so that the loads are pipelined and read straight into the operand layout; when that fails the operand is
written to shared memory once more (ttg.local_alloc + local_load, one buffer). wgmma can take A from
registers and tcgen05 from tensor memory, so A and B differ on sm_90 / sm_100.

Measured (Triton 3.9, probe kernels of tests/analysis/test_smem_computed_operands.py; "staged" = one extra
operand-sized buffer, loads of the loop pipelined into num_stages − 1 buffers unless said otherwise):

* computed inside the loop from its loads, every op element-wise / broadcast / view / constant
  (`x.to(f32) * exp2(g)`, `x * s[None, :]`, `tl.where(x > 0, x, 0.)`, an int8 load cast to fp16):
  sm_80 nothing staged (A and B); sm_90 A in registers, B staged; sm_100 A in tensor memory, B staged.
* the same with a conversion that cannot be hoisted ("blocked": a scalar multiplied in — kernel argument
  or loaded scalar —, `tl.arange`, a reduction, a whole tile loaded before the loop, or a row loaded
  before it with at least as many elements as threads): sm_80 staged (A and B); sm_90 A: a conversion
  into the register-operand layout beside the loop's buffers (wgmma_a_layout), or staged when B is
  computed in the loop too, B staged; sm_100 A stays in tensor memory (a tile from before the loop adds its
  conversion into the tensor-memory layout), B staged.
* a load converted to another type (int8 / fp8 → fp16, fp32 ↔ fp16) is computed like the above.
* loop-invariant (computed before the loop, or inside it from values defined before it): staged on every
  target, except the wgmma A operand, which stays in registers unless the dot's B is itself computed in
  the loop, and the tcgen05 A operand computed inside the loop body, which goes to tensor memory after a
  conversion whose scratch (linear_layout.scratch_elements) lives with the loop's buffers.

E.g. A = (q · exp2(g)).to(f16) before the loop, B = (k · exp2(−g_k)).to(f16) in it, 64×32×64 tiles, 4 warps,
2 stages: sm_80 8,192 (A) + 2 × 4,096 (k, g_k) = 16,384 B; sm_90 + 4,096 (B staged) = 20,480 B.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from kernlint.analysis.linear_layout import Layout, blocked, scratch_elements
from kernlint.analysis.liveness import Liveness, derived
from kernlint.analysis.operand_loads import numel
from kernlint.ir.nodes import Op, OpKind, Value, element_bytes
from kernlint.ir.symbolic import as_int
from kernlint.ir.walk import bounded_walk, walk_upstream
from kernlint.ir.cache_keys import Analysis

LOOP_INVARIANT_COMPUTED = "loop-invariant computed operand"   # buffer label of a copy made before the loop
# ops the conversion to the MMA operand layout moves through without data exchange between threads
_VIEWS = (OpKind.VIEW, OpKind.RESHAPE, OpKind.TRANS)
_THROUGH = (*_VIEWS, OpKind.ELEMENTWISE, OpKind.CAST, OpKind.FULL)


class Buffer(Protocol):
    @property
    def label(self) -> str: ...
    @property
    def bytes(self) -> int: ...
    @property
    def line(self) -> int: ...


@dataclass(frozen=True, slots=True)
class Chain:
    """How one computed dot operand is made, as seen from the loop it is used in."""
    feeding: tuple[Op, ...]      # loads inside the loop it is computed from (tiles, rows, scalars)
    invariant: bool              # the same value every iteration
    produced_outside: bool       # computed before the loop
    blocked: str | None          # why its conversion cannot be moved to its loads (None: it can)
    outside_tile: bool           # a whole tile defined before the loop enters it
    tile_bytes: int              # element bytes of the widest-layout tile load it starts from (0: none)


@dataclass(frozen=True, slots=True)
class OperandCost:
    staged: int                  # one operand copy for the loop
    scratch: int                 # a conversion scratch alive with the loop's buffers
    feeding: tuple[Op, ...]      # loads pipelined into num_stages − 1 buffers
    reason: str
    invariant: bool = False      # the copy is made once before the loop and read by every iteration (else it
                                 # is written before the dot each iteration and dead after it)


def _raw_loops(live: Liveness) -> dict[int, tuple[int, ...]]:
    return derived(live, Analysis.RAW_LOOPS.key(), lambda: {s.op.id: s.loops for s in live.steps if not s.is_end})


def _carried_args(live: Liveness) -> dict[int, set[int]]:
    return derived(live, Analysis.CARRIED_ARG_SETS.key(), lambda: {
        s.op.id: {c.arg.id for c in s.op.carried}
        for s in live.steps if s.op.kind == OpKind.FOR and not s.is_end})


def analyse(operand: Value, loop_id: int, live: Liveness, producers: Mapping[int, Op], env: Mapping[str, Any],
            load_inside: Callable[[Op], bool], num_warps: int) -> Chain | None:
    """The chain of a computed operand of a dot in loop `loop_id`, or None when the rules here do not apply:
    it comes from another dot's result (attention's P), from a loop-carried value, or could not be followed.
    `load_inside` says whether a load runs in the loop (a load of a fixed address counts as hoisted)."""
    raw = _raw_loops(live)
    carried = _carried_args(live).get(loop_id, set())
    full = numel(operand, env)
    if full is None:
        return None
    feeding: list[Op] = []
    blocked: str | None = None
    outside_tile = False
    tile_bytes = 0
    follow: dict[int, list[Value]] = {}   # value id → the values the walk goes on to from it
    for visited, v in enumerate(bounded_walk((operand,), lambda v: follow.pop(v.id, []), bound=None), 1):
        if visited > 256:   # a chain this long is not followed: no verdict
            return None
        if v.id in carried:
            return None
        op = producers.get(v.id)
        if op is None or op.kind == OpKind.PARAM:   # the induction variable or a kernel argument
            if not v.shape:
                blocked = blocked or "a scalar multiplied in"
            continue
        if op.kind == OpKind.DOT:
            return None
        if op.kind == OpKind.LOAD:
            size = numel(v, env)
            if size is not None and size >= full and v.shape:
                tile_bytes = max(tile_bytes, int(element_bytes(v.dtype)))
            if load_inside(op):
                feeding.append(op)
                if not v.shape:
                    blocked = blocked or "a scalar multiplied in"
                continue
        elif loop_id in raw.get(op.id, ()):
            if op.kind == OpKind.IF:
                follow[v.id] = [x for phi, a, b in op.merges if phi.id == v.id
                                for x in (a, b) if isinstance(x, Value)]
                continue
            if op.kind not in _THROUGH:
                blocked = blocked or f"a {op.kind}"
            elif op.kind == OpKind.ELEMENTWISE and any(not x.shape for x in op.operands):
                blocked = blocked or "a scalar multiplied in"
            follow[v.id] = list(op.operands)
            continue
        # defined before the loop (a tile, a broadcast vector, a scalar): what enters the loop's chain
        size = numel(v, env)
        if not v.shape:
            blocked = blocked or "a scalar multiplied in"
        elif size is not None and size >= full:
            outside_tile = True
            blocked = blocked or "a tile from before the loop"
            tile_bytes = max(tile_bytes, _tile_load_bytes(v, producers, env, full))
        elif op.kind == OpKind.LOAD:
            # a [K, 1] / [1, K] tile loaded before the loop and broadcast into the chain stops the conversion
            # when it has at least as many elements as threads (a load Triton does not repeat: Transforms/
            # Utility.cpp, isExpensiveLoadOrStore). Measured (Triton 3.9, sm_80/90/100, B = x · exp2(v) with
            # v = tl.load(p + offs_k[:, None]) before the loop): staged at BK = 64 with 1 or 2 warps and
            # BK = 128 with 4, not at BK = 64 with 4 or BK = 128 with 8; fla wall-attention's k̃ ([1, BK]
            # reference row, transposed): staged at 2 warps, not at 8. A 1-D vector expanded in the chain
            # (`exp2(v[:, None])`) never stopped it (64 elements at 2 warps, 128 at 4: not staged).
            if size is not None and len(v.shape) >= 2 and size >= 32 * num_warps:
                blocked = blocked or "a vector from before the loop"
        else:
            # a row or column broadcast into the chain is recomputed in the operand layout when it comes from
            # loads (fla wall-attention's transposed reference row); from `tl.arange` it is not (w4a16's
            # `(offs_k % 8) * 4` shifts: the dequantised operand is staged on sm_80 as well)
            if op.kind not in _THROUGH:
                blocked = blocked or f"a {op.kind}"
            elif op.kind == OpKind.ELEMENTWISE and any(not x.shape for x in op.operands):
                blocked = blocked or "a scalar multiplied in"
            follow[v.id] = [x for x in op.operands if x.shape]
    producer = producers.get(operand.id)
    produced_outside = producer is not None and loop_id not in raw.get(producer.id, ())
    invariant = not feeding and not _uses_loop_scalars(operand, loop_id, live, producers)
    return Chain(tuple(feeding), invariant, produced_outside, None if invariant else blocked, outside_tile,
                 tile_bytes)


def _tile_load_bytes(value: Value, producers: Mapping[int, Op], env: Mapping[str, Any], full: int) -> int:
    """Element bytes of the whole-tile load a value from before the loop is computed from (its layout)."""
    best = 0

    def visit(op: Op, v: Value) -> tuple[Value, ...]:
        nonlocal best
        if op.kind != OpKind.LOAD:
            return op.operands
        size = numel(v, env)
        if size is not None and size >= full and v.shape:
            best = max(best, int(element_bytes(v.dtype)))
        return ()

    walk_upstream(value, producers, visit)
    return best


def _uses_loop_scalars(operand: Value, loop_id: int, live: Liveness, producers: Mapping[int, Op]) -> bool:
    """Whether the value depends on the loop's induction variable or carried values (not invariant)."""
    raw = _raw_loops(live)
    carried = _carried_args(live).get(loop_id, set())

    def inside(v: Value) -> tuple[Value, ...]:   # operands of an op of the loop
        op = producers.get(v.id)
        return op.operands if op is not None and loop_id in raw.get(op.id, ()) else ()

    for v in bounded_walk((operand,), inside, bound=256):
        if v.id in carried:
            return True
        if producers.get(v.id) is None:
            span = live.intervals.get(v.id)
            # the induction variable is defined inside the loop, with no producing op
            if span is not None and loop_id in live.steps[span[0]].loops:
                return True
    return False


def tmem_operand_layout(m: int, k: int, num_warps: int) -> Layout | None:
    """The register layout an A operand is written to tensor memory from (tcgen05.st 32x32b message): with
    128 rows a lane per row and 4 warps over the 128 rows; with 64 rows lanes 0-15 take the rows and lane
    16 the second half of the columns, warps 16 and 32 rows further; more warps split the columns. Read off
    the Triton 3.9 TTGIR (#linear of the convert_layout before tmem_alloc) for 64×64 / 64×32 at 4 warps and
    128×64 / 128×128 at 8 warps."""
    if num_warps < 4 or num_warps & (num_warps - 1) or m not in (64, 128) or k < 8 or k & (k - 1):
        return None
    extra = (num_warps // 4).bit_length() - 1      # warp bits beyond the first four warps: column splits
    col_bits = k.bit_length() - 1
    if m == 128:
        lane = tuple((1 << i, 0) for i in range(5))
        warp = ((32, 0), (64, 0)) + tuple((0, k >> (j + 1)) for j in range(extra))
        reg_bits = col_bits - extra
    else:
        lane = tuple((1 << i, 0) for i in range(4)) + ((0, k // 2),)
        warp = ((16, 0), (32, 0)) + tuple((0, k >> (j + 2)) for j in range(extra))
        reg_bits = col_bits - 1 - extra
    if reg_bits < 0:
        return None
    reg = tuple((0, 1 << i) for i in range(reg_bits))
    return Layout((m, k), reg, lane, warp)


def _tmem_conversion(operand: Value, chain: Chain, env: Mapping[str, Any], num_warps: int) -> int:
    """Scratch of the conversion of a tcgen05 A operand from its blocked layout into the tensor-memory one,
    when a tile from before the loop enters it. Measured (Triton 3.9, sm_100): 64×64 fp16 at 4 warps 2,048 B,
    64×32 fp16 4,096, 64×64 fp32 4,096, 64×32 fp32 2,048, 128×128 fp16 / fp32 at 8 warps 8,192 / 16,384,
    128×64 fp16 at 8 warps 4,096; fla wall-attention's fp32 A from fp16 tiles, 128×128 at 8 warps, 8,192."""
    if not chain.outside_tile or len(operand.shape) != 2:
        return 0
    m, k = (as_int(d.evaluate(env)) for d in operand.shape)
    if m is None or k is None:
        return 0
    dst = tmem_operand_layout(m, k, num_warps)
    if dst is None:
        return 0
    per_thread = max(1, min(16 // max(1, chain.tile_bytes or int(element_bytes(operand.dtype))),
                            (m * k) // (32 * num_warps)))
    src = blocked((m, k), (1, per_thread), (1, 0), num_warps)
    nbytes = int(element_bytes(operand.dtype))
    return scratch_elements(src, dst, 8 * nbytes, stmatrix=True) * nbytes


def wgmma_a_layout(m: int, k: int, num_warps: int, bits: int) -> Layout | None:
    """The register layout of a wgmma A operand (#ttg.dot_op<{opIdx = 0, parent = #mma v3}>): the mma
    m16n8k16 (16-bit, kWidth 2) or m16n8k8 (32-bit) A fragment per warp, warps stacked 16 rows apart, K and
    M repeated in registers (the #linear of the TTGIR's conversion into it, Triton 3.9 sm_90)."""
    if bits not in (16, 32) or m < 16 or k < 8 or m & (m - 1) or k & (k - 1) or num_warps & (num_warps - 1):
        return None
    if bits == 16:
        reg, step = [(0, 1), (8, 0), (0, 8)], 16
        lane = ((0, 2), (0, 4), (1, 0), (2, 0), (4, 0))
    else:
        reg, step = [(8, 0), (0, 4)], 8
        lane = ((0, 1), (0, 2), (1, 0), (2, 0), (4, 0))
    while step < k:
        reg.append((0, step))
        step *= 2
    warp: list[tuple[int, int]] = []
    row = 16
    for _ in range(num_warps.bit_length() - 1):
        warp.append((row, 0) if row < m else (0, 0))   # warps beyond the rows split N: A is repeated
        row *= 2
    while row < m:
        reg.append((row, 0))
        row *= 2
    return Layout((m, k), tuple(reg), lane, tuple(warp))


def _register_a_conversion(operand: Value, chain: Chain, env: Mapping[str, Any], num_warps: int) -> int:
    """Scratch of the conversion of a wgmma A operand computed in the loop from its blocked layout into the
    register-operand layout, when it cannot be moved to the loads. Measured (Triton 3.9, sm_90, A = x · scale
    with x an fp16 tile): fp16 64×64 (4 warps) 8,192 B, 128×64 (8 warps) 16,384, 64×128 (4 warps) 8,192; tf32
    128×64 (8 warps) 16,384, 128×32 (4 warps) 4,096, 64×128 (4 warps) 8,192 — scratch_elements of each."""
    if len(operand.shape) != 2:
        return 0
    m, k = (as_int(d.evaluate(env)) for d in operand.shape)
    nbytes = int(element_bytes(operand.dtype))
    dst = wgmma_a_layout(m, k, num_warps, 8 * nbytes) if m is not None and k is not None else None
    if dst is None or m is None or k is None:
        return int((m or 0) * (k or 0) * nbytes)
    per_thread = max(1, min(16 // max(1, chain.tile_bytes or nbytes), (m * k) // (32 * num_warps)))
    return scratch_elements(blocked((m, k), (1, per_thread), (1, 0), num_warps), dst, 8 * nbytes, stmatrix=True) * nbytes


def operand_cost(operand: Value, index: int, chain: Chain, other: Chain | None, family: str,
                 env: Mapping[str, Any], num_warps: int) -> OperandCost:
    """Shared memory one computed operand costs (see the module docstring for the measurements). `family`
    is the MMA the dot lowers to ("mma_sync", "wgmma", "tcgen05"); `other` is the other operand's chain."""
    size = numel(operand, env) or 0
    nbytes = int(size * element_bytes(operand.dtype))
    feeding = () if chain.invariant else chain.feeding
    if family == "mma_sync":
        if chain.invariant:
            return OperandCost(nbytes, 0, (), "loop-invariant, staged once", True)
        if chain.blocked:
            return OperandCost(nbytes, 0, feeding, f"staged: {chain.blocked} stops the conversion")
        return OperandCost(0, 0, feeding, "read from its pipelined loads")
    if index == 1:
        return OperandCost(nbytes, 0, feeding, "B of an async MMA, staged", chain.invariant)
    if family == "wgmma":
        # A that cannot be computed in the register-operand layout next to a B computed in the loop is
        # staged like B (TTGIR: local_alloc of A, local_load into registers each iteration)
        b_in_loop = other is not None and not other.invariant
        if chain.invariant:
            return OperandCost(nbytes if b_in_loop else 0, 0, (),
                               "loop-invariant A, staged (B computed in the loop)" if b_in_loop
                               else "loop-invariant A, in registers", True)
        if chain.blocked and b_in_loop:
            return OperandCost(nbytes, 0, feeding, f"A staged ({chain.blocked}; B computed in the loop)")
        if chain.blocked:
            return OperandCost(0, _register_a_conversion(operand, chain, env, num_warps), feeding,
                               f"A in registers, converted ({chain.blocked})")
        return OperandCost(0, 0, feeding, "A in registers")
    if chain.invariant and chain.produced_outside:
        return OperandCost(nbytes, 0, (), "loop-invariant A computed before the loop, staged", True)
    return OperandCost(0, _tmem_conversion(operand, chain, env, num_warps), feeding, "A in tensor memory")


def fits_dead_operand_copy(group: Sequence[Buffer], scratch: Buffer) -> bool:
    """Whether a loop's reduction / conversion scratch fits in the place of the operand copies one of its dots
    writes each iteration (a computed operand staged, or converted, just before the dot and dead after it):
    Triton's allocator (liveness-based first fit) gives the scratch that place. Measured (Triton 3.9 TTGIR,
    allocation.offset after AllocateSharedMemory, fla wall-attention forward 128×64×128 · 8 warps · 3 stages):
    sm_100 first loop, the 512-B row-max conversion at the offset of the staged k̃ (16,384 B); sm_80 / sm_90
    second loop, the 2,048-B row-max scratch not added to q̃ (65,536 B): 164,352 / 213,504 B in all."""
    copies: dict[int, int] = {}
    for b in group:
        if b.label in ("computed dot operand", "dot operand conversion"):
            copies[b.line] = copies.get(b.line, 0) + b.bytes
    return max(copies.values(), default=0) >= scratch.bytes
