"""The in-place streaming rule (kernlint/analysis/register_inplace.py) against the recorded ptxas truth of the
suite's rope_bwd_inplace_kernel (dq and dk updated in place) and geglu_tanh_bwd_kernel (a and b updated in place,
but db is computed from `a`), benchmarks/truth/suite-triton-3.9.json (Triton 3.9.0)."""
from __future__ import annotations

import json

from conftest import ROOT

from kernlint.analysis.liveness import compute_liveness
from kernlint.analysis.register_inplace import in_place_streams
from kernlint.pipeline.api import Settings, lint_paths

FILE = "tests/truth/suite_kernels/pointwise.py"
TRUTH = ROOT / "benchmarks/truth/suite-triton-3.9.json"
ROPE_ARGS = {"dq_ptr": "*bf16", "dq_row_stride": "i32", "dk_ptr": "*bf16", "dk_row_stride": "i32",
             "cos_ptr": "*fp32", "cos_row_stride": "i32", "sin_ptr": "*fp32", "sin_row_stride": "i32", "seq_len": "i32"}
ROPE_KEYS = ("n_qh", "n_kh", "hd", "pad_n_qh", "pad_n_kh", "pad_hd")


def _kernels(args: dict[str, str]) -> dict:
    res = lint_paths([str(ROOT / FILE)], Settings(targets=("h100",), arg_types=args))
    return {k.jit.name: k for f in res.files for k in f.kernels}


def test_rope_streams_the_dq_update_only() -> None:
    rope = _kernels(ROPE_ARGS)["rope_bwd_inplace_kernel"]
    env = {"n_qh": 96, "n_kh": 8, "hd": 128, "pad_n_qh": 128, "pad_n_kh": 8, "pad_hd": 128}
    live = compute_liveness(rope.ir, env)
    streamed = in_place_streams(live)
    # q1 and q2: two bf16 loads through dq_ptr and their fp32 casts; the dk loads are issued before the dq
    # stores (dk may alias dq) and cos / sin come through other pointers
    data = [v for v in streamed if live.values[v].dtype in ("bf16", "fp32")]
    assert len(data) == 4
    assert set(streamed.values()) == {2}
    # their addresses: dq_ptr + first_q for the q1 load and store, (dq_ptr + first_q) + hd // 2 for q2's
    pointers = [v for v in streamed if live.values[v].dtype == "ptr<bf16>"]
    assert len(pointers) == 6
    # nothing of the dk update (pad_n_kh rows) streams
    assert all(getattr(live.values[v].shape[0], "name", None) != "pad_n_kh" for v in streamed)
    assert all(live.values[v].shape[0].name == "pad_n_qh" for v in data + pointers)


def test_geglu_in_place_update_that_feeds_another_store_is_held() -> None:
    geglu = _kernels({"dc_ptr": "*bf16", "a_ptr": "*bf16", "b_ptr": "*bf16", "stride": "i32", "n_cols": "i32"})
    live = compute_liveness(geglu["geglu_tanh_bwd_kernel"].ir, {"BLOCK_SIZE": 8192})
    assert in_place_streams(live) == {}


def test_rope_registers_follow_ptxas_as_the_tile_grows() -> None:
    records = [r for r in json.load(open(TRUTH))["records"]
               if r["kernel"] == "rope_bwd_inplace_kernel" and r["cap"] == 90 and not r["spill_store"]]
    configs = tuple({k: r["config"][k] for k in (*ROPE_KEYS, "num_warps", "num_stages")} for r in records)
    res = lint_paths([str(ROOT / FILE)], Settings(targets=("h100",), cli_configs=configs, arg_types=ROPE_ARGS))
    est = {tuple(e.config.constexprs[k] for k in ROPE_KEYS) + (e.config.num_warps,): e.registers.allocated
           for f in res.files for k in f.kernels if k.jit.name == "rope_bwd_inplace_kernel"
           for e in k.estimates if e.config.origin == "cli"}
    for r in records:
        got = est[tuple(r["config"][k] for k in ROPE_KEYS) + (r["config"]["num_warps"],)]
        per_thread = r["config"]["pad_n_qh"] * r["config"]["pad_hd"] // 2 // (32 * r["config"]["num_warps"])
        if per_thread == 32:   # hd 256, 64 heads, 8 warps: ptxas 58
            assert abs(got - r["regs"]) / r["regs"] <= 0.2, (r["config"], got, r["regs"])
        if per_thread == 64:   # 128 heads, 4 warps: ptxas 56; q1 and q2 held whole would be 128 fp32 words alone
            assert got < 128 and got <= 1.5 * r["regs"], (r["config"], got, r["regs"])
