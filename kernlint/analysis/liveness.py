"""Live ranges of graph values in program order, for one config (constexpr `if`s resolved).

The graph is structured (loops and ifs nest), so a linear order plus two loop rules is exact:
a value defined before a loop and used inside it stays live until the loop's end (every iteration reads
it), and a loop-carried block argument is defined at the loop head while its yielded value is used at the
loop's end (so the accumulator is one live value at a time, as in the compiler's in-place update).
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from kernlint.analysis.dead_code import needed_op_ids
from kernlint.analysis.loop_trips import static_trips
from kernlint.ir.nodes import KernelIR, Op, OpKind, Region, Value
from kernlint.ir.symbolic import Unknown
from kernlint.ir.cache_keys import Analysis, CacheKey

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Step:
    op: Op
    is_end: bool       # the closing marker of a loop/if
    loops: tuple[int, ...]  # ids of the enclosing loop ops, outermost first


@dataclass(frozen=True, slots=True)
class Liveness:
    steps: tuple[Step, ...]
    values: Mapping[int, Value]
    intervals: Mapping[int, tuple[int, int]]   # value id → (defining step, last using step)
    folded: frozenset[int] = frozenset()       # ids of the loops of one trip (straight-line code to Triton)
    taken: Mapping[int, Value] = field(default_factory=dict)  # merge result id → its value where the `if` is decided
    # facts derived from this liveness alone (`derived`), under the keys kernlint/ir/cache_keys.py declares;
    # shared by the sweep points that share it
    cache: dict[CacheKey, Any] = field(default_factory=dict, hash=False, compare=False, repr=False)

    def live_at(self, index: int) -> list[Value]:
        return [self.values[v] for v, (a, b) in self.intervals.items() if occupies(a, b, index)]


def occupies(start: int, end: int, index: int) -> bool:
    """A value holds registers from its definition up to, not including, its last use: the last reader
    can write its result into the same registers (elementwise ops and the in-place dot accumulator)."""
    return start <= index < end or index == start == end


def _taken_side(op: Op, env: Mapping[str, Any]) -> int | None:
    """0 (then) or 1 (else) for an `if` whose condition the constexprs decide, else None."""
    cond = op.if_attrs().cond if op.kind == OpKind.IF else None
    if cond is None:
        return None
    value = cond.evaluate(env)
    if isinstance(value, Unknown):
        return None
    return 0 if value else 1


def _taken_regions(op: Op, env: Mapping[str, Any]) -> tuple[Region, ...]:
    side = _taken_side(op, env)
    return op.regions if side is None else (op.regions[side],)


def linearize(ir: KernelIR, env: Mapping[str, Any]) -> list[Step]:
    steps: list[Step] = []

    def visit(region: Region, loops: tuple[int, ...]) -> None:
        for op in region.ops:
            steps.append(Step(op, False, loops))
            if op.regions:
                inner = loops + (op.id,) if op.kind == OpKind.FOR else loops
                for sub in _taken_regions(op, env):
                    visit(sub, inner)
                steps.append(Step(op, True, loops))

    visit(ir.body, ())
    return steps


def _read_merge_results(steps: list[Step]) -> set[int]:
    """Ids of the if-merge results something reads. A merge nobody reads (a name assigned in every branch of a
    constexpr `if` and dead after it, such as fla causal_conv1d's per-tap `b_yi`) is dropped by MLIR's
    dead-code elimination of unused scf.if results, so it must not keep its branch values alive to the join."""
    read: set[int] = set()
    for step in steps:
        if step.is_end:
            continue
        read.update(v.id for v in step.op.operands)
        for c in step.op.carried if step.op.kind == OpKind.FOR else ():
            read.update((c.init.id, c.yielded.id))
    merges = [m for s in steps if s.op.kind == OpKind.IF and s.is_end for m in s.op.merges]
    changed = True
    while changed:   # a merge read by a read merge is read
        changed = False
        for phi, then_value, else_value in merges:
            if phi.id in read:
                for v in (then_value, else_value):
                    if isinstance(v, Value) and v.id not in read:
                        read.add(v.id)
                        changed = True
    return read


def compute_liveness(ir: KernelIR, env: Mapping[str, Any]) -> Liveness:
    steps = linearize(ir, env)
    # A `range` loop of one trip is straight-line code to Triton (scf.for folded before pipelining): a value
    # read in it is read once, not held for a next iteration, and what the body yields for a next iteration
    # that never comes is dead unless read after the loop. (A `tl.static_range` body is unrolled by the
    # frontend whatever its trips; register_unroll.py models those loops, and their liveness is left alone.)
    folded = {s.op.id for s in steps if s.op.kind == OpKind.FOR and not s.is_end
              and s.op.for_attrs().loop != "static_range" and static_trips(s.op, env) == 1}
    keep = needed_op_ids(steps, ir.returned, folded)   # what Triton's dead-code elimination leaves (dead_code.py)
    steps = [s for s in steps if s.op.id in keep]
    read_merges = _read_merge_results(steps)
    loop_span: dict[int, tuple[int, int]] = {}
    open_at: dict[int, int] = {}
    for i, step in enumerate(steps):
        if step.op.kind == OpKind.FOR:
            if step.is_end:
                loop_span[step.op.id] = (open_at[step.op.id], i)
            else:
                open_at[step.op.id] = i
    defs: dict[int, int] = {}
    def_loops: dict[int, tuple[int, ...]] = {}
    values: dict[int, Value] = {}
    last: dict[int, int] = {}
    taken: dict[int, Value] = {}

    def define(v: Value, i: int, loops: tuple[int, ...]) -> None:
        if v.id not in defs:
            defs[v.id] = i
            def_loops[v.id] = loops
            values[v.id] = v
            last[v.id] = i

    def use(v: Value, i: int, loops: tuple[int, ...]) -> None:
        if v.id not in defs:  # e.g. a value from an if-branch that this config did not take
            return
        at = i
        for loop_id in loops:  # outermost first: a use inside a loop the value was defined outside of
            if loop_id not in def_loops[v.id] and loop_id not in folded:
                at = max(at, loop_span[loop_id][1])
                break
        last[v.id] = max(last[v.id], at)

    else_start = _else_starts(steps)
    for i, step in enumerate(steps):
        op = step.op
        if op.kind == OpKind.FOR:
            carried = op.carried
            if not step.is_end:
                for c in carried:
                    use(c.init, i, step.loops)  # the init becomes the block argument in place
                    define(c.arg, i, step.loops + (op.id,))
            else:
                for c in carried:
                    use(c.yielded, i, step.loops + (op.id,))
                    last[c.yielded.id] = max(last.get(c.yielded.id, i), i)
                    # after the loop the variable is the yielded value, defined as of the loop's end
                    def_loops[c.yielded.id] = step.loops
            continue
        if op.kind == OpKind.IF:
            if not step.is_end:
                for v in op.operands:
                    use(v, i, step.loops)
            else:
                # a branch's value flows into the merged result at the join (scf.yield of the taken branch).
                # Where the constexprs decide the condition only that branch exists in Triton's IR: the other
                # side's value (often the name's value before the `if`) is not read there. flash-attn AMD
                # attn_fwd's `if n_full_blocks > 0:` (decided by MAX_SEQLENS_K and BLOCK_N) kept the zero
                # accumulator from before it alive through the KV loop.
                side = _taken_side(op, env)
                for phi, then_value, else_value in op.merges:
                    chosen = (then_value, else_value)[side] if side is not None else None
                    if isinstance(chosen, Value):
                        taken[phi.id] = chosen
                    if phi.id not in read_merges:
                        continue
                    for k, v in enumerate((then_value, else_value)):
                        if isinstance(v, Value) and side in (None, k):
                            # the then branch's value flows into the join where that branch ends: it is not
                            # live through the else branch (unless the else branch reads it itself). Measured
                            # (Triton 3.9, tests/truth/branch_updates.py, a and b updated in the else branch,
                            # 64 fp32 a thread): 174 / 175 / 192 registers on sm_80 / 90 / 100, kernlint held
                            # the old a and b there next to their sums and said 293 / 255 / 257
                            at = else_start[op.id] - 1 if k == 0 and side is None and op.id in else_start else i
                            use(v, at, step.loops)
                for v in op.results:
                    define(v, i, step.loops)
            continue
        for v in op.operands:
            use(v, i, step.loops)
        for v in op.all_results():
            define(v, i, step.loops)
    intervals = {v: (defs[v], last[v]) for v in defs}
    return Liveness(tuple(steps), values, intervals, frozenset(folded), taken)


def walk_ops(ops: tuple[Op, ...] | list[Op]) -> list[Op]:
    """`ops` and every op nested in their regions, in program order."""
    out: list[Op] = []
    for op in ops:
        out.append(op)
        for region in op.regions:
            out.extend(walk_ops(region.ops))
    return out


def _else_starts(steps: list[Step]) -> dict[int, int]:
    """`if` op id → the index of the first step of its else branch, for the `if`s whose both branches are in
    `steps` (a runtime condition with an else branch that kept steps after dead-code elimination)."""
    out: dict[int, int] = {}
    for i, step in enumerate(steps):
        op = step.op
        if op.kind != OpKind.IF or step.is_end or len(op.regions) < 2:
            continue
        else_ids = {o.id for o in walk_ops(op.regions[1].ops)}
        for j in range(i + 1, len(steps)):
            if steps[j].op.id == op.id:   # its end step: the else branch left no steps
                break
            if steps[j].op.id in else_ids:
                out[op.id] = j
                break
    return out


def derived(live: Liveness, key: CacheKey, compute: Callable[[], T]) -> T:
    """`compute()` memoised on `live` under `key` (`Analysis.X.key(params)`, kernlint/ir/cache_keys.py): for
    facts that depend only on the liveness, the constexprs it was built with and the key's parameters
    (estimate.py shares one Liveness across the num_warps / num_stages / target points of a sweep). Two
    threads may both compute a missing entry; they store equal values."""
    if key not in live.cache:
        live.cache[key] = compute()
    return live.cache[key]  # type: ignore[no-any-return]


def loop_ops(live: Liveness) -> list[Op]:
    """The loop ops in program order (memoised with `derived`)."""
    return derived(live, Analysis.LOOP_OPS.key(), lambda: [s.op for s in live.steps if s.op.kind == OpKind.FOR and not s.is_end])


def step_positions(live: Liveness) -> dict[int, int]:
    """Op id → its index in live.steps (the opening step of a loop or if; memoised with `derived`: do not
    mutate it). Positions compare program order across the smem and register rules."""
    return derived(live, Analysis.STEP_POSITIONS.key(), lambda: {s.op.id: i for i, s in enumerate(live.steps) if not s.is_end})


def carried_inits(live: Liveness) -> dict[int, Value]:
    """Loop-carried block argument id → the value entering the loop (memoised with `derived`)."""
    return derived(live, Analysis.CARRIED_INITS.key(), lambda: {c.arg.id: c.init for s in live.steps
                                                   if s.op.kind == OpKind.FOR and not s.is_end
                                                   for c in s.op.carried})


def readers(live: Liveness) -> dict[int, list[Op]]:
    """Value id → the ops that read it, in program order (memoised with `derived`: do not mutate it)."""
    def compute() -> dict[int, list[Op]]:
        out: dict[int, list[Op]] = {}
        for s in live.steps:
            if not s.is_end:
                for v in s.op.operands:
                    out.setdefault(v.id, []).append(s.op)
        return out
    return derived(live, Analysis.READERS.key(), compute)


def producers(live: Liveness) -> dict[int, Op]:
    """Value id → the op that defines it (memoised with `derived`: do not mutate it)."""
    return derived(live, Analysis.PRODUCERS.key(), lambda: {v.id: s.op for s in live.steps if not s.is_end
                                               for v in s.op.all_results()})


# ops whose result depends only on their operands (a load or a reduction of a loop-varying tile does not
# qualify: loads may see stores of the loop; reductions are left out to stay conservative)
_PURE = frozenset({OpKind.ELEMENTWISE, OpKind.VIEW, OpKind.CAST, OpKind.ARANGE, OpKind.FULL, OpKind.RESHAPE,
                   OpKind.TRANS})


def invariant_load(load: Op, loop_id: int, live: Liveness, producers: Mapping[int, Op]) -> bool:
    """A load of plain pointers whose address, mask and default are the same every iteration of the loop
    (tensor-descriptor and block-pointer loads keep their offsets out of the graph's operands: never)."""
    return (load.kind == OpKind.LOAD and bool(load.operands) and load.operands[0].dtype.startswith("ptr<")
            and all(loop_invariant(v, loop_id, live, producers) for v in load.operands))


def loop_invariant(value: Value, loop_id: int, live: Liveness, producers: Mapping[int, Op]) -> bool:
    """Is `value` the same in every iteration of loop `loop_id`: defined outside it, or computed inside it
    only from such values by ops without side effects (no induction variable, block argument or load)?"""
    # the loop's block arguments are defined at its head step, which lies outside it: they change every trip
    args = derived(live, Analysis.CARRIED_ARGS.key(), lambda: {s.op.id: [c.arg.id for c in s.op.carried]
                                                  for s in live.steps if s.op.kind == OpKind.FOR and not s.is_end})
    seen: dict[int, bool] = {a: False for a in args.get(loop_id, ())}

    def check(v: Value, depth: int) -> bool:
        if v.id in seen:
            return seen[v.id]
        span = live.intervals.get(v.id)
        if span is None or depth > 32:
            return False               # the induction variable (no defining op) or too deep to tell
        if loop_id not in live.steps[span[0]].loops:
            return True
        op = producers.get(v.id)
        seen[v.id] = False             # cycles through carried values are not invariant
        ok = (op is not None and op.kind in _PURE and not (op.kind == OpKind.ELEMENTWISE and op.elementwise_attrs().varies)
              and all(check(o, depth + 1) for o in op.operands))
        seen[v.id] = ok
        return ok

    return check(value, 0)
