"""Shared memory of attention on sm_100 (kernlint/analysis/smem.py): the alignment padding below a staged operand
that two loops read (_pad_staged_operand) and the scratch that moves the online-softmax row factor into the
accumulator's TMEM-read layout at 8 warps (_row_scaled_tmem_accumulators). Truth: Triton 3.9 `metadata.shared`
on sm_100, recorded in benchmarks/truth/suite-triton-3.9.json (causal attention, two loops) and
triton-3.9.json (examples/attention_fwd.py, one loop)."""
from __future__ import annotations

import json

from conftest import ROOT

from benchmarks import accuracy


def _b200(truth: str, kernel: str) -> list:
    records = [r for r in json.loads((ROOT / "benchmarks/truth" / truth).read_text())["records"]
               if r["kernel"] == kernel and r["cap"] == 100]
    return accuracy.estimate_records(records)


def test_q_read_by_two_loops_sits_above_both_loops_buffers_at_a_1024_byte_boundary() -> None:
    # attn_fwd_causal_kernel, HEAD_DIM 64 fp16: per loop num_stages K and V tiles (BLOCK_N × 64 × 2 B each) and two
    # 16-B MMA barriers; Q (BLOCK_M × 64 × 2 B) is read by both loops. Hand arithmetic of Triton's placement:
    # when a K or V stage set is larger than Q, Q lands at align_up(K + V + 32, 1024).
    checked = 0
    for r, e in _b200("suite-triton-3.9.json", "attn_fwd_causal_kernel"):
        bm, bn, stages, warps = (r["config"][k] for k in ("BLOCK_M", "BLOCK_N", "num_stages", "num_warps"))
        if warps > 8 or bm < 64:
            continue   # 16 warps: mma.sync, no barriers; below 64 rows: no tcgen05
        q, kv = bm * 64 * 2, stages * bn * 64 * 2
        below = 2 * kv + 32
        expected = (-(-below // 1024) * 1024 + q) if kv > q else q + 2 * kv + 32
        assert r["shared"] == expected, (r["config"], r["shared"], expected)   # the hand rule matches Triton
        assert e.smem.total == r["shared"], (r["config"], e.smem.total, r["shared"])
        checked += 1
    assert checked >= 6


def test_q_of_a_single_loop_is_not_padded() -> None:
    # examples/attention_fwd.py has one loop: Triton puts Q right after K and V, below the barriers
    # (64×64, 3 stages, HEAD_DIM 128: 114,720 B = 3 × 16,384 × 2 + 16,384 + 32)
    pairs = [(r, e) for r, e in _b200("triton-3.9.json", "attn_fwd_kernel")
             if r["config"] == {"BLOCK_M": 64, "BLOCK_N": 64, "num_warps": 4, "num_stages": 3}]
    assert len(pairs) == 1
    record, estimate = pairs[0]
    assert record["shared"] == 3 * 16_384 * 2 + 16_384 + 32 == estimate.smem.total
    assert not any(b.label == "alignment padding" for b in estimate.smem.buffers)


def test_row_factor_conversion_scratch_at_two_warpgroups_over_128_rows() -> None:
    # examples/attention_fwd.py, HEAD_DIM 128 fp16, 2 stages: Q (BLOCK_M × 128 × 2 B) + K and V stages
    # (2 × BLOCK_N × 128 × 2 B each) + two 16-B barriers, plus 128 rows × 4 B = 512 B of conversion scratch
    # for `acc * alpha[:, None]` only where 8 warps share 128 rows (the second warpgroup takes half the columns)
    cases = {(128, 64, 8): 512, (128, 64, 4): 0, (256, 64, 8): 0}
    pairs = {(r["config"]["BLOCK_M"], r["config"]["BLOCK_N"], r["config"]["num_warps"]): (r, e)
             for r, e in _b200("triton-3.9.json", "attn_fwd_kernel") if r["config"]["num_stages"] == 2}
    for (bm, bn, warps), scratch in cases.items():
        record, estimate = pairs[(bm, bn, warps)]
        expected = bm * 128 * 2 + 2 * (2 * bn * 128 * 2) + 32 + scratch
        assert record["shared"] == expected, (bm, bn, warps, record["shared"], expected)
        assert estimate.smem.total == expected, (bm, bn, warps, estimate.smem.total, expected)
