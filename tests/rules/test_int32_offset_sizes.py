"""KL303 counts the runtime sizes multiplied into a program-id index; a size only added to the index bounds
it rather than scaling it (causal-conv1d's varlen state rows: `state_len - (pid + 1) * BLOCK_M + arange` is
below state_len, times one stride: often bounded). fla's batch offset, a program id times a size and scaled
again, stays a likely overflow. KL303 is info-level (docs/finding-precision.md); LIKELY and BOUNDED below are
the two verdicts its message gives."""
from __future__ import annotations

from kernlint.pipeline.api import lint_source
from kernlint.core.diagnostic import Severity

LIKELY, BOUNDED = "likely", "bounded"


def _verdict(message: str) -> str:
    return BOUNDED if "often bounded" in message else LIKELY

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


def _kl303(rows: str) -> set[str]:
    src = _STATES.format(rows=rows)
    found = [d for d in lint_source(src, "k.py").diagnostics if d.code == "KL303"]
    assert all(d.severity is Severity.INFO for d in found)
    return {_verdict(d.message) for d in found}


def test_a_size_added_to_the_index_does_not_scale_it() -> None:
    assert _kl303("state_len - (tl.program_id(0) + 1) * BLOCK_M + tl.arange(0, BLOCK_M)") == {BOUNDED}


def test_a_size_multiplied_into_the_index_still_does() -> None:
    # (pid * state_len + arange) * stride: a flattened batch-times-rows offset, scaled again by the stride
    assert _kl303("tl.program_id(0) * state_len + tl.arange(0, BLOCK_M)") == {LIKELY}


_BATCHED = '''import triton
import triton.language as tl


@triton.jit
def tril(x_ptr, M, N, stride_h, BLOCK: tl.constexpr, BH: tl.constexpr):
    pid_m, pid_b = tl.program_id(0), tl.program_id(1)
    offs_m = pid_m * BLOCK + tl.arange(0, BLOCK)
    base = pid_b * M * N
    idxs = base + offs_m * N
    x = tl.load(x_ptr + idxs)
    tl.store(x_ptr + pid_b * (BH * stride_h) + offs_m, x)


def launch(x, M, N):
    tril[(1, 1)](x, M, N, x.stride(0), BLOCK=16, BH=4)
'''


def _by_line(src: str) -> dict[int, str]:
    return {d.span.start.line: _verdict(d.message) for d in lint_source(src, "k.py").diagnostics
            if d.code == "KL303"}


def test_the_flattened_batch_term_is_the_likely_one_not_the_index_added_to_it() -> None:
    found = _by_line(_BATCHED)
    assert found[9] == LIKELY           # base = pid_b * M * N: the whole B x M x N tensor
    assert found.get(10, BOUNDED) == BOUNDED     # offs_m * N: below one M x N matrix


def test_a_stride_scaled_by_a_block_size_is_one_stride() -> None:
    # pid_b * (BH * stride_h): the stride of a block of BH heads, one index times one stride (flag-gems'
    # sparse MLA kernels)
    assert _by_line(_BATCHED).get(12, BOUNDED) == BOUNDED


def test_fla_batch_offset_stays_likely() -> None:
    from kernlint.rules.int32_offset_overflow import _BATCH

    assert set(_by_line(_BATCH).values()) == {LIKELY}


def test_a_quotient_times_its_divisor_is_bounded_by_the_dividend() -> None:
    # flag-gems' upsample/pixel-shuffle kernels decode a flat index: n = nc // C; c = nc - n * C
    src = '''import triton
import triton.language as tl


@triton.jit
def planes(x_ptr, C, sN, sC, BLOCK: tl.constexpr):
    nc = tl.program_id(1)
    n = nc // C
    c = nc - n * C
    x = tl.load(x_ptr + n * sN + c * sC + tl.arange(0, BLOCK))
    tl.store(x_ptr + n * sN + c * sC + tl.arange(0, BLOCK), x * 2)
'''
    found = _by_line(src)
    assert 9 not in found            # n * C <= nc
    assert found[10] == BOUNDED    # n * sN: one index times one stride, still reported
