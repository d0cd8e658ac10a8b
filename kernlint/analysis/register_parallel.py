"""Element chains computed side by side while registers are free.

The streamed-values pass (register_elementwise.py) prices a single-use element-wise intermediate at nothing:
ptxas can compute a thread's elements one after another, each in the registers of the operands it replaces.
It does so when registers are scarce. When they are not, its scheduler interleaves the elements' chains
(independent FMAs, conversions, divisions) to hide their latency, and the intermediates of several elements
are live at once, up to the registers that still let the SM run its most threads (32 for 2-32 warps on
sm_80-sm_100: 65,536 registers / 2,048 threads); past that point it stops, since more registers would cost
occupancy.

Measured (tests/truth/parallel_chains.py, Triton 3.9, ptxas 12.9 sm_90, 4 warps, fp16 in and out, chains in
fp32): `x * x * 0.5 + x * 3.0 - 1.0` at 1 / 4 / 8 / 16 / 32 elements a thread takes 10 / 16 / 24 / 28 / 32
registers, where the streamed estimate asks 12 / 12 / 14 / 18 / 26 and the chain held whole 13 / 17 / 25 / 40 /
71; `x / s`, `x / (1 + exp(-x))` and `rsqrt(x) + sqrt(x)` follow the same line (29-32 at 16 elements a
thread). So the demand is the streamed one raised towards the whole one, no higher than that occupancy bound.

PTX has no 16-bit division, square root or transcendental: on fp16 / bf16 values Triton computes them in fp32
and converts back, so in the whole view such a result is priced as fp32 while it is computed. Measured (same
probes): `1.0 / x` on fp16 takes 10 / 16 / 24 / 30 registers at 1 / 4 / 8 / 16 elements a thread, the same as
on fp32 (10 / 16 / 24 / 31).
"""
from __future__ import annotations

from kernlint.analysis.liveness import Liveness
from kernlint.ir.nodes import Op, OpKind

# element-wise functions PTX computes in fp32 for 16-bit floats (by last name: `tl.exp`, `libdevice.tanh`)
COMPUTED_IN_FP32: frozenset[str] = frozenset({
    "/", "div_rn", "fdiv", "sqrt", "sqrt_rn", "rsqrt", "exp", "exp2", "log", "log2", "log1p", "expm1",
    "sigmoid", "sin", "cos", "tan", "tanh", "erf", "erfinv", "pow", "acosh", "asinh", "atanh", "atan", "asin",
    "acos", "sinh", "cosh", "softplus"})


def widened_16bit(op: Op) -> bool:
    """An element-wise op on 16-bit floats that PTX evaluates in fp32 (its result is fp32 while computed)."""
    result = op.result
    if op.kind != OpKind.ELEMENTWISE or result is None or not result.shape or result.dtype not in ("fp16", "bf16"):
        return False
    fn = op.fn
    return isinstance(fn, str) and fn.rsplit(".", 1)[-1] in COMPUTED_IN_FP32


def parallel_chain_demand(streamed: int, whole: int, occupancy_registers: int) -> int:
    """The demand of a kernel whose streamed chains ptxas runs side by side: at least the streamed demand,
    at most the demand with every chain held whole, and no more than the full-occupancy registers."""
    if streamed >= occupancy_registers or whole <= streamed:
        return streamed
    return min(whole, occupancy_registers)


def reduced_only(live: Liveness, streamed: set[int]) -> set[int]:
    """The streamed values whose every reader is a reduction: summed element by element into the reduction's
    partials, never held whole even when registers are free."""
    readers: dict[int, set[OpKind]] = {}
    for step in live.steps:
        if not step.is_end:
            for v in step.op.operands:
                if v.id in streamed:
                    readers.setdefault(v.id, set()).add(step.op.kind)
    return {vid for vid in streamed if readers.get(vid) == {OpKind.REDUCE}}
