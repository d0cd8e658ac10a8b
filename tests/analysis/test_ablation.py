"""The model's pass lists (kernlint/analysis/passes.py, REGISTER_PASSES, SMEM_PASSES) are well formed, and an
estimate with passes disabled (benchmarks/ablation.py) is the default estimate when nothing is disabled."""
from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

import pytest

from conftest import ROOT

from kernlint.analysis.estimate import estimate
from kernlint.analysis.passes import TARGET_FAMILIES, Pass, validate_disabled
from kernlint.analysis.registers import REGISTER_PASSES
from kernlint.analysis.smem import SMEM_PASSES
from kernlint.pipeline.api import Settings, lint_paths
from kernlint.hardware.specs import SPECS, GpuSpec

PASSES: tuple[Pass[Any], ...] = (*REGISTER_PASSES, *SMEM_PASSES)


def test_pass_names_are_unique_across_both_models() -> None:
    # estimate() hands one disabled set to both models, so a name must say which pass it is
    names = [p.name for p in PASSES]
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)


def test_every_pass_is_declared_in_full() -> None:
    for p in PASSES:
        assert p.mechanism.strip() and "\n" not in p.mechanism, p.name
        assert (ROOT / "kernlint" / "analysis" / f"{p.module}.py").is_file(), (p.name, p.module)
        for c in p.constants:
            assert c.name and c.unit.strip(), (p.name, c)
            assert len(c.provenance.strip()) >= 10, (p.name, c.name, "a constant needs the measurement behind it")


def test_every_pass_targets_real_target_families() -> None:
    families = {s.tensor_core for s in SPECS.values()}
    behaviours = {f.name for f in dataclasses.fields(GpuSpec) if f.type in ("bool", bool)}
    assert families == TARGET_FAMILIES
    for p in PASSES:
        assert p.targets.families and p.targets.families <= families, (p.name, p.targets)
        assert set(p.targets.needs) <= behaviours, (p.name, p.targets, "needs names boolean GpuSpec fields")
        assert any(p.targets.applies(s) for s in SPECS.values()), f"{p.name} applies to no target"


def test_each_model_ends_with_its_estimate() -> None:
    assert REGISTER_PASSES[-1].name == "spill collapse" and SMEM_PASSES[-1].essential
    for p in PASSES:   # the skeleton runs on every target
        assert not p.essential or p.targets.families == TARGET_FAMILIES, p.name


def test_disabled_names_are_checked() -> None:
    with pytest.raises(ValueError, match="no such pass"):
        validate_disabled(frozenset({"sunk load"}), REGISTER_PASSES, SMEM_PASSES)
    with pytest.raises(ValueError, match="essential"):
        validate_disabled(frozenset({"live-set peak"}), REGISTER_PASSES, SMEM_PASSES)
    validate_disabled(frozenset({"sunk loads", "tcgen05 barriers"}), REGISTER_PASSES, SMEM_PASSES)


@pytest.fixture(scope="module")
def matmul():  # type: ignore[no-untyped-def]
    config = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 8, "num_stages": 4}
    result = lint_paths([str(ROOT / "examples" / "matmul.py")],
                        Settings(targets=("a100", "h100", "b200"), cli_configs=(config,)))
    kernel = next(k for f in result.files for k in f.kernels if k.jit.name == "matmul_kernel")
    return kernel.ir, [e for e in kernel.estimates if e.config.origin == "cli"]


def test_nothing_disabled_is_the_default_estimate(matmul) -> None:  # type: ignore[no-untyped-def]
    ir, estimates = matmul
    assert len(estimates) == 3
    for e in estimates:
        assert estimate(ir, e.config, e.target, frozenset()) == e


def test_disabling_a_pass_changes_only_what_it_models(matmul) -> None:  # type: ignore[no-untyped-def]
    ir, estimates = matmul
    by_target = {e.target.key: e for e in estimates}
    # 128×128×64 fp16, 4 stages: wgmma / tcgen05 keep num_stages operand buffers, cp.async num_stages − 1
    operands = (128 * 64 + 64 * 128) * 2
    assert by_target["h100"].smem.total == 4 * operands
    assert by_target["a100"].smem.total == 3 * operands
    for key, e in by_target.items():
        without = estimate(ir, e.config, e.target, frozenset({"pipelined dot operands"}))
        assert without.registers == e.registers, key
        assert without.smem.total < e.smem.total and all(b.label != "dot operands" for b in without.smem.buffers), key
    # a pass whose targets exclude a spec leaves its estimate alone
    h100 = by_target["h100"]
    assert estimate(ir, h100.config, h100.target, frozenset({"tcgen05 barriers"})) == h100
    b200 = by_target["b200"]
    assert estimate(ir, b200.config, b200.target, frozenset({"tcgen05 barriers"})).smem.total < b200.smem.total
    # wgmma operands read from shared memory hold no registers; counted in registers the demand rises
    regs = estimate(ir, h100.config, h100.target, frozenset({"async operands in shared memory"})).registers
    assert regs is not None and h100.registers is not None and regs.demand > h100.registers.demand


def test_the_recorded_ablation_covers_every_mechanism() -> None:
    """benchmarks/truth/ablation.json and docs/ablation.md are generated by benchmarks/ablation.py; a pass added
    or renamed without running it again fails here."""
    recorded = json.loads((ROOT / "benchmarks" / "truth" / "ablation.json").read_text())
    mechanisms = {p.name for p in PASSES if not p.essential}
    doc = (ROOT / "docs" / "ablation.md").read_text()
    assert recorded["sources"]
    for source in recorded["sources"].values():
        assert set(source["passes"]) == mechanisms
    rows = set(re.findall(r"^\| ([^|]+?) \| ", doc, re.M)) - {"target", "pass"}
    assert mechanisms <= rows
