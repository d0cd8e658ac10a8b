"""Dot operands computed in registers: what Triton stages, converts or reads from pipelined loads
(kernlint/analysis/computed_operands.py, used by placement.place_dots and dot_buffers.loop_dot_buffers).

Truth: Triton 3.9 compiles of exactly the kernels below (metadata.shared; allocations read in the TTGIR),
fp16 tiles, fp32 output, 16-byte-aligned pointers. Configs: (BM, BN, BK, warps, stages) = (64, 32, 64, 4, 2),
(64, 64, 32, 4, 4) and (128, 64, 128, 8, 3). The hand arithmetic in `_expected` restates each number: A/B are
the operand tiles (fp16, fp32 for the tf32 kernel), Al/Bl the fp16 tiles they are loaded or computed from
(Wl: the int32 tile), p = num_stages − 1 buffers (mma.sync, loads feeding a computed operand), s = num_stages
(a loaded wgmma / tcgen05 operand), 16 B of mbarrier on sm_100, and the tensor-memory conversion of an A
tile from before the loop (linear_layout.scratch_elements: 2,048 B for 64×64 fp16, 4,096 for 64×32, 8,192 for
128×128, all at the measured warps). Before this rule kernlint never staged a loop-invariant computed
operand, staged every computed B on sm_80 (w4a16's rule) and read every computed A from its loads.
"""
from __future__ import annotations

from pathlib import Path

from kernlint.pipeline.api import Settings, lint_paths

KERNELS = '''import triton
import triton.language as tl


@triton.jit
def invariant_a_computed_b(a_ptr, ga_ptr, b_ptr, gb_ptr, s_ptr, w_ptr, o_ptr, NT, scale,
                           BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    om = tl.arange(0, BM)
    on = tl.arange(0, BN)
    ok = tl.arange(0, BK)
    a = (tl.load(a_ptr + om[:, None] * BK + ok[None, :]).to(tl.float32)
         * tl.exp2(tl.load(ga_ptr + om[:, None] * BK + ok[None, :]).to(tl.float32))).to(tl.float16)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for i in range(NT):
        x = tl.load(b_ptr + i * BK * BN + ok[:, None] * BN + on[None, :])
        g = tl.load(gb_ptr + i * BK * BN + ok[:, None] * BN + on[None, :])
        b = (x.to(tl.float32) * tl.exp2(-g.to(tl.float32))).to(tl.float16)
        acc += tl.dot(a, b)
    tl.store(o_ptr + om[:, None] * BN + on[None, :], acc)


@triton.jit
def tf32_invariant_a_computed_b(a_ptr, ga_ptr, b_ptr, gb_ptr, s_ptr, w_ptr, o_ptr, NT, scale,
                                BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    om = tl.arange(0, BM)
    on = tl.arange(0, BN)
    ok = tl.arange(0, BK)
    a = (tl.load(a_ptr + om[:, None] * BK + ok[None, :]).to(tl.float32)
         * tl.exp2(tl.load(ga_ptr + om[:, None] * BK + ok[None, :]).to(tl.float32)))
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for i in range(NT):
        x = tl.load(b_ptr + i * BK * BN + ok[:, None] * BN + on[None, :])
        g = tl.load(gb_ptr + i * BK * BN + ok[:, None] * BN + on[None, :])
        b = x.to(tl.float32) * tl.exp2(-g.to(tl.float32))
        acc += tl.dot(a, b)
    tl.store(o_ptr + om[:, None] * BN + on[None, :], acc)


@triton.jit
def invariant_a_in_loop_body(a_ptr, ga_ptr, b_ptr, gb_ptr, s_ptr, w_ptr, o_ptr, NT, scale,
                             BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    om = tl.arange(0, BM)
    on = tl.arange(0, BN)
    ok = tl.arange(0, BK)
    xa = tl.load(a_ptr + om[:, None] * BK + ok[None, :])
    ga = tl.load(ga_ptr + om[:, None] * BK + ok[None, :])
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for i in range(NT):
        a = (xa.to(tl.float32) * tl.exp2(ga.to(tl.float32))).to(tl.float16)
        b = tl.load(b_ptr + i * BK * BN + ok[:, None] * BN + on[None, :])
        acc += tl.dot(a, b)
    tl.store(o_ptr + om[:, None] * BN + on[None, :], acc)


@triton.jit
def computed_a_invariant_b(a_ptr, ga_ptr, b_ptr, gb_ptr, s_ptr, w_ptr, o_ptr, NT, scale,
                           BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    om = tl.arange(0, BM)
    on = tl.arange(0, BN)
    ok = tl.arange(0, BK)
    b = (tl.load(b_ptr + ok[:, None] * BN + on[None, :]).to(tl.float32)
         * tl.exp2(tl.load(gb_ptr + ok[:, None] * BN + on[None, :]).to(tl.float32))).to(tl.float16)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for i in range(NT):
        x = tl.load(a_ptr + i * BM * BK + om[:, None] * BK + ok[None, :])
        g = tl.load(ga_ptr + i * BM * BK + om[:, None] * BK + ok[None, :])
        a = (x.to(tl.float32) * tl.exp2(g.to(tl.float32))).to(tl.float16)
        acc += tl.dot(a, b)
    tl.store(o_ptr + om[:, None] * BN + on[None, :], acc)


@triton.jit
def loaded_a_computed_b(a_ptr, ga_ptr, b_ptr, gb_ptr, s_ptr, w_ptr, o_ptr, NT, scale,
                        BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    om = tl.arange(0, BM)
    on = tl.arange(0, BN)
    ok = tl.arange(0, BK)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for i in range(NT):
        a = tl.load(a_ptr + i * BM * BK + om[:, None] * BK + ok[None, :])
        x = tl.load(b_ptr + i * BK * BN + ok[:, None] * BN + on[None, :])
        g = tl.load(gb_ptr + i * BK * BN + ok[:, None] * BN + on[None, :])
        b = (x.to(tl.float32) * tl.exp2(g.to(tl.float32))).to(tl.float16)
        acc += tl.dot(a, b)
    tl.store(o_ptr + om[:, None] * BN + on[None, :], acc)


@triton.jit
def a_scaled_by_argument(a_ptr, ga_ptr, b_ptr, gb_ptr, s_ptr, w_ptr, o_ptr, NT, scale,
                         BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    om = tl.arange(0, BM)
    on = tl.arange(0, BN)
    ok = tl.arange(0, BK)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for i in range(NT):
        x = tl.load(a_ptr + i * BM * BK + om[:, None] * BK + ok[None, :])
        a = (x.to(tl.float32) * scale).to(tl.float16)
        b = tl.load(b_ptr + i * BK * BN + ok[:, None] * BN + on[None, :])
        acc += tl.dot(a, b)
    tl.store(o_ptr + om[:, None] * BN + on[None, :], acc)


@triton.jit
def a_plus_invariant_tile(a_ptr, ga_ptr, b_ptr, gb_ptr, s_ptr, w_ptr, o_ptr, NT, scale,
                          BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    om = tl.arange(0, BM)
    on = tl.arange(0, BN)
    ok = tl.arange(0, BK)
    y = tl.load(ga_ptr + om[:, None] * BK + ok[None, :])
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for i in range(NT):
        a = tl.load(a_ptr + i * BM * BK + om[:, None] * BK + ok[None, :]) + y
        b = tl.load(b_ptr + i * BK * BN + ok[:, None] * BN + on[None, :])
        acc += tl.dot(a, b)
    tl.store(o_ptr + om[:, None] * BN + on[None, :], acc)


@triton.jit
def b_shifted_by_arange(a_ptr, ga_ptr, b_ptr, gb_ptr, s_ptr, w_ptr, o_ptr, NT, scale,
                        BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    om = tl.arange(0, BM)
    on = tl.arange(0, BN)
    ok = tl.arange(0, BK)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for i in range(NT):
        a = tl.load(a_ptr + i * BM * BK + om[:, None] * BK + ok[None, :])
        w = tl.load(w_ptr + i * BK * BN + ok[:, None] * BN + on[None, :])
        b = ((w >> ((ok % 8) * 4)[:, None]) & 0xF).to(tl.float16)
        acc += tl.dot(a, b)
    tl.store(o_ptr + om[:, None] * BN + on[None, :], acc)


@triton.jit
def b_scaled_by_loaded_scalar(a_ptr, ga_ptr, b_ptr, gb_ptr, s_ptr, w_ptr, o_ptr, NT, scale,
                              BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    om = tl.arange(0, BM)
    on = tl.arange(0, BN)
    ok = tl.arange(0, BK)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for i in range(NT):
        a = tl.load(a_ptr + i * BM * BK + om[:, None] * BK + ok[None, :])
        c = tl.load(s_ptr + i)
        b = (tl.load(b_ptr + i * BK * BN + ok[:, None] * BN + on[None, :]).to(tl.float32) * c).to(tl.float16)
        acc += tl.dot(a, b)
    tl.store(o_ptr + om[:, None] * BN + on[None, :], acc)
'''

GATED = '''import triton
import triton.language as tl


@triton.jit
def gated_attn(q_ptr, k_ptr, v_ptr, g_ptr, o_ptr, T, BT: tl.constexpr, BS: tl.constexpr, BK: tl.constexpr):
    o_q = tl.arange(0, BT)
    o_d = tl.arange(0, BK)
    q = tl.load(q_ptr + o_q[:, None] * BK + o_d[None, :])
    gq = tl.load(g_ptr + o_q[:, None] * BK + o_d[None, :]).to(tl.float32)
    q_til = (q.to(tl.float32) * tl.exp2(gq)).to(tl.float16)
    m = tl.full([BT], float('-inf'), tl.float32)
    acc = tl.zeros([BT, BK], tl.float32)
    for i in range(0, T, BS):
        o_k = i + tl.arange(0, BS)
        k = tl.load(k_ptr + o_d[:, None] + o_k[None, :] * BK)
        gk = tl.load(g_ptr + o_d[:, None] + o_k[None, :] * BK).to(tl.float32)
        k_til = (k.to(tl.float32) * tl.exp2(-gk)).to(tl.float16)
        s = tl.dot(q_til, k_til)
        m_new = tl.maximum(m, tl.max(s, 1))
        p = tl.exp2(s - m_new[:, None])
        acc = acc * tl.exp2(m - m_new)[:, None]
        v = tl.load(v_ptr + o_k[:, None] * BK + o_d[None, :])
        acc += tl.dot(p.to(tl.float16), v)
        m = m_new
    tl.store(o_ptr + o_q[:, None] * BK + o_d[None, :], acc)


@triton.jit
def gated_attn_local(q_ptr, k_ptr, v_ptr, g_ptr, o_ptr, T, BT: tl.constexpr, BS: tl.constexpr, BK: tl.constexpr):
    o_q = tl.arange(0, BT)
    o_d = tl.arange(0, BK)
    q = tl.load(q_ptr + o_q[:, None] * BK + o_d[None, :])
    gq = tl.load(g_ptr + o_q[:, None] * BK + o_d[None, :]).to(tl.float32)
    m = tl.full([BT], float('-inf'), tl.float32)
    acc = tl.zeros([BT, BK], tl.float32)
    for i in range(0, T, BS):
        o_k = i + tl.arange(0, BS)
        r = tl.load(g_ptr + i * BK + o_d[None, :]).to(tl.float32)
        k = tl.load(k_ptr + o_d[:, None] + o_k[None, :] * BK)
        gk = tl.load(g_ptr + o_d[:, None] + o_k[None, :] * BK).to(tl.float32)
        k_til = k.to(tl.float32) * tl.exp2(tl.trans(r) - gk)
        q_til = q.to(tl.float32) * tl.exp2(gq - r)
        s = tl.dot(q_til, k_til)
        m_new = tl.maximum(m, tl.max(s, 1))
        p = tl.exp2(s - m_new[:, None])
        acc = acc * tl.exp2(m - m_new)[:, None]
        v = tl.load(v_ptr + o_k[:, None] * BK + o_d[None, :])
        acc += tl.dot(p.to(tl.float16), v)
        m = m_new
    tl.store(o_ptr + o_q[:, None] * BK + o_d[None, :], acc)
'''

CONFIGS = ((64, 32, 64, 4, 2), (64, 64, 32, 4, 4), (128, 64, 128, 8, 3))

TRUTH = {  # Triton 3.9, (sm_80, sm_90, sm_100) per config of CONFIGS
    "invariant_a_computed_b": [(16384, 20480, 20496), (28672, 32768, 32784), (98304, 114688, 114704)],
    "tf32_invariant_a_computed_b": [(24576, 32768, 32784), (32768, 40960, 40976), (131072, 163840, 163856)],
    "invariant_a_in_loop_body": [(12288, 8192, 10256), (16384, 16384, 20496), (65536, 49152, 57360)],
    "computed_a_invariant_b": [(20480, 20480, 20496), (28672, 28672, 28688), (147456, 147456, 147472)],
    "loaded_a_computed_b": [(16384, 28672, 28688), (36864, 45056, 45072), (131072, 180224, 180240)],
    "a_scaled_by_argument": [(20480, 24576, 16400), (28672, 32768, 28688), (131072, 147456, 114704)],
    "a_plus_invariant_tile": [(20480, 24576, 18448), (28672, 32768, 32784), (131072, 147456, 122896)],
    "b_shifted_by_arange": [(20480, 28672, 28688), (40960, 45056, 45072), (147456, 180224, 180240)],
    "b_scaled_by_loaded_scalar": [(16388, 24580, 24596), (28684, 32780, 32796), (114696, 147464, 147480)],
}

CONVERSION = {(64, 64): 2048, (64, 32): 4096, (128, 128): 8192}   # tcgen05 A into tensor memory (docstring)


def _expected(kernel: str, config: tuple[int, int, int, int, int], cap: int) -> int:
    bm, bn, bk, _, stages = config
    p, s = stages - 1, stages
    al, bl, wl = bm * bk * 2, bk * bn * 2, bk * bn * 4
    a, b = (al, bl) if not kernel.startswith("tf32") else (2 * al, 2 * bl)
    bar = 16 if cap == 100 else 0
    if kernel in ("invariant_a_computed_b", "tf32_invariant_a_computed_b"):
        # A staged once everywhere (sm_90: its B is computed in the loop); B staged on sm_90 / sm_100
        return a + 2 * p * bl + (b + bar if cap != 80 else 0)
    if kernel == "invariant_a_in_loop_body":
        # sm_80 A staged; sm_90 A in registers; sm_100 A in tensor memory after a conversion
        return {80: a + p * bl, 90: s * bl, 100: s * bl + bar + CONVERSION[(bm, bk)]}[cap]
    if kernel == "computed_a_invariant_b":
        return b + 2 * p * al + bar           # B staged once; A read from its loads / registers / TMEM
    if kernel == "loaded_a_computed_b":
        # sm_80 reads B from its pipelined loads; sm_90 / sm_100 stage it
        return (p * al + 2 * p * bl) if cap == 80 else (s * al + 2 * p * bl + b + bar)
    if kernel == "a_scaled_by_argument":
        # `x * scale`: the conversion cannot reach the loads: sm_80 stages A, sm_90 converts it
        return p * al + (p * bl + a if cap == 80 else s * bl + (a if cap == 90 else bar))
    if kernel == "a_plus_invariant_tile":
        return p * al + (p * bl + a if cap == 80 else s * bl + (a if cap == 90 else bar + CONVERSION[(bm, bk)]))
    if kernel == "b_shifted_by_arange":
        return (p if cap == 80 else s) * al + p * wl + b + bar
    assert kernel == "b_scaled_by_loaded_scalar"   # B staged, the fp32 scalar pipelined (p × 4 B)
    return (p if cap == 80 else s) * al + p * bl + b + 4 * p + bar


def test_the_hand_arithmetic_matches_triton() -> None:
    for kernel, rows in TRUTH.items():
        for config, measured in zip(CONFIGS, rows):
            for cap, shared in zip((80, 90, 100), measured):
                assert _expected(kernel, config, cap) == shared, (kernel, config, cap)


def _estimates(tmp_path: Path, source: str, configs: list[dict[str, int]], args: dict[str, str]
               ) -> dict[tuple[str, int, int, int], int]:
    path = tmp_path / "computed_operands.py"
    path.write_text(source)
    result = lint_paths([str(path)], Settings(targets=("a100", "h100", "b200"), cli_configs=tuple(configs),
                                               arg_types=args))
    return {(k.jit.name, e.config.constexprs.get("BM", e.config.constexprs.get("BT")), e.config.num_stages,
             e.target.capability): e.smem.total
            for k in result.files[0].kernels for e in k.estimates if e.config.origin == "cli"}


def test_computed_operands_cost_what_triton_allocates(tmp_path: Path) -> None:
    configs = [{"BM": bm, "BN": bn, "BK": bk, "num_warps": w, "num_stages": s} for bm, bn, bk, w, s in CONFIGS]
    args = {"a_ptr": "*fp16", "ga_ptr": "*fp16", "b_ptr": "*fp16", "gb_ptr": "*fp16", "s_ptr": "*fp32",
            "w_ptr": "*i32", "o_ptr": "*fp32", "NT": "i32", "scale": "fp32"}
    got = _estimates(tmp_path, KERNELS, configs, args)
    want = {(kernel, config[0], config[4], cap): shared for kernel, rows in TRUTH.items()
            for config, measured in zip(CONFIGS, rows) for cap, shared in zip((80, 90, 100), measured)}
    assert got == want


GATED_TRUTH = {  # Triton 3.9: (kernel, BT, num_stages, cap) -> metadata.shared
    ("gated_attn", 128, 3, 80): 131072, ("gated_attn", 128, 3, 90): 163840, ("gated_attn", 128, 3, 100): 163872,
    ("gated_attn", 64, 2, 80): 20480, ("gated_attn", 64, 2, 90): 28672, ("gated_attn", 64, 2, 100): 28704,
    ("gated_attn", 64, 3, 80): 57344, ("gated_attn", 64, 3, 90): 73728, ("gated_attn", 64, 3, 100): 73760,
    ("gated_attn_local", 128, 3, 80): 164352, ("gated_attn_local", 128, 3, 90): 213504,
    ("gated_attn_local", 64, 2, 80): 28800, ("gated_attn_local", 64, 2, 90): 41088,
    ("gated_attn_local", 64, 3, 80): 65792, ("gated_attn_local", 64, 3, 90): 90368,
}


def test_attention_with_computed_operands(tmp_path: Path) -> None:
    """Two-dot loops (dot_buffers.py) shaped like fla's wall attention. gated_attn, 128×64×128 · 8 warps · 3
    stages: sm_80 q̃ staged 32,768 + k, g_k, v 2 × 16,384 each = 131,072; sm_90 + k̃ staged 16,384 and v in 3
    buffers = 163,840; sm_100 + 2 × 16 B of MMA barriers. gated_attn_local (fp32 q̃ from tiles loaded before
    the loop, fp32 k̃): sm_80 q̃ staged 65,536 + k, g_k, v 2 × 16,384 + the row 2 × 256 = 164,352 (the row max's
    2,048-B scratch takes q̃'s place after the dot); sm_90 q̃ 65,536 + k̃ 32,768 + 2 × 16,384 × 2 + 3 × 16,384
    + 512 = 213,504. (sm_100 left out: kernlint counts 16 B more barrier than the 156,176 B measured, the first
    MMA's 8-B barrier sharing the slot of q̃'s tensor-memory conversion.)"""
    configs = [{"BT": bt, "BS": bs, "BK": bk, "num_warps": w, "num_stages": s}
               for bt, bs, bk, w, s in ((128, 64, 128, 8, 3), (64, 32, 64, 4, 2), (64, 64, 64, 4, 3))]
    args = {"q_ptr": "*fp16", "k_ptr": "*fp16", "v_ptr": "*fp16", "g_ptr": "*fp16", "o_ptr": "*fp32", "T": "i32"}
    got = _estimates(tmp_path, GATED, configs, args)
    assert {key: got[key] for key in GATED_TRUTH} == GATED_TRUTH
