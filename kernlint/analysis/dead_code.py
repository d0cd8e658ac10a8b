"""Dead-code elimination: the ops whose results reach nothing Triton keeps.

Triton's MLIR canonicalisation erases every op without side effects whose results are unused (`tt.load`
included: it only reads memory), so a tile that is loaded or computed and never reaches a store, an atomic
or control flow costs no registers and no shared memory. Measured (Triton 3.9, sm_80/89/90, a fuzz-generated
kernel whose row sums of two [256, 64] tiles are never stored): 0 B of shared memory and 8-10 registers,
where counting the dead tiles asked 150 registers and 512 B. Half-written kernels in an editor are full of
such values, so the liveness sweep drops them before anything is counted.
"""
from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Protocol

from kernlint.ir.nodes import Op, OpKind, Value

# ops kept whatever their results: memory writes, and structured control flow (`while` loops are "for" ops
# with attrs["loop"] == "while"; an `if`'s operand is its condition)
SIDE_EFFECTS = frozenset({OpKind.STORE, OpKind.ATOMIC})
CONTROL = frozenset({OpKind.FOR, OpKind.IF})


class _Step(Protocol):
    op: Op
    is_end: bool


def _roots(steps: Sequence[_Step], returned: Sequence[Value]) -> set[int]:
    needed = {v.id for v in returned}
    for step in steps:
        op = step.op
        if not step.is_end and (op.kind in SIDE_EFFECTS or op.kind in CONTROL or not op.all_results()):
            # a loop's operands are its carried variables' initial values: needed only if the variable is
            # (needed_op_ids follows them); what steers it is needed in any case
            if op.kind != OpKind.FOR:
                needed.update(v.id for v in op.operands)
            needed.update(v.id for v in (op.for_attrs().steering if op.kind == OpKind.FOR else ()))
    return needed


def needed_op_ids(steps: Sequence[_Step], returned: Sequence[Value] = (), folded: Collection[int] = ()) -> set[int]:
    """Ids of the ops to keep: side effects, control flow with the values that steer it, result-less ops of
    kinds this pass does not know, what a helper returns, and every op whose result something kept reads
    (through loop-carried values and if-merges too). In a loop of `folded` (one trip, straight-line code to
    Triton) the value yielded for the next iteration is kept only if something after the loop reads it: a
    pointer advanced at the end of the body (`k_ptrs += BLOCK_N * stride`) is dead there."""
    needed = _roots(steps, returned)

    def need(values: Sequence[Value]) -> bool:
        new = [v.id for v in values if v.id not in needed]
        needed.update(new)
        return bool(new)

    changed = True
    while changed:   # loops make the dependencies cyclic (a carried value feeds its own update): fixpoint
        changed = False
        for step in reversed(steps):
            op = step.op
            if op.kind == OpKind.FOR:
                # the block argument is the init on entry and the yielded value afterwards: one variable
                for c in op.carried if not step.is_end else ():
                    if op.id in folded:
                        if c.arg.id in needed:
                            changed |= need((c.init,))
                        if c.yielded.id in needed:
                            changed |= need((c.arg, c.init))
                    elif {c.arg.id, c.yielded.id} & needed:
                        changed |= need((c.arg, c.init, c.yielded))
            elif op.kind == OpKind.IF:
                for phi, then_value, else_value in op.merges if step.is_end else ():
                    if phi.id in needed:
                        changed |= need([v for v in (then_value, else_value) if isinstance(v, Value)])
            elif not step.is_end and any(v.id in needed for v in op.all_results()):
                changed |= need(op.operands)
    return {s.op.id for s in steps
            if s.op.kind in SIDE_EFFECTS or s.op.kind in CONTROL or not s.op.all_results()
            or any(v.id in needed for v in s.op.all_results())}
