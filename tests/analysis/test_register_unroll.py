"""Register copies of loads in unrolled `tl.static_range` bodies (kernlint/analysis/register_unroll.py).

Expected register counts are ptxas truth: the suite's causal_conv1d_fwd_kernel from
benchmarks/truth/suite-triton-3.9.json, and probe compiles (Triton 3.9.0 with the ptxas of its bundle,
2026-11-30) of the two 4-tap convolutions below, which are not in any recorded truth file. The four-copy
count the rule replaces is worked out by hand in each test.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import ROOT

from kernlint.pipeline.api import Settings, lint_paths

PROBES = '''
import triton
import triton.language as tl


@triton.jit
def conv_sum(x_ptr, out_ptr, seqlen, stride_t, stride_o, W: tl.constexpr, BT: tl.constexpr, BD: tl.constexpr):
    o_t = tl.program_id(0) * BT + tl.arange(0, BT)
    o_d = tl.arange(0, BD)
    acc = tl.zeros((BT, BD), dtype=tl.float32)
    for i in tl.static_range(W):
        o_x = o_t - (W - 1) + i
        x = tl.load(x_ptr + o_x[:, None] * stride_t + o_d[None, :],
                    mask=((o_x >= 0) & (o_x < seqlen))[:, None], other=0.0).to(tl.float32)
        acc += x
    tl.store(out_ptr + o_t[:, None] * stride_o + o_d[None, :], acc.to(tl.float16))


@triton.jit
def conv_gated(x_ptr, g_ptr, out_ptr, seqlen, stride_t, stride_o, W: tl.constexpr, BT: tl.constexpr,
               BD: tl.constexpr):
    o_t = tl.program_id(0) * BT + tl.arange(0, BT)
    o_d = tl.arange(0, BD)
    acc = tl.zeros((BT, BD), dtype=tl.float32)
    for i in tl.static_range(W):
        o_x = o_t - (W - 1) + i
        m = ((o_x >= 0) & (o_x < seqlen))[:, None]
        x = tl.load(x_ptr + o_x[:, None] * stride_t + o_d[None, :], mask=m, other=0.0).to(tl.float32)
        g = tl.load(g_ptr + o_x[:, None] * stride_t + o_d[None, :], mask=m, other=0.0).to(tl.float32)
        acc += x * g
    tl.store(out_ptr + o_t[:, None] * stride_o + o_d[None, :], acc.to(tl.float16))
'''
ARGS = {"x_ptr": "*fp16", "g_ptr": "*fp16", "out_ptr": "*fp16", "seqlen": "i32", "stride_t": "i32",
        "stride_o": "i32"}

# (kernel, target, BT, BD, num_warps, ptxas registers); W = 4 taps, fp16 tiles, fp32 accumulator
FULL_TILE_PROBES = [
    ("conv_sum", "h100", 64, 64, 4, 52),
    ("conv_sum", "h100", 128, 128, 8, 83),
    ("conv_sum", "h100", 128, 64, 4, 84),
    ("conv_sum", "b200", 64, 64, 4, 48),
    ("conv_sum", "a100", 128, 128, 8, 104),
    ("conv_gated", "h100", 64, 64, 4, 68),
    ("conv_gated", "h100", 128, 128, 8, 130),
    ("conv_gated", "b200", 64, 64, 4, 71),
    ("conv_gated", "a100", 32, 64, 4, 42),
]


def _estimate(path: Path, kernel: str, target: str, cfg: dict, args: dict[str, str]) -> int:
    res = lint_paths([str(path)], Settings(targets=(target,), cli_configs=(cfg,), arg_types=args))
    return next(e.registers.allocated for f in res.files for k in f.kernels if k.jit.name == kernel
                for e in k.estimates if e.config.origin == "cli")


@pytest.mark.parametrize("kernel,target,bt,bd,warps,ptxas", FULL_TILE_PROBES)
def test_full_size_tiles_are_held_one_iteration_at_a_time(tmp_path: Path, kernel: str, target: str, bt: int,
                                                          bd: int, warps: int, ptxas: int) -> None:
    path = tmp_path / "conv_probes.py"
    path.write_text(PROBES)
    cfg = {"W": 4, "BT": bt, "BD": bd, "num_warps": warps, "num_stages": 1}
    args = {k: v for k, v in ARGS.items() if k != "g_ptr" or kernel == "conv_gated"}
    est = _estimate(path, kernel, target, cfg, args)
    per_thread = bt * bd // (32 * warps)
    acc_words, tile_words = per_thread, per_thread // 2          # fp32 accumulator, packed fp16 tiles
    loads = 2 if kernel == "conv_gated" else 1
    four_copies = acc_words + 4 * loads * tile_words
    assert four_copies >= 1.3 * ptxas                             # what counting every tap asked for
    # one tap's tiles + the accumulator + addressing; the worst probe (conv_sum, sm_100, 64x64) is 63 vs 48
    assert abs(est - ptxas) / ptxas <= 0.35, (kernel, target, cfg, est, ptxas)


SUITE = "tests/truth/suite_kernels/pointwise.py"


def _suite_records(cap: int) -> list[dict]:
    return [r for r in json.load(open(ROOT / "benchmarks/truth/suite-triton-3.9.json"))["records"]
            if r["kernel"] == "causal_conv1d_fwd_kernel" and r["cap"] == cap and not r["spill_store"]
            and r["config"]["KERNEL_WIDTH"] == 4 and r["config"]["num_warps"] >= 4]


@pytest.mark.parametrize("cap,target", [(90, "h100"), (100, "b200"), (80, "a100")])
def test_weight_vector_body_hoists_taps_on_hopper_and_blackwell_only(cap: int, target: str) -> None:
    """acc += x * w_i[None, :]: on sm_90 / sm_100 ptxas keeps every tap's x tile in flight (about four bf16 tiles
    + the accumulator), on sm_80 one x tile + the accumulator + the weight vectors."""
    recs = _suite_records(cap)
    assert len(recs) >= 4
    for r in recs:
        cfg = {**r["config"], **r.get("constexprs", {})}
        est = _estimate(ROOT / SUITE, "causal_conv1d_fwd_kernel", target, cfg, r["args"])
        per_thread = cfg["BLOCK_L"] * cfg["BLOCK_D"] // (32 * cfg["num_warps"])
        one_tap = per_thread + per_thread // 2                    # fp32 accumulator + one packed bf16 x tile
        if cap >= 90:
            assert r["regs"] > one_tap + per_thread // 2          # more than one tap in flight
        else:
            assert r["regs"] < per_thread + 4 * per_thread // 2   # fewer than four taps
        assert abs(est - r["regs"]) / r["regs"] <= 0.2, (cap, cfg, est, r["regs"])
