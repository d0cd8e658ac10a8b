"""Loads in loops that read the same tile every iteration (liveness.invariant_load). Without a dot, an
explicit `tl.range(num_stages=...)` loop gives only a load whose address moves num_stages - 1 buffers
(smem.py); a dot operand loaded the same way is staged once, except on tcgen05 (placement._hoisted).

Truth (`kernlint calibrate` of these kernels, Triton 3.9, fp16, equal on sm_80, sm_90 and sm_100):
  moving tile: 4 buffers x 128 x 32 x 2 B = 32,768 B (BLOCK_M=128, BLOCK_K=32, 2 warps) and 4 x 64 x 64 x 2 B
  = 32,768 B (64 x 64, 4 warps); the same tile: 256 B and 128 B, only the conversion of the fp32 row sum,
  cast to fp16, for its store (BLOCK_M x 2 B). Found by compiling fuzz-generated kernels (4 x 8 KiB counted).
"""
from __future__ import annotations

from pathlib import Path

from kernlint.pipeline.api import Settings, lint_paths

KERNELS = '''import triton
import triton.language as tl


@triton.jit
def same_tile_kernel(x_ptr, out_ptr, M, K, stride_m, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr):
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M,), dtype=tl.float32)
    for k in tl.range(0, K, BLOCK_K, num_stages=5):
        x = tl.load(x_ptr + offs_m[:, None] * stride_m + offs_k[None, :])
        acc += tl.sum(x.to(tl.float32), axis=1)
    tl.store(out_ptr + offs_m, acc)


@triton.jit
def moving_tile_kernel(x_ptr, out_ptr, M, K, stride_m, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr):
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M,), dtype=tl.float32)
    for k in tl.range(0, K, BLOCK_K, num_stages=5):
        x = tl.load(x_ptr + offs_m[:, None] * stride_m + (k + offs_k)[None, :])
        acc += tl.sum(x.to(tl.float32), axis=1)
    tl.store(out_ptr + offs_m, acc)
'''


def _shared(tmp_path: Path, source: str, configs: tuple[dict[str, int], ...],
            key: str = "num_warps") -> dict[tuple[str, str, int], int]:
    """(kernel, target, the config's `key`) → estimated shared memory of each config, fp16 pointers, three
    targets."""
    path = tmp_path / "kernel.py"
    path.write_text(source)
    result = lint_paths([str(path)], Settings(targets=("a100", "h100", "b200"), cli_configs=configs,
                                               arg_types={"*": "*fp16"}))
    return {(k.jit.name, e.target.key, e.config.num_warps if key == "num_warps" else e.config.constexprs[key]):
            e.smem.total for k in result.files[0].kernels for e in k.estimates if e.config.origin == "cli"}


def test_only_moving_loads_are_pipelined(tmp_path: Path) -> None:
    configs = ({"BLOCK_M": 128, "BLOCK_K": 32, "num_warps": 2, "num_stages": 5},
               {"BLOCK_M": 64, "BLOCK_K": 64, "num_warps": 4, "num_stages": 5})
    got = _shared(tmp_path, KERNELS, configs)
    for target in ("a100", "h100", "b200"):
        assert got[("moving_tile_kernel", target, 2)] == 4 * 128 * 32 * 2
        assert got[("moving_tile_kernel", target, 4)] == 4 * 64 * 64 * 2
        assert got[("same_tile_kernel", target, 2)] == 128 * 2
        assert got[("same_tile_kernel", target, 4)] == 64 * 2


DOT = '''import triton
import triton.language as tl


@triton.jit
def same_operands_kernel(a_ptr, b_ptr, c_ptr, K, stride_am, stride_bk, stride_cm,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    offs_m = tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + offs_m[:, None] * stride_am + offs_k[None, :])
        b = tl.load(b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :], acc)
'''


def test_dot_operands_read_the_same_every_trip(tmp_path: Path) -> None:
    """A dot loop whose A and B addresses never move: Triton stages each operand once on mma.sync and wgmma,
    but tcgen05's pipeliner still buffers them num_stages times. Truth (`kernlint calibrate`, Triton 3.9, fp16):
    128×64×32 at 1 warp, num_stages 4: 12,288 B on sm_80/90/100 ((128×32 + 32×64) × 2 B); 128×128×64 at
    4 warps, num_stages 3: 32,768 B on sm_80/90, 3 × 32,768 + 16 B of barriers on sm_100. Pipelined, as
    before this rule, sm_90's wgmma would have taken 3 × 32,768 B."""
    configs = ({"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 32, "num_warps": 1, "num_stages": 4},
               {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "num_warps": 4, "num_stages": 3})
    got = _shared(tmp_path, DOT, configs)
    name = "same_operands_kernel"
    assert got == {(name, "a100", 1): 12288, (name, "h100", 1): 12288, (name, "b200", 1): 12288,
                   (name, "a100", 4): 32768, (name, "h100", 4): 32768, (name, "b200", 4): 3 * 32768 + 16}


UNROLLED = '''import triton
import triton.language as tl


@triton.jit
def unrolled_dots_kernel(a_ptr, b_ptr, c_ptr, stride_am, stride_bk, stride_cm,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    offs_m = tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for i in tl.static_range(4):
        a = tl.load(a_ptr + offs_m[:, None] * stride_am + (i * BLOCK_K + offs_k)[None, :])
        b = tl.load(b_ptr + (i * BLOCK_K + offs_k)[:, None] * stride_bk + offs_n[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :], acc)
'''


def test_static_range_dots_are_not_pipelined(tmp_path: Path) -> None:
    """tl.static_range is unrolled while tracing, so its dots are straight-line code: one copy of A and B
    (the unrolled dots reuse it), whatever num_stages says. Truth (`kernlint calibrate`, Triton 3.9, fp16):
    64×64×32 at 4 warps, num_stages 4: 8,192 B on sm_80/90, + 8 B (one mbarrier) on sm_100; 128×128×64
    at 8 warps, num_stages 3: 32,768 B, + 8 B on sm_100. Pipelined as a loop it was 3 × A + B and a 16-B
    barrier pair (found by benchmarks/fuzz_truth.py)."""
    configs = ({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "num_warps": 4, "num_stages": 4},
               {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "num_warps": 8, "num_stages": 3})
    got = _shared(tmp_path, UNROLLED, configs)
    name = "unrolled_dots_kernel"
    assert got == {(name, "a100", 4): 8192, (name, "h100", 4): 8192, (name, "b200", 4): 8192 + 8,
                   (name, "a100", 8): 32768, (name, "h100", 8): 32768, (name, "b200", 8): 32768 + 8}


STRIDED = '''import triton
import triton.language as tl


@triton.jit
def strided_same_operands_kernel(a_ptr, b_ptr, c_ptr, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm,
                                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    offs_m = tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak)
        b = tl.load(b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn)
        acc += tl.dot(a, b)
    tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :], acc)
'''


def test_strided_operands_read_the_same_every_trip_are_counted_once(tmp_path: Path) -> None:
    """The same, with no unit stride along either operand's contiguous dim (scalar loads, so the MMA takes
    them through registers): each copy was counted twice, once as staged and once as a computed operand
    (benchmarks/fuzz.py seed 17: shared memory "fell" from 40,960 to 24,584 B when BLOCK_M doubled). Truth
    (Triton 3.9, fp16 pointers, 8 warps, num_stages 3): 32×128×64 → 20,480 B on sm_80/90/100 ((32×64 +
    64×128) × 2 B); 64×128×64 → 24,576 B on sm_80/90 ((64×64 + 64×128) × 2 B), and 2 × 24,576 + 16 B on
    sm_100, whose MMA is pipelined over the register-staged copies (smem_loops.py)."""
    configs = ({"BLOCK_M": 32, "BLOCK_N": 128, "BLOCK_K": 64, "num_warps": 8, "num_stages": 3},
               {"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 64, "num_warps": 8, "num_stages": 3})
    got = _shared(tmp_path, STRIDED, configs, key="BLOCK_M")
    name = "strided_same_operands_kernel"
    assert got == {
        (name, "a100", 32): 20480, (name, "h100", 32): 20480, (name, "b200", 32): 20480,
        (name, "a100", 64): 24576, (name, "h100", 64): 24576, (name, "b200", 64): 2 * 24576 + 16}
