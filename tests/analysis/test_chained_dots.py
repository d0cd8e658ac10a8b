"""A chained dot's short tile is copied across warps (kernlint/analysis/register_chained.py).

Expected register counts are ptxas truth recorded in benchmarks/truth/neighbours-triton-3.9.json (Triton 3.9.0
and its bundled ptxas, CPU compiles). In attention (`p = softmax(q @ k)`, then `p @ v`) Triton puts every warp
along M for q @ k; one MMA row block is 16 rows per warp, so BLOCK_M = 64 keeps 4 of 8 warps busy and the other
4 hold copies: the score tile costs each thread 64 × 64 / (4 × 32) = 32 words, not 64 × 64 / (8 × 32) = 16.
"""
from __future__ import annotations

import json

import pytest

from conftest import ROOT

from benchmarks import accuracy

TRUTH = ROOT / "benchmarks/truth/neighbours-triton-3.9.json"


def _pairs(kernel: str, file_suffix: str) -> list[tuple[dict, object]]:
    records = [r for r in json.loads(TRUTH.read_text())["records"]
               if r["kernel"] == kernel and r["file"].endswith(file_suffix) and not r.get("error")]
    return accuracy.estimate_records(records)


def _find(pairs, cap: int, **cfg):  # type: ignore[no-untyped-def]
    return next((r, e) for r, e in pairs if r["cap"] == cap and all(r["config"].get(k) == v for k, v in cfg.items()))


@pytest.mark.parametrize("block_m,warps", [(64, 8), (128, 16)])
def test_short_attention_tile_is_replicated_on_sm90(block_m: int, warps: int) -> None:
    pairs = _pairs("attn_fwd_causal_kernel", "attention.py")
    r, e = _find(pairs, 90, BLOCK_M=block_m, BLOCK_N=64, num_warps=warps, num_stages=3)
    busy = block_m // 16
    assert busy < warps                                   # the case the rule is about
    ptxas = r["regs"]                                     # 114 (64 × 64 · 8 warps), 111 (128 × 64 · 16 warps)
    assert abs(e.registers.allocated - ptxas) / ptxas <= 0.15, (e.registers.allocated, ptxas)
    # ptxas keeps about as much as the config with only the busy warps (64 × 64 · 4 warps: 142; 128 × 64 · 8: 128)
    # minus the rest of the kernel's share; an even split over all warps would be near half of that
    full = _find(pairs, 90, BLOCK_M=128, BLOCK_N=64, num_warps=8, num_stages=3)[0]["regs"]
    assert ptxas > 0.75 * full and e.registers.allocated > 0.7 * full


def test_tall_enough_tiles_and_plain_matmuls_are_not_replicated() -> None:
    # 128 rows give 8 warps 16 rows each: nothing is copied, the estimate stays at ptxas's 128
    r, e = _find(_pairs("attn_fwd_causal_kernel", "attention.py"), 90, BLOCK_M=128, BLOCK_N=64, num_warps=8,
                 num_stages=3)
    assert abs(e.registers.allocated - r["regs"]) / r["regs"] <= 0.1
    # a plain GEMM (no dot after it) keeps Triton's usual warp split: 64 × 64 · 8 warps, ptxas 46
    r, e = _find(_pairs("matmul_kernel", "reference_kernels.py"), 90, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32,
                 num_warps=8)
    assert abs(e.registers.allocated - r["regs"]) / r["regs"] <= 0.15, (e.registers.allocated, r["regs"])


def test_sixteen_warp_dots_on_sm100_are_mma_sync() -> None:
    from kernlint.analysis.placement import mma_family
    # Triton 3.9 lowers 16-warp dots on sm_100 to mma.sync (no tensor memory; placement.py)
    assert mma_family("tcgen05", 16) == "mma_sync"
    assert mma_family("tcgen05", 8) == "tcgen05" and mma_family("wgmma", 16) == "wgmma"
    # so attention forward 128 × 64 · 16 warps is an sm_80-style kernel there: its q @ k tile is copied across
    # the 8 idle warps and ptxas spills at the 128-register budget (388 B) as it does on sm_80 (340 B)
    truth = json.loads((ROOT / "benchmarks/truth/triton-3.9.json").read_text())["records"]
    records = [r for r in truth if r["kernel"] == "attn_fwd_kernel" and r["config"].get("num_warps") == 16
               and r["cap"] in (80, 100)]  # sm_90 keeps wgmma and fits (115 registers)
    for r, e in accuracy.estimate_records(records):
        assert r["spill_store"] > 0
        assert e.registers.demand > e.registers.budget == 128, (r["cap"], e.registers.demand)


PROBES = ROOT / "benchmarks/truth/probes-triton-3.9.json"   # tests/truth/chained_dots.py, Triton 3.9 + ptxas


def _probe(kernel: str, cap: int, **cfg):  # type: ignore[no-untyped-def]
    records = [r for r in json.loads(PROBES.read_text())["records"] if r["kernel"] == kernel and r["cap"] == cap
               and all(r["config"].get(k) == v for k, v in cfg.items())]
    assert len(records) == 1, (kernel, cap, cfg)
    return accuracy.estimate_records(records)[0]


def test_mma_sync_puts_the_warps_along_the_longer_side() -> None:
    # fused MLP h = x @ w1 (then SiLU, then h @ w2) at 32 × 64 · 4 warps is mma.sync on sm_80 and sm_90 (< 64 rows):
    # TTGIR warpsPerCTA = [1, 4], 4 warps × 8 columns ≤ 64, nothing copied; ptxas 72 / 71 registers
    for cap in (80, 90):
        r, e = _probe("fused_mlp_kernel", cap, BLOCK_M=32, BLOCK_H=64, num_warps=4)
        assert abs(e.registers.allocated - r["regs"]) / r["regs"] <= 0.15, (cap, e.registers.allocated, r["regs"])
    # 32 × 32 · 8 warps: [1, 8], 8 × 8 = 64 columns for 32, so half the warps hold copies (ptxas 60 / 57)
    for cap in (80, 90):
        r, e = _probe("fused_mlp_kernel", cap, BLOCK_M=32, BLOCK_H=32, num_warps=8)
        assert abs(e.registers.allocated - r["regs"]) / r["regs"] <= 0.15, (cap, e.registers.allocated, r["regs"])


def test_a_dot_product_read_twice_is_whole() -> None:
    # `h = tl.dot(x, w1); h = h * tl.sigmoid(h)`: the MMA writes all of h at once and SiLU reads it twice, so
    # h is not streamed element by element. At 64 × 64 · 4 warps a thread holds the accumulator acc (64 × 64 fp32
    # / 128 threads = 32 words), h (32 words) and h in fp16 for the next dot (16 words): at least 80
    for cap in (80, 90):
        r, e = _probe("fused_mlp_kernel", cap, BLOCK_M=64, BLOCK_H=64, num_warps=4)
        assert e.registers.allocated >= 80 and r["regs"] >= 80, (cap, e.registers.allocated, r["regs"])
        assert abs(e.registers.allocated - r["regs"]) / r["regs"] <= 0.2, (cap, e.registers.allocated, r["regs"])
