"""Registers an element-wise math call keeps for itself while it runs.

libdevice's accurate `sin`/`cos` reduce their argument (a Payne-Hanek slow path for large inputs), `log`, `tanh`,
`erf`, `pow` and `erfinv` evaluate polynomials with several live terms: ptxas holds those temporaries at the call,
beside the live set, whatever the tile size (they are per element, and elements are computed one after another).
Calls that lower to one hardware instruction (`exp`, `exp2`, `sqrt`, `sigmoid`'s exp and reciprocal, the
`fast_*` and `*_approx` spellings) keep none.

Measured (tests/truth/math_calls.py, Triton 3.9, sm_90 and sm_100, 4 warps, fp32, 1 / 4 / 16 elements a thread):
registers above the same kernel without the call, sm_90 — sin 11/10/12, cos 11/10/12, log 0/8/6, tanh 5/10/6,
erf 3/9/4, pow 6/6/4, erfinv 6/6/5, acosh 2/2/2; exp, sqrt, sigmoid within ±2. The table holds the median of the
three; sm_100 is within 2 of sm_90 on every call.
"""
from __future__ import annotations

from kernlint.analysis.liveness import Liveness, producers
from kernlint.ir.nodes import Op, OpKind, Value
from kernlint.ir.walk import bounded_walk

MATH_TEMPORARIES: dict[str, int] = {"sin": 11, "cos": 11, "log": 6, "tanh": 6, "erf": 4, "pow": 6, "erfinv": 6,
                                    "acosh": 2}
# libdevice's float spellings of the same functions (`sinf`, `logf`, `powf`)
_FLOAT_SUFFIX = {f"{name}f": name for name in MATH_TEMPORARIES}


def call_temporaries(fn: object) -> int:
    """Temporaries of one call, by the function's last name (`tl.sin`, `libdevice.tanh`, `pkg.ops.erfinv`)."""
    if not isinstance(fn, str):
        return 0
    last = fn.rsplit(".", 1)[-1]
    if last.startswith("fast_") or last.endswith("_approx"):
        return 0
    return MATH_TEMPORARIES.get(_FLOAT_SUFFIX.get(last, last), 0)


def math_temporaries(live: Liveness) -> dict[int, float]:
    """Step → registers a math call holds besides the live set. The temporaries coexist with the data the
    call's element-wise chain computes from, which ptxas loads ahead (every element of a thread's tile is in
    flight before the first call): they are counted from the chain's load (or first op) to the call. Calls
    one after another hold theirs in turn, so a step takes the largest, not the sum."""
    producer = producers(live)
    out: dict[int, float] = {}
    for i, step in enumerate(live.steps):
        # tiles only: a call on a scalar (the log of a row's sum) is scheduled where registers are free
        # (Triton 3.9 sm_90 cross_entropy_fwd_kernel: 2 below the model without it, not 6 above)
        if step.is_end or step.op.kind != OpKind.ELEMENTWISE or step.op.result is None or not step.op.result.shape:
            continue
        extra = call_temporaries(step.op.fn)
        if not extra:
            continue
        start = i
        for v in bounded_walk(step.op.operands, lambda v: _chain_operands(producer.get(v.id)), bound=_CHAIN_LIMIT,
                              admit=lambda v: v.id in live.intervals):
            start = min(start, live.intervals[v.id][0])
        for j in range(start, i + 1):
            out[j] = max(out.get(j, 0.0), float(extra))
    return out


# values followed back from a call through its element-wise chain (a bound: chains in real kernels are short)
_CHAIN_LIMIT = 32


def _chain_operands(op: Op | None) -> tuple[Value, ...]:
    return op.operands if op is not None and op.kind in (OpKind.ELEMENTWISE, OpKind.CAST) else ()
