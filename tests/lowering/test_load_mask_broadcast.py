"""`tl.load` broadcasts its pointer block with the mask and `other` (Triton's semantic.load): the loaded tile
has the broadcast shape. A `(1, RANK)` address row loaded under a `(BLOCK_M, 1)` mask is a (BLOCK_M, RANK)
tile, so a `tl.dot` on it is not an M=1 dot (KL302 on LoRA-style kernels was wrong for this reason)."""
from __future__ import annotations

from kernlint.pipeline.api import lint_source

_KERNEL = '''import triton
import triton.language as tl


@triton.jit
def lora_shrink(x_ptr, w_ptr, y_ptr, M, BLOCK_M: tl.constexpr, RANK: tl.constexpr, BLOCK_K: tl.constexpr):
    pid = tl.program_id(0)
    rm = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    rr = tl.arange(0, RANK)
    rk = tl.arange(0, BLOCK_K)
    s = tl.load(w_ptr + rr[None, :], {mask})
    w = tl.load(w_ptr + rk[:, None] * RANK + rr[None, :])
    acc = tl.dot(s, tl.trans(w))
    tl.store(y_ptr + rm[:, None] * RANK + rr[None, :], acc, mask=(rm < M)[:, None])


def launch(x, w, y, M):
    lora_shrink[(triton.cdiv(M, 16),)](x, w, y, M, BLOCK_M=16, RANK=32, BLOCK_K=32, num_warps=4)
'''


def _kl302(mask: str) -> list[str]:
    return [d.message for d in lint_source(_KERNEL.format(mask=mask), "k.py").diagnostics if d.code == "KL302"]


def test_a_row_address_under_a_column_mask_is_a_full_tile() -> None:
    # compiles with Triton 3.9 for sm_90 (the (16, 32) x (32, 32) dot is legal)
    assert _kl302("mask=(rm < M)[:, None], other=0.0") == []


def test_other_broadcasts_too_and_an_unmasked_row_is_still_m_1() -> None:
    assert _kl302("mask=rr[None, :] < RANK, other=tl.zeros((BLOCK_M, 1), dtype=tl.float16)") == []
    found = _kl302("mask=rr[None, :] < RANK, other=0.0")
    assert len(found) == 1 and "M=1 < 16" in found[0]
