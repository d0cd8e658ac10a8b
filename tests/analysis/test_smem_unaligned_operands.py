"""Dot operands the pipeliner cannot copy asynchronously because they are not aligned (axis_divisibility.py),
and how tcgen05 keeps such register-staged operands (smem_loops.py).

A tile offset by an integer loaded at run time has AxisInfo divisibility 1, so each thread moves one 2-byte
element: under cp.async's 4 bytes (AssignLatencies.cpp, isSmallLoad). The tile stays a register load staged
once through shared memory; the other operand is pipelined as usual. A mask against a loaded bound has
constancy 1 and the same effect. On sm_100 the MMA is still pipelined: two copies of the staged operand, the
async operand num_stages buffers, a 16-B barrier; inside a `flatten=True` loop the older rule holds.

Every expected number below is `metadata.shared` of Triton 3.9 `triton.compile` of exactly this source for
sm_80, sm_90 and sm_100 (fp16 pointers, i32 start/count pointers, i32 arguments with divisibility 16).
"""
from __future__ import annotations

from pathlib import Path

from kernlint.pipeline.api import Settings, lint_paths

KERNEL = '''import triton
import triton.language as tl


@triton.jit
def unaligned_operand_kernel(a_ptr, b_ptr, c_ptr, start_ptr, count_ptr, K, stride_am, stride_bk,
                             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                             SHIFT_A: tl.constexpr, SHIFT_B: tl.constexpr, SCALE: tl.constexpr,
                             MASK: tl.constexpr):
    start = tl.load(start_ptr)          # a run-time offset: AxisInfo divisibility 1
    count = tl.load(count_ptr)
    offs_m = tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_col = start * SCALE if SHIFT_A else 0
    b_col = start * SCALE if SHIFT_B else 0
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        ks = k + offs_k
        a_ptrs = a_ptr + offs_m[:, None] * stride_am + (a_col + ks)[None, :]
        b_ptrs = b_ptr + ks[:, None] * stride_bk + (b_col + offs_n)[None, :]
        if MASK == 1:
            a = tl.load(a_ptrs, mask=ks[None, :] < K, other=0.0)
        elif MASK == 2:
            a = tl.load(a_ptrs, mask=ks[None, :] < count, other=0.0)
        else:
            a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + offs_m[:, None] * BLOCK_N + offs_n[None, :], acc.to(tl.float16))


@triton.jit
def persistent_clamped_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk,
                              BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                              NUM_SMS: tl.constexpr, FLAT: tl.constexpr):
    start_pid = tl.program_id(axis=0)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_tiles = tl.cdiv(M, BLOCK_M) * num_pid_n
    for tile_id in tl.range(start_pid, num_tiles, NUM_SMS, flatten=FLAT):
        pid_m = tile_id // num_pid_n
        pid_n = tile_id % num_pid_n
        offs_am = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_bn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        offs_bn = tl.where(offs_bn < N, offs_bn, 0)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for ki in range(tl.cdiv(K, BLOCK_K)):
            offs_k = ki * BLOCK_K + tl.arange(0, BLOCK_K)
            a = tl.load(a_ptr + offs_am[:, None] * stride_am + offs_k[None, :])
            b = tl.load(b_ptr + offs_k[:, None] * stride_bk + offs_bn[None, :])
            acc = tl.dot(a, b, acc)
        tl.store(c_ptr + offs_am[:, None] * BLOCK_N + offs_bn[None, :], acc.to(tl.float16))
'''

# (SHIFT_A, SHIFT_B, SCALE, MASK, BLOCK_M, BLOCK_N, BLOCK_K, warps, stages) → (sm_80, sm_90, sm_100) bytes
TRUTH = {
    (0, 0, 1, 0, 64, 64, 64, 4, 3): (32768, 49152, 49168),      # aligned: both operands pipelined
    (0, 0, 1, 0, 128, 64, 32, 4, 4): (36864, 49152, 49168),
    (1, 0, 1, 0, 64, 64, 64, 4, 3): (24576, 32768, 40976),      # A offset by a loaded integer
    (1, 0, 1, 0, 128, 64, 32, 4, 4): (20480, 24576, 32784),
    (1, 0, 1, 0, 128, 128, 64, 8, 2): (32768, 49152, 65552),
    (1, 0, 16, 0, 64, 64, 64, 4, 3): (32768, 49152, 49168),     # the offset × 16 is aligned again
    (0, 1, 1, 0, 64, 64, 64, 4, 3): (24576, 32768, 40976),      # B offset by a loaded integer
    (0, 1, 1, 0, 128, 64, 32, 4, 4): (28672, 36864, 40976),
    (1, 1, 1, 0, 64, 64, 64, 4, 3): (16384, 16384, 32784),      # both: one copy each, two on sm_100
    (1, 1, 1, 0, 128, 128, 64, 8, 2): (32768, 32768, 65552),
    (0, 0, 1, 1, 64, 64, 64, 4, 3): (32768, 49152, 49168),      # mask k < K (i32 argument)
    (0, 0, 1, 2, 64, 64, 64, 4, 3): (24576, 32768, 40976),      # mask k < count (loaded)
    (0, 0, 1, 2, 128, 64, 32, 4, 4): (20480, 24576, 32784),
}
TARGETS = ("a100", "h100", "b200")


def _estimates(tmp_path: Path, kernel: str, configs: list[dict[str, int]]) -> dict[tuple[str, tuple], int]:
    path = tmp_path / "kernels.py"
    path.write_text(KERNEL)
    result = lint_paths([str(path)], Settings(targets=TARGETS, cli_configs=tuple(configs),
                                               arg_types={"*": "*fp16", "start_ptr": "*i32", "count_ptr": "*i32"}))
    out: dict[tuple[str, tuple], int] = {}
    for k in result.files[0].kernels:
        if k.jit.name != kernel:
            continue
        for e in k.estimates:
            if e.config.origin == "cli" and e.smem is not None:
                key = tuple(sorted(e.config.constexprs.items())) + (e.config.num_warps, e.config.num_stages)
                out[(e.target.key, key)] = e.smem.total
    return out


def test_unaligned_operands_are_staged_not_pipelined(tmp_path: Path) -> None:
    configs = [dict(SHIFT_A=sa, SHIFT_B=sb, SCALE=sc, MASK=mk, BLOCK_M=m, BLOCK_N=n, BLOCK_K=k, num_warps=w,
                    num_stages=s) for sa, sb, sc, mk, m, n, k, w, s in TRUTH]
    got = _estimates(tmp_path, "unaligned_operand_kernel", configs)
    wrong = []
    for cfg, expected in zip(configs, TRUTH.values()):
        key = tuple(sorted((a, b) for a, b in cfg.items() if not a.startswith("num_"))) \
            + (cfg["num_warps"], cfg["num_stages"])
        for target, truth in zip(TARGETS, expected):
            if got.get((target, key)) != truth:
                wrong.append((target, cfg, got.get((target, key)), truth))
    assert not wrong, wrong


def test_tcgen05_staged_operand_outside_flattened_loops(tmp_path: Path) -> None:
    """B clamped with tl.where: flatten=True keeps one staged copy, 2 × A and an 8-B barrier on sm_100
    (24,584 B); the same nest without flattening pipelines the MMA: 3 × A + 2 × B + 16 = 40,976 B."""
    configs = [dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=64, NUM_SMS=132, FLAT=flat, num_warps=4, num_stages=3)
               for flat in (1, 0)]
    got = _estimates(tmp_path, "persistent_clamped_kernel", configs)
    by_flat = {dict(key[:-2])["FLAT"]: total for (target, key), total in got.items() if target == "b200"}
    assert by_flat == {1: 24584, 0: 40976}
    assert {t: v for (t, key), v in got.items() if dict(key[:-2])["FLAT"] == 0} == \
        {"a100": 24576, "h100": 32768, "b200": 40976}
