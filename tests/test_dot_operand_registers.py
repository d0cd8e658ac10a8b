"""Registers of matmul-family (dot) kernels whose operands reach the dot through constructs the tile model
must see through. Expected numbers are ptxas register counts of Triton 3.9 compiles recorded in
benchmarks/truth/triton-3.9.json, or hand arithmetic written next to them."""
from __future__ import annotations

from conftest import ROOT

from kernlint.api import Settings, lint_paths

BMM_ARGS = {"a_ptr": "*bf16", "b_ptr": "*bf16", "c_ptr": "*bf16", "M": "i32", "N": "i32", "K": "i32",
            "stride_ab": "i32", "stride_am": "i32", "stride_ak": "1", "stride_bb": "i32", "stride_bk": "i32",
            "stride_bn": "1", "stride_cb": "i32", "stride_cm": "i32", "stride_cn": "1"}


def _estimate(path: str, kernel: str, target: str, config: dict, args: dict):
    result = lint_paths([str(ROOT / path)], Settings(targets=(target,), cli_configs=(config,), arg_types=args))
    k = next(k for f in result.files for k in f.kernels if k.jit.name == kernel)
    return next(e for e in k.estimates if e.config.origin == "cli")


def test_operands_loaded_under_constexpr_if_are_pipelined_views() -> None:
    """examples/batched_matmul.py loads A and B under `if EVEN_K:` / `else:`. Triton resolves the constexpr
    branch and pipelines both loads into shared memory (sm_90 TTGIR: ttg.async_copy_global_to_local into
    4 buffers, warp_group_dot reads them), so the if-merged values are views of shared memory, not two
    register tiles. ptxas (benchmarks/truth/triton-3.9.json, h100): 64×64×64 w4 s4 → 64 registers,
    128×128×64 w8 s3 → 116, 64×128×64 w4 s3 → 118. Before the rule kernlint counted both 64×64 bf16 tiles
    (16 words per thread each, × 0.95) on top: 102 / 141 / 164."""
    for config, ptxas in (({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 64, "num_warps": 4, "num_stages": 4}, 64),
                          ({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "num_warps": 8, "num_stages": 3}, 116),
                          ({"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 64, "num_warps": 4, "num_stages": 3}, 118)):
        est = _estimate("examples/batched_matmul.py", "bmm_kernel", "h100", {**config, "EVEN_K": True}, BMM_ARGS)
        (dot,) = est.dots
        assert len(dot.pipelined_operands) == 2 and len(dot.operand_views) == 2
        assert abs(est.registers.allocated - ptxas) <= 0.2 * ptxas, (config, est.registers.allocated, ptxas)


def test_operands_loaded_in_the_else_branch_are_found() -> None:
    """With EVEN_K false only the masked loads of the else-branch are lowered: the dot's operands are still
    the pipelined loads (same shared memory as the then-branch: 4 × (64·64 + 64·64) × 2 B = 65,536 B on
    sm_90 with 4 stages, wgmma reads num_stages buffers). Measured (Triton 3.9, sm_90, EVEN_K=False):
    shared 65,536 B, 64 registers."""
    config = {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 64, "num_warps": 4, "num_stages": 4}
    taken = _estimate("examples/batched_matmul.py", "bmm_kernel", "h100", {**config, "EVEN_K": False}, BMM_ARGS)
    (dot,) = taken.dots
    assert len(dot.pipelined_operands) == 2
    assert taken.smem.total == 4 * (64 * 64 + 64 * 64) * 2
    assert abs(taken.registers.allocated - 64) <= 0.2 * 64, taken.registers.allocated
