"""Shared memory of multi-dot loops (attention backward), counted per loaded tile (kernlint/analysis/dot_buffers.py).

Expected totals are Triton 3.9 `metadata.shared` recorded in benchmarks/truth/suite-triton-3.9.json; the
comments give the per-buffer arithmetic read from the allocation pass (allocation.offset) of the same compiles.
"""
from __future__ import annotations

from conftest import ROOT

from kernlint.pipeline.api import Settings, lint_paths

ATTN = {"stride_z": "i32", "stride_h": "i32", "stride_tok": "i32", "stride_d": "1", "H": "i32", "N_CTX": "i32",
        "Q": "*fp16", "K": "*fp16", "V": "*fp16", "DO": "*fp16", "DQ": "*fp16", "DK": "*fp16", "DV": "*fp16",
        "M": "*fp32", "D": "*fp32", "sm_scale": "fp32"}
# (kernel, target, BLOCK_M, BLOCK_N, warps, stages, Triton shared bytes); HEAD_DIM 128, fp16 tiles.
CASES = [
    # dQ, sm_80: Q + dO 2 × 32,768, Vᵀ 4 × 8,192, Kᵀ kept in registers: 1 × 8,192 + 2,048 transpose scratch
    ("attn_bwd_dq_kernel", "a100", 128, 32, 4, 5, 108544),
    # dQ, sm_90 wgmma: Q + dO 65,536, Kᵀ and Vᵀ 5 × 8,192 each (Kᵀ counted once for q·kᵀ and ds·k)
    ("attn_bwd_dq_kernel", "h100", 128, 32, 4, 5, 147456),
    # dQ, sm_100: Kᵀ 6 × 8,192 (last read by ds·k one stage later), Vᵀ 5 × 8,192, Q + dO, 3 MMAs × 16 B
    ("attn_bwd_dq_kernel", "b200", 128, 32, 4, 5, 155696),
    # dK/dV, sm_80: K + V 65,536, dO 4 × 8,192, Qᵀ 8,192 + 2,048, m and D 2 × 4 × 128 B
    ("attn_bwd_dkdv_kernel", "a100", 32, 128, 4, 5, 109568),
    # dK/dV, sm_100: Qᵀ and dO 6 × 8,192 each, K + V, m and D 2 × 512, 4 MMAs × 16 B
    ("attn_bwd_dkdv_kernel", "b200", 32, 128, 4, 5, 164928),
    # dQ, sm_80, 64×32: Kᵀ copy + scratch (10,240 B) and the staged dS copy (4,096 B) share one place
    ("attn_bwd_dq_kernel", "a100", 64, 32, 4, 3, 59392),
    # num_stages 1: K + V 16,384, Qᵀ copy 4,096 + transpose scratch 2,048 (dO's copy reuses the place)
    ("attn_bwd_dkdv_kernel", "a100", 16, 32, 1, 1, 22528),
]


def test_attention_backward_shared_memory_matches_triton() -> None:
    for kernel, target, bm, bn, w, s, shared in CASES:
        config = {"BLOCK_M": bm, "BLOCK_N": bn, "HEAD_DIM": 128, "CAUSAL": True, "num_warps": w, "num_stages": s}
        result = lint_paths([str(ROOT / "tests/truth/suite_kernels/attention.py")],
                            Settings(targets=(target,), cli_configs=(config,), arg_types=ATTN))
        k = next(k for f in result.files for k in f.kernels if k.jit.name == kernel)
        est = next(e for e in k.estimates if e.config.origin == "cli")
        assert est.smem.total == shared, (kernel, target, bm, bn, w, s, est.smem.total)


FWD = {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "sm_scale": "fp32", "M": "*fp32", "Out": "*fp16", "H": "i32",
       "N_CTX": "i32", **{f"stride_{t}{a}": "i32" for t in "qkvo" for a in "zh"},
       "stride_qm": "i32", "stride_kn": "i32", "stride_vn": "i32", "stride_om": "i32",
       "stride_qk": "1", "stride_kk": "1", "stride_vk": "1", "stride_ok": "1"}


def test_forward_p_operand_staged_when_mma_warps_lie_along_n() -> None:
    """examples/attention_fwd.py, sm_80, HEAD_DIM 128 (truth benchmarks/truth/triton-3.9.json):
    BLOCK_M 64: Q 16,384 + K, V 2 × 2 × 16,384 + P copy 64×64×2 = 90,112; BLOCK_M 128 (warps along M): no copy,
    Q 32,768 + K, V 2 × 2 × 8,192 = 65,536."""
    for bm, bn, shared in ((64, 64, 90112), (128, 32, 65536)):
        config = {"BLOCK_M": bm, "BLOCK_N": bn, "HEAD_DIM": 128, "CAUSAL": True, "num_warps": 4, "num_stages": 3}
        result = lint_paths([str(ROOT / "examples/attention_fwd.py")],
                            Settings(targets=("a100",), cli_configs=(config,), arg_types=FWD))
        k = next(k for f in result.files for k in f.kernels if k.jit.name == "attn_fwd_kernel")
        est = next(e for e in k.estimates if e.config.origin == "cli")
        assert est.smem.total == shared, (bm, bn, est.smem.total)


def test_sm100_attention_backward_registers_leave_tmem_and_smem_operands_out() -> None:
    """b200 ptxas registers (benchmarks/truth/suite-triton-3.9.json): dK/dV += dot accumulators stay in tensor
    memory and K, V (dQ: Q, dO) are read by tcgen05 from shared memory, so the estimate must land within 20 %
    (it counted two fp32 accumulators and two fp16 operand tiles before: 255/238/218 registers)."""
    cases = [("attn_bwd_dkdv_kernel", 64, 64, 4, 3, 166), ("attn_bwd_dkdv_kernel", 64, 128, 8, 3, 156),
             ("attn_bwd_dq_kernel", 128, 64, 8, 3, 126)]
    for kernel, bm, bn, w, s, regs in cases:
        config = {"BLOCK_M": bm, "BLOCK_N": bn, "HEAD_DIM": 128, "CAUSAL": True, "num_warps": w, "num_stages": s}
        result = lint_paths([str(ROOT / "tests/truth/suite_kernels/attention.py")],
                            Settings(targets=("b200",), cli_configs=(config,), arg_types=ATTN))
        k = next(k for f in result.files for k in f.kernels if k.jit.name == kernel)
        est = next(e for e in k.estimates if e.config.origin == "cli")
        assert abs(est.registers.allocated - regs) <= 0.2 * regs, (kernel, bm, bn, est.registers.allocated, regs)
