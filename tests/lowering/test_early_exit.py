"""A runtime early exit (`if ...: return`) does not end the analysis (kernlint/lowering/control_flow.py).

The CTAs that do not exit run the rest of the body, and Triton compiles it all: the registers and shared
memory of a kernel with an early exit are those of the same kernel without it. Before the fix the lowerer
stopped at the `return`, so liger-kernel's `_moe_bwd_dW2_kernel` (public truth: 16-33 KiB of shared memory,
54-128 registers) was estimated at 0 B and 12 registers with the confidence "estimate".
"""
from __future__ import annotations

from pathlib import Path

from kernlint.pipeline.api import Settings, lint_paths

KERNELS = '''
import triton
import triton.language as tl


@triton.jit
def _scaled(x, s):
    if s == 0:
        return x
    return x * s


@triton.jit
def grouped_dot(a_ptr, b_ptr, c_ptr, starts_ptr, EXIT: tl.constexpr, BLOCK_M: tl.constexpr,
                BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    g = tl.program_id(0)
    start = tl.load(starts_ptr + g)
    rows = tl.load(starts_ptr + g + 1) - start
    if EXIT:
        if rows == 0:
            return
    offs_m = tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, rows, BLOCK_K):
        a = tl.load(a_ptr + offs_m[:, None] * 1024 + (k + offs_k)[None, :])
        b = tl.load(b_ptr + (k + offs_k)[:, None] * 1024 + offs_n[None, :])
        acc = tl.dot(a, b, acc)
    acc = _scaled(acc, rows)
    tl.store(c_ptr + offs_m[:, None] * 1024 + offs_n[None, :], acc.to(tl.float16))
'''
ARGS = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "starts_ptr": "*i32"}


def _estimates(tmp_path: Path, exit_early: bool, target: str) -> tuple[int, int, str]:
    path = tmp_path / "early_exit.py"
    path.write_text(KERNELS)
    cfg = {"EXIT": exit_early, "BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "num_warps": 8, "num_stages": 3}
    res = lint_paths([str(path)], Settings(targets=(target,), cli_configs=(cfg,), arg_types=ARGS))
    e = next(e for f in res.files for k in f.kernels if k.jit.name == "grouped_dot"
             for e in k.estimates if e.config.origin == "cli")
    assert e.registers is not None and e.smem is not None
    return e.registers.allocated, e.smem.total, e.confidence.value


def test_early_exit_keeps_the_rest_of_the_kernel(tmp_path: Path) -> None:
    for target in ("h100", "a100"):
        with_exit = _estimates(tmp_path, True, target)
        without = _estimates(tmp_path, False, target)
        assert with_exit == without, (target, with_exit, without)
        regs, smem, _ = with_exit
        # the 128x128 fp32 accumulator alone is 64 registers per thread at 8 warps (16,384 / 256), and the
        # pipelined operands are at least two stages of (128x64 + 64x128) fp16 = 2 x 32 KiB
        assert regs >= 64 and smem >= 2 * 32 * 1024, (target, regs, smem)
