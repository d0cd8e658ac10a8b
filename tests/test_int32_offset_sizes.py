"""KL303 counts the runtime sizes multiplied into a program-id index; a size only added to the index bounds
it rather than scaling it (causal-conv1d's varlen state rows: `state_len - (pid + 1) * BLOCK_M + arange` is
below state_len, times one stride: info). fla's batch offset, a program id times a size and scaled again,
stays a warning."""
from __future__ import annotations

from kernlint.api import lint_source
from kernlint.diagnostic import Severity

_STATES = '''import triton
import triton.language as tl


@triton.jit
def copy_states(X, STATES, state_len, stride_x, stride_s, BLOCK_M: tl.constexpr):
    rows = {rows}
    x = tl.load(X + rows * stride_x, mask=rows >= 0, other=0)
    tl.store(STATES + rows * stride_s, x, mask=rows >= 0)


def launch(x, s, n):
    copy_states[(n,)](x, s, n, x.stride(0), s.stride(0), BLOCK_M=16)
'''


def _kl303(rows: str) -> set[Severity]:
    src = _STATES.format(rows=rows)
    return {d.severity for d in lint_source(src, "k.py").diagnostics if d.code == "KL303"}


def test_a_size_added_to_the_index_does_not_scale_it() -> None:
    assert _kl303("state_len - (tl.program_id(0) + 1) * BLOCK_M + tl.arange(0, BLOCK_M)") == {Severity.INFO}


def test_a_size_multiplied_into_the_index_still_does() -> None:
    # (pid * state_len + arange) * stride: a flattened batch-times-rows offset, scaled again by the stride
    assert _kl303("tl.program_id(0) * state_len + tl.arange(0, BLOCK_M)") == {Severity.WARNING}
