"""The estimator against ptxas/Triton truth.

1. The reference compiles of docs/design.md ("Ground truth"; Triton 3.9, ptxas 13.4, measured with the
   team's probe) on the same kernels (tests/truth/reference_kernels.py): shared memory must be exact.
2. The recorded sweep in benchmarks/truth/triton-3.9.json (benchmarks/record_truth.py): regression gates
   at the accuracy measured when the model was last calibrated (see README "Accuracy").
"""
from __future__ import annotations

import json
import statistics

import pytest

from conftest import ROOT

from benchmarks import accuracy

from kernlint.pipeline.api import Settings, lint_paths  # noqa: E402

MM = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "stride_ak": "1", "stride_bn": "1", "stride_cn": "1"}
# (target, BM, BN, BK, warps, stages, ptxas registers, Triton metadata.shared) — triton_truth.md, matmul rows.
MATMUL_TRUTH = [
    ("h100", 64, 64, 32, 4, 3, 60, 24576), ("h100", 128, 128, 64, 4, 4, 216, 131072),
    ("h100", 128, 128, 64, 8, 4, 122, 131072), ("h100", 128, 256, 64, 8, 3, 208, 147456),
    ("h100", 256, 128, 64, 8, 3, 210, 147456), ("h100", 128, 256, 64, 4, 3, 255, 147456),
    ("h100", 256, 256, 64, 4, 3, 255, 196608), ("h100", 256, 256, 64, 8, 4, 255, 262144),
    ("h100", 128, 128, 128, 4, 5, 234, 327680),
    ("b200", 64, 64, 32, 4, 3, 48, 24592), ("b200", 128, 128, 64, 4, 4, 150, 131088),
    ("b200", 128, 256, 64, 8, 3, 166, 147472), ("b200", 256, 256, 64, 8, 4, 222, 262160),
    ("a100", 128, 128, 64, 4, 4, 249, 98304),
]


def _matmul_estimates():  # type: ignore[no-untyped-def]
    configs = tuple({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8, "num_warps": w, "num_stages": s}
                    for _, bm, bn, bk, w, s, _, _ in MATMUL_TRUTH)
    result = lint_paths([str(ROOT / "tests/truth/reference_kernels.py")],
                        Settings(targets=("h100", "b200", "a100"), cli_configs=configs, arg_types=MM))
    k = next(k for f in result.files for k in f.kernels if k.jit.name == "matmul_kernel")
    return {(e.target.key, e.config.constexprs["BLOCK_M"], e.config.constexprs["BLOCK_N"],
             e.config.constexprs["BLOCK_K"], e.config.num_warps, e.config.num_stages): e
            for e in k.estimates if e.config.origin == "cli"}


def test_matmul_shared_memory_is_exact_against_reference_truth() -> None:
    estimates = _matmul_estimates()
    for target, bm, bn, bk, w, s, _regs, shared in MATMUL_TRUTH:
        assert estimates[(target, bm, bn, bk, w, s)].smem.total == shared, (target, bm, bn, bk, w, s)


def test_matmul_spills_and_out_of_resources_are_predicted() -> None:
    estimates = _matmul_estimates()
    for target, bm, bn, bk, w, s, regs, shared in MATMUL_TRUTH:
        e = estimates[(target, bm, bn, bk, w, s)]
        assert e.smem_over == (shared > 232448)
        if shared <= 232448 and target == "h100":
            assert (e.registers.demand > e.registers.budget) == (regs >= 255), (bm, bn, bk, w, s)


def test_matmul_registers_within_20_percent_on_sm90_when_not_spilling() -> None:
    estimates = _matmul_estimates()
    for target, bm, bn, bk, w, s, regs, shared in MATMUL_TRUTH:
        if target == "h100" and regs < 255:
            est = estimates[(target, bm, bn, bk, w, s)].registers.allocated
            assert abs(est - regs) / regs <= 0.20, (bm, bn, bk, w, s, est, regs)


@pytest.fixture(scope="module")
def sweep():  # type: ignore[no-untyped-def]
    doc = json.loads((ROOT / "benchmarks/truth/triton-3.9.json").read_text())
    records = [r for r in doc["records"] if r["file"] == "tests/truth/reference_kernels.py"]
    return accuracy.metrics(accuracy.estimate_records(records))


def test_recorded_sweep_gates(sweep) -> None:  # type: ignore[no-untyped-def]
    for target, row in sweep.items():
        assert row["oor_recall"] == 1.0, target            # OutOfResources is never missed
        assert row["smem_exact"] >= 0.93, (target, row)
        assert row["regs_median_abs_err"] <= 0.15, (target, row)  # measured 0.05-0.12 (README "Accuracy")


class _Sets(dict):  # type: ignore[type-arg]
    """The metrics tables by file (a dict, as the gates read them), and the pooled (record, estimate) pairs."""

    def __init__(self, tables: dict, pairs: list) -> None:  # type: ignore[type-arg]
        super().__init__(tables)
        self.pairs = pairs


@pytest.fixture(scope="module")
def development_sets():  # type: ignore[no-untyped-def]
    """Both recorded development sets in full: the 17 example/reference kernels and the 22-kernel suite."""
    out, pooled = {}, []
    for name in ("triton-3.9.json", "suite-triton-3.9.json"):
        doc = json.loads((ROOT / "benchmarks/truth" / name).read_text())
        pairs = accuracy.estimate_records(doc["records"])
        out[name] = accuracy.metrics(pairs)
        pooled += pairs
    out["both"] = accuracy.metrics(pooled)   # the development suite: examples + tests kernels
    return _Sets(out, pooled)


def test_development_set_gates(development_sets) -> None:  # type: ignore[no-untyped-def]
    # Regression gates a little under what was measured on 2026-11-29 (README "Accuracy"):
    # smem exact 97.7-100 %, OutOfResources recall and precision 100 %, register median 6.1-9.9 % and
    # 70-86 % within 20 %, spill F1 0.78-0.91.
    for name, table in development_sets.items():
        for target, row in table.items():
            where = (name, target, row)
            assert row["oor_recall"] == 1.0, where
            assert row["oor_precision"] >= 0.98, where
            assert row["smem_exact"] >= 0.97, where
            assert row["smem_within_2pct"] >= 0.98, where
            assert row["regs_median_abs_err"] <= 0.105, where
            assert row["regs_within_20pct"] >= 0.67, where
            assert row["spill_f1"] >= 0.75, where


def test_examples_meet_the_register_target_on_sm90_and_sm100(development_sets) -> None:  # type: ignore[no-untyped-def]
    # The target (>= 85 % of pairs within 20 %), met on the examples + reference kernels since the
    # row-by-row narrow-hold and in-loop reduction-tree rules (register_widen.py, register_streams.py):
    # measured 88.3 % (h100), 89.9 % (b200). Not yet met on the suite (79-82 %): regression gate above only.
    table = development_sets["triton-3.9.json"]
    for target in ("h100", "b200"):
        assert table[target]["regs_within_20pct"] >= 0.85, (target, table[target])


def test_spill_prediction_meets_the_target_on_sm90(development_sets) -> None:  # type: ignore[no-untyped-def]
    # The spill F1 >= 0.9, met on sm_90 of both development files since element-by-element addresses
    # are rematerialised rather than spilled (registers.py): measured 0.912 (examples) and 0.909 (suite).
    # sm_100 is not there (0.85 on both): near the budget ptxas 13.4's sm_100 decisions follow LLVM's packed
    # f32x2 arithmetic (layernorm at 128 fp32 per thread: 220 registers from the sm_100 PTX, 255 + 76 B of
    # spills from the sm_90 PTX retargeted; docs/accuracy.md), and ptxas spills a few bytes well under the
    # budget in attention backward. Gated at what was measured on 2026-11-30, after the
    # deferred row sum of sm_100 attention (register_tmem.deferred_row_sums; suite 0.83 -> 0.85).
    for name, table in development_sets.items():
        assert table["h100"]["spill_f1"] >= 0.9, (name, table["h100"])
        assert table["b200"]["spill_f1"] >= 0.845, (name, table["b200"])


def test_development_suite_meets_the_register_target_on_sm90_and_sm100(development_sets) -> None:  # type: ignore[no-untyped-def]
    # The register targets on its development suite (both files pooled, 423 / 426 pairs): measured on
    # 2026-11-30: median 6.1 % (h100) / 7.4 % (b200), within 20 % 85.6 % / 86.2 %.
    table = development_sets["both"]
    for target in ("h100", "b200"):
        assert table[target]["regs_within_20pct"] >= 0.85, (target, table[target])
        assert table[target]["regs_median_abs_err"] <= 0.10, (target, table[target])


def test_suite_register_accuracy_on_sm90_and_sm100(development_sets) -> None:  # type: ignore[no-untyped-def]
    # Regression gate for the suite on the two targets, a little under what was measured on
    # 2026-11-30 (after dead-code elimination): within 20 % 83.1 % (h100) / 82.2 % (b200),
    # median 6.5 % / 5.9 %. The 85 % is not met on the suite alone.
    table = development_sets["suite-triton-3.9.json"]
    for target in ("h100", "b200"):
        assert table[target]["regs_within_20pct"] >= 0.81, (target, table[target])
        assert table[target]["regs_median_abs_err"] <= 0.07, (target, table[target])


def test_sm100_shared_memory_is_exact_on_the_development_sets(development_sets) -> None:  # type: ignore[no-untyped-def]
    # Since the sm_100 attention rules (smem.py: the 1,024-B gap below Q read by two loops, the
    # 512-B row-factor conversion at 8 warps) and the atomic epilogue conversion: B200 exact 100 % (examples)
    # and 99.5 % (suite, the one miss an fp8 32×32 tile at 1 stage); H100 100 % / 99.5 %.
    for name, table in development_sets.items():
        for target in ("h100", "b200"):
            assert table[target]["smem_exact"] >= 0.99, (name, target, table[target])


@pytest.fixture(scope="module")
def neighbourhood():  # type: ignore[no-untyped-def]
    """benchmarks/truth/neighbours-triton-3.9.json (set A) and neighbours-b-triton-3.9.json (set B): each
    kernel's first (A) or second (B) usable config, then its one-knob, one-step neighbours
    (benchmarks/truth_specs_neighbours.py), sm_90 and sm_100. Per set: the metrics table, and the anchored
    errors (static, anchored) for pooling."""
    out = {}
    for name in ("neighbours-triton-3.9.json", "neighbours-b-triton-3.9.json"):
        doc = json.loads((ROOT / "benchmarks/truth" / name).read_text())
        pairs = accuracy.estimate_records(doc["records"])
        out[name] = (accuracy.metrics(pairs), accuracy.anchored_errors(pairs))
    return out


def test_anchoring_on_a_neighbouring_config(neighbourhood) -> None:  # type: ignore[no-untyped-def]
    # The anchored target ("one compile of a neighbouring config: median register error <= 5 %"),
    # measured as it states it (2026-11-30, h100 / b200): set A 6.2 / 3.2 %, set B 3.1 / 3.1 %, both sets
    # pooled 4.5 / 3.1 % (static on the same records 7.8 / 9.4 %). The anchor never makes a set worse.
    pooled: dict[str, list[float]] = {"h100": [], "b200": []}
    for name, (table, anchored) in neighbourhood.items():
        for target in ("h100", "b200"):
            row = table[target]
            assert row["regs_anchored"] <= row["regs_static_no_anchor"], (name, target, row)
            assert row["regs_anchored"] <= 0.065, (name, target, row)
            # most of these configs are in no other truth file: held out for the static model
            assert row["regs_median_abs_err"] <= 0.105 and row["smem_exact"] >= 0.98, (name, target, row)
            assert row["oor_recall"] == 1.0, (name, target, row)
            pooled[target] += anchored[target][1]
    for target, errors in pooled.items():
        assert statistics.median(errors) <= 0.05, (target, statistics.median(errors))


def test_borderline_spill_rate_quoted_by_the_rule_matches_truth(development_sets) -> None:  # type: ignore[no-untyped-def]
    # KL201 calls a demand within 20 % over the budget "borderline" and quotes how often ptxas spilled there;
    # recomputed here from the recorded truth of the development suite (all three targets pooled), the quote
    # must stay within 10 points of it, and further over the budget ptxas must nearly always spill.
    from kernlint.analysis.spill_band import BORDERLINE_SPILL_RATE
    rows = development_sets["both"].values()
    near = sum(r["spill_near_n"] for r in rows)
    near_spilled = sum(round(r["spill_near_rate"] * r["spill_near_n"]) for r in rows)
    far = sum(r["spill_far_n"] for r in rows)
    far_spilled = sum(round(r["spill_far_rate"] * r["spill_far_n"]) for r in rows)
    spilled, measured = BORDERLINE_SPILL_RATE
    assert near >= 60 and abs(near_spilled / near - spilled / measured) <= 0.1, (near_spilled, near)
    assert 0.35 <= near_spilled / near <= 0.85               # a coin flip, not a verdict
    assert far_spilled / far >= 0.9, (far_spilled, far)


def test_spill_size_spread_quoted_by_the_rule_matches_truth(development_sets) -> None:  # type: ignore[no-untyped-def]
    # KL201 quotes the middle half of ptxas's spill stores over kernlint's spill estimate; recomputed from the
    # recorded truth (configs that fit in shared memory, where both spill), the quartiles must stay within
    # 25 % of the quote.
    from kernlint.analysis.spill_band import SPILL_BYTES_SPREAD
    ratios = sorted((r["spill_store"] or 0) / e.registers.spill_bytes for r, e in development_sets.pairs
                    if e.registers is not None and e.registers.spill_bytes and (r["spill_store"] or 0)
                    and r["shared"] <= e.target.smem_per_cta_optin)
    assert len(ratios) >= 150
    q1, q3 = ratios[len(ratios) // 4], ratios[3 * len(ratios) // 4]
    lo, hi = SPILL_BYTES_SPREAD
    assert abs(q1 - lo) <= 0.25 * lo and abs(q3 - hi) <= 0.25 * hi, (q1, q3)
