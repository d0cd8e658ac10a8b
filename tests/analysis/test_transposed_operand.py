"""A dot operand computed in the loop from loaded tiles: which loads Triton pipelines, and what a transpose
changes (placement.transposed_source, dot_buffers.loop_dot_buffers).

The kernels below scale a loaded [BT, BK] fp16 tile k by a loaded [BT] fp32 row s and feed it to tl.dot, as
is, transposed, or transposed into two dots (fla's chunk kernels: dot(trans(k_decay), v)). Truth: Triton 3.9
compiles of exactly these kernels (BT = BK = BV = 64, fp16 k/b/c, fp32 s/o, 16-byte-aligned pointers):

  kernel                            warps/stages  sm_80    sm_90    sm_100
  scaled_a                          4 / 3         33,280   41,472   41,488
                                    8 / 4         49,920   58,112   58,128
  scaled_a_transposed               4 / 3         25,088   33,280   49,680
                                    8 / 4         33,536   41,728   66,320
  two_dots_sharing_a_transposed     4 / 3         41,472   57,856   74,272
                                    8 / 4         58,112   74,496   99,104

By hand: B operand buffers are (stages − 1) × 8,192 B on sm_80 (mma.sync) and stages × 8,192 B on sm_90 /
sm_100; the row s is pipelined into (stages − 1) × 256 B; untransposed, k is pipelined too ((stages − 1) ×
8,192 B); transposed, k stays in registers and Aᵀ is staged once (8,192 B), except on sm_100 where k is
pipelined as well; sm_100 adds 16 B of mbarrier per MMA. E.g. scaled_a_transposed, 4 warps / 3 stages, sm_80:
2 × 8,192 + 8,192 + 2 × 256 = 25,088. Before this rule kernlint counted k's pipeline for the transposed
operand (32,768 B) and left out s (−512 B).
"""
from __future__ import annotations

from pathlib import Path

from kernlint.pipeline.api import Settings, lint_paths

KERNELS = '''import triton
import triton.language as tl


@triton.jit
def scaled_a(k_ptr, s_ptr, b_ptr, o_ptr, NT, BT: tl.constexpr, BK: tl.constexpr, BV: tl.constexpr):
    o_t = tl.arange(0, BT); o_k = tl.arange(0, BK); o_v = tl.arange(0, BV)
    acc = tl.zeros([BT, BV], dtype=tl.float32)
    for i in range(NT):
        kk = tl.load(k_ptr + i * BT * BK + o_t[:, None] * BK + o_k[None, :])
        s = tl.load(s_ptr + i * BT + o_t)
        a = (kk * s[:, None]).to(tl.float16)
        b = tl.load(b_ptr + i * BK * BV + o_k[:, None] * BV + o_v[None, :])
        acc += tl.dot(a, b)
    tl.store(o_ptr + o_t[:, None] * BV + o_v[None, :], acc)


@triton.jit
def scaled_a_transposed(k_ptr, s_ptr, b_ptr, o_ptr, NT, BT: tl.constexpr, BK: tl.constexpr, BV: tl.constexpr):
    o_t = tl.arange(0, BT); o_k = tl.arange(0, BK); o_v = tl.arange(0, BV)
    acc = tl.zeros([BK, BV], dtype=tl.float32)
    for i in range(NT):
        kk = tl.load(k_ptr + i * BT * BK + o_t[:, None] * BK + o_k[None, :])
        s = tl.load(s_ptr + i * BT + o_t)
        a = (kk * s[:, None]).to(tl.float16)
        b = tl.load(b_ptr + i * BT * BV + o_t[:, None] * BV + o_v[None, :])
        acc += tl.dot(tl.trans(a), b)
    tl.store(o_ptr + o_k[:, None] * BV + o_v[None, :], acc)


@triton.jit
def two_dots_sharing_a_transposed(k_ptr, s_ptr, b_ptr, c_ptr, o_ptr, NT, BT: tl.constexpr, BK: tl.constexpr, BV: tl.constexpr):
    o_t = tl.arange(0, BT); o_k = tl.arange(0, BK); o_v = tl.arange(0, BV)
    acc = tl.zeros([BK, BV], dtype=tl.float32)
    acc2 = tl.zeros([BK, BV], dtype=tl.float32)
    for i in range(NT):
        kk = tl.load(k_ptr + i * BT * BK + o_t[:, None] * BK + o_k[None, :])
        s = tl.load(s_ptr + i * BT + o_t)
        a = (kk * s[:, None]).to(tl.float16)
        b = tl.load(b_ptr + i * BT * BV + o_t[:, None] * BV + o_v[None, :])
        c = tl.load(c_ptr + i * BT * BV + o_t[:, None] * BV + o_v[None, :])
        acc += tl.dot(tl.trans(a), b)
        acc2 += tl.dot(tl.trans(a), c)
    tl.store(o_ptr + o_k[:, None] * BV + o_v[None, :], acc + acc2)
'''

BUF = 64 * 64 * 2      # one [64, 64] fp16 tile
ROW = 64 * 4           # the [64] fp32 row
BAR = 16               # one tcgen05 mbarrier per MMA


def _expected(kernel: str, cap: int, stages: int) -> int:
    b = (stages - 1 if cap == 80 else stages) * BUF          # B operand(s)
    rows = (stages - 1) * ROW
    bars = BAR if cap == 100 else 0
    if kernel == "scaled_a":
        return b + (stages - 1) * BUF + rows + bars
    k_pipe = (stages - 1) * BUF if cap == 100 else 0         # sm_100 still pipelines k
    if kernel == "scaled_a_transposed":
        return b + BUF + k_pipe + rows + bars
    return 2 * b + BUF + k_pipe + rows + 2 * bars             # two dots share Aᵀ


TRUTH = {  # Triton 3.9 (module docstring)
    ("scaled_a", 80, 3): 33280, ("scaled_a", 90, 3): 41472, ("scaled_a", 100, 3): 41488,
    ("scaled_a", 80, 4): 49920, ("scaled_a", 90, 4): 58112, ("scaled_a", 100, 4): 58128,
    ("scaled_a_transposed", 80, 3): 25088, ("scaled_a_transposed", 90, 3): 33280,
    ("scaled_a_transposed", 100, 3): 49680, ("scaled_a_transposed", 80, 4): 33536,
    ("scaled_a_transposed", 90, 4): 41728, ("scaled_a_transposed", 100, 4): 66320,
    ("two_dots_sharing_a_transposed", 80, 3): 41472, ("two_dots_sharing_a_transposed", 90, 3): 57856,
    ("two_dots_sharing_a_transposed", 100, 3): 74272, ("two_dots_sharing_a_transposed", 80, 4): 58112,
    ("two_dots_sharing_a_transposed", 90, 4): 74496, ("two_dots_sharing_a_transposed", 100, 4): 99104,
}


def test_the_hand_arithmetic_matches_triton() -> None:
    for (kernel, cap, stages), shared in TRUTH.items():
        assert _expected(kernel, cap, stages) == shared, (kernel, cap, stages)


def test_computed_operands_stage_what_triton_stages(tmp_path: Path) -> None:
    path = tmp_path / "computed_operands.py"
    path.write_text(KERNELS)
    configs = ({"BT": 64, "BK": 64, "BV": 64, "num_warps": 4, "num_stages": 3},
               {"BT": 64, "BK": 64, "BV": 64, "num_warps": 8, "num_stages": 4})
    result = lint_paths([str(path)], Settings(targets=("a100", "h100", "b200"), cli_configs=configs,
                                               arg_types={"*": "*fp16", "s_ptr": "*fp32", "o_ptr": "*fp32"}))
    got = {(k.jit.name, e.target.capability, e.config.num_stages): e.smem.total
           for k in result.files[0].kernels for e in k.estimates if e.config.origin == "cli"}
    assert got == TRUTH
