"""8-bit dot operands (int8 / fp8) and their int32 accumulators against ptxas/Triton truth.

Truth recorded with (Triton 3.9.0, ptxas 13.4 / ptxas-blackwell 13.4, CPU only):
    kernlint calibrate k.py::int8_gemm --target h100,b200 --arg A=*i8 --arg B=*i8 --arg C=*i32 --arg K=4096
where k.py is INT8_GEMM of tests/shared_sources.py (autotune config 128×128×128, 8 warps, 4 stages):
    sm_90:  128 registers, 81,920 B shared  (TTGIR: A 4 × 16,384 B async copies; B `tt.load` + one
            `ttg.local_alloc` into `nvmma_shared<transposed = true>`, 16,384 B)
    sm_100: 122 registers, 131,088 B shared, 128 TMEM columns
Before the rules: 54 / 52 registers (the [128, 128] int32 accumulator costed as an index tile, 4 elements a
register) and 131,072 B on sm_90 (B assumed pipelined like a K-contiguous tile).
"""
from __future__ import annotations

from kernlint.pipeline.api import Settings, lint_sources

from shared_sources import INT8_GEMM

ARGS = {"A": "*i8", "B": "*i8", "C": "*i32", "K": "4096"}


def _estimates():  # type: ignore[no-untyped-def]
    result = lint_sources([("k.py", INT8_GEMM.encode())], Settings(targets=("h100", "b200"), arg_types=ARGS))
    return {e.target.key: e for e in result.files[0].kernels[0].estimates}


def test_int8_gemm_shared_memory_is_exact_on_sm90_and_sm100() -> None:
    e = _estimates()
    assert e["h100"].smem.total == 4 * 128 * 128 + 128 * 128 == 81_920
    assert e["b200"].smem.total == 4 * (128 * 128 + 128 * 128) + 16 == 131_088
    assert e["b200"].smem.tmem_columns == 128


def test_int32_accumulator_costs_one_register_per_element() -> None:
    e = _estimates()
    for target, truth in (("h100", 128), ("b200", 122)):
        est = e[target].registers.allocated
        # the fragment alone is 128·128 / 256 threads = 64 registers
        assert est >= 64, (target, est)
        assert abs(est - truth) / truth <= 0.10, (target, est, truth)


K_MAJOR_B = INT8_GEMM.replace("b_ptrs = B + rk[:, None] * BN + rn[None, :]", "b_ptrs = B + rk[:, None] + rn[None, :] * K") \
    .replace("b_ptrs += BK * BN", "b_ptrs += BK")


def test_a_k_contiguous_8bit_b_stays_pipelined_on_sm90() -> None:
    # B read K-contiguous ([BK, BN] with unit stride along K) is what wgmma takes: 4 × (A + B) buffers.
    # Measured: triton.compile of K_MAJOR_B for GPUTarget("cuda", 90, 32), 8 warps, 4 stages: 131,072 B
    result = lint_sources([("k.py", K_MAJOR_B.encode())], Settings(targets=("h100",), arg_types=ARGS))
    assert result.files[0].kernels[0].estimates[0].smem.total == 4 * (128 * 128 + 128 * 128)
