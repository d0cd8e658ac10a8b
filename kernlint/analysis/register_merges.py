"""Dot accumulators that flow through `if` merges and loop-carried arguments.

`if ALLOW_TF32: acc = tl.dot(a, b, acc, input_precision="tf32") else: acc = tl.dot(..., "ieee")` (sgemm)
names the accumulator through the `if`'s merged result. With a constexpr condition Triton's code generator
emits only the taken branch inline (no scf.if in the TTGIR), so the merged value *is* the dot result: the
same MMA fragment on sm_80/sm_90 and the same TMEM buffer on sm_100, carried by the loop like a plain
`acc = tl.dot(a, b, acc)`. A runtime `if` lowers to scf.if whose yielded result is that value too (the
branch without a dot yields the carried accumulator unchanged). Measured (Triton 3.9 TTGIR, sgemm_kernel
128×128×32 w8, ALLOW_TF32): the loop's iter_arg is the `ttng.tc_gen5_mma` accumulator on sm_100 and the
`ttng.warp_group_dot` result on sm_90, identical to a kernel without the `if`.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kernlint.analysis.liveness import Liveness
from kernlint.ir.nodes import Op, OpKind, Value
from kernlint.ir.symbolic import Unknown


def merge_sources(op: Op, env: Mapping[str, Any]) -> list[tuple[Value, tuple[Value, ...]]]:
    """Each merged result of an `if` with the branch values that flow into it: the taken branch's for a
    constexpr condition (Triton emits only that branch), both for a runtime one."""
    cond = op.if_attrs().cond
    taken = cond.evaluate(env) if cond is not None and not op.operands else Unknown("runtime")
    return [(phi, (then_value, else_value) if isinstance(taken, Unknown) else (then_value,) if taken else (else_value,))
            for phi, then_value, else_value in op.merges]


def through_merges_and_loops(live: Liveness, seeds: set[int], env: Mapping[str, Any]) -> set[int]:
    """`seeds` plus every `if` merge whose taken branch value is among them (both branch values for a
    runtime condition: `acc + bias` merged with `acc` is a register tile) and every loop-carried init/argument
    whose yielded value is among them, to a fixed point (a merge inside a loop feeds its yield)."""
    out = set(seeds)
    links: list[tuple[tuple[int, ...], tuple[int, ...]]] = []  # (sources, values that follow all sources)
    for step in live.steps:
        op = step.op
        if step.is_end:
            continue
        if op.kind == OpKind.IF:
            for phi, sources in merge_sources(op, env):
                links.append((tuple(v.id for v in sources), (phi.id,)))
        elif op.kind == OpKind.FOR:
            links.extend(((c.yielded.id,), (c.arg.id, c.init.id)) for c in op.carried)
    changed = True
    while changed:
        changed = False
        for sources, followers in links:
            if all(s in out for s in sources) and not all(f in out for f in followers):
                out.update(followers)
                changed = True
    return out
