"""Helion truth: ptxas on the Triton code Helion generates (benchmarks/helion_truth.py), against the estimates."""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from collections import Counter

import pytest
from conftest import ROOT

from kernlint.ir.nodes import OpKind

TRUTH = ROOT / "benchmarks" / "truth" / "helion-triton-3.9.json"
# an interpreter with helion and torch: this one unless KERNLINT_HELION_PYTHON names another
HELION_PYTHON = os.environ.get("KERNLINT_HELION_PYTHON", sys.executable)


def _bench():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("helion_truth", ROOT / "benchmarks" / "helion_truth.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def doc() -> dict:
    return json.loads(TRUTH.read_text())


@pytest.fixture(scope="module")
def pairs(doc):  # type: ignore[no-untyped-def]
    return _bench().estimate_records(doc["records"])


def test_every_example_kernel_has_at_least_five_compiled_configs_per_target(doc) -> None:  # type: ignore[no-untyped-def]
    assert doc["triton_version"] == "3.9.0" and doc["helion_version"] and doc["caps"] == [80, 90, 100]
    assert not [r for r in doc["records"] if r.get("error")]
    per = Counter((r["kernel"], r["cap"]) for r in doc["records"])
    kernels = {k for k, _ in per}
    for path in ROOT.glob("examples/helion_*.py"):
        assert any(r["file"] == f"examples/{path.name}" for r in doc["records"]), path.name
    assert len(kernels) >= 8 and min(per.values()) >= 5
    # one generated module per helion.Config, compiled for every capability
    by_cfg: dict[str, set[str]] = {}
    for r in doc["records"]:
        by_cfg.setdefault(json.dumps([r["kernel"], r["helion_config"]]), set()).add(r["code_sha256"])
    assert all(len(v) == 1 for v in by_cfg.values())


def test_every_record_pairs_with_an_estimate_of_the_same_helion_config(doc, pairs) -> None:  # type: ignore[no-untyped-def]
    assert len(pairs) == len(doc["records"])
    for r, e in pairs:
        blocks = [e.config.constexprs[f"block_size_{i}"] for i in range(len(r["helion_config"]["block_sizes"]))]
        assert blocks == r["helion_config"]["block_sizes"]
        assert (e.config.num_warps, e.config.num_stages) == (r["launch"]["num_warps"], r["launch"]["num_stages"])


def test_accuracy_gates_against_ptxas(pairs) -> None:  # type: ignore[no-untyped-def]
    table = _bench().metrics(pairs)
    assert set(table) == {"a100", "h100", "b200"}
    for target, m in table.items():
        assert m["oor_agree"] == 1.0, target             # no OutOfResources config missed or invented
        assert m["smem_exact"] >= 0.65, (target, m)
        assert m["regs_median_abs_err"] <= 0.25, (target, m)
        assert m["spill_agree"] >= 0.95, (target, m)
    # dot kernels' shared memory (operand stages) is exact on every matmul config Helion generated
    mm = [(r, e) for r, e in pairs if r["kernel"] in ("helion_matmul", "helion_matmul_tuned", "helion_matmul_bias_gelu")]
    assert mm and all(e.smem.total == r["shared"] for r, e in mm)


def test_attention_bmm_transposes_two_dims() -> None:
    """k[b, n, d].transpose(1, 2) is [b, d, n]: the qk dot is block_m x block_n over head_dim (helion_ops fix)."""
    from kernlint.recommend.helion import load_kernel
    t = load_kernel(str(ROOT / "examples" / "helion_attention.py"), "helion_attention")
    dots = [op for op, _ in t.ir.walk() if op.kind == OpKind.DOT]
    assert [str(x) for x in (dots[0].dot_attrs().M, dots[0].dot_attrs().N, dots[0].dot_attrs().K)] == ["block_size_1", "block_size_2", "rdim_0"]


def _helion_available() -> bool:
    return os.path.exists(HELION_PYTHON) and subprocess.run(
        [HELION_PYTHON, "-c", "import helion, triton, torch"], check=False, capture_output=True).returncode == 0


@pytest.mark.slow
@pytest.mark.skipif(not _helion_available(), reason=f"helion + triton not importable by {HELION_PYTHON}")
def test_recording_reproduces_the_stored_truth(tmp_path, doc) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "t.json"
    p = subprocess.run([HELION_PYTHON, str(ROOT / "benchmarks" / "helion_truth.py"), "record", "--only",
                        "helion_attention", "--caps", "90", "--out", str(out)], check=False, capture_output=True, text=True,
                       timeout=900, cwd=str(ROOT))
    assert p.returncode == 0, p.stderr[-2000:]
    new = {json.dumps(r["helion_config"]): r for r in json.loads(out.read_text())["records"]}
    old = [r for r in doc["records"] if r["kernel"] == "helion_attention" and r["cap"] == 90]
    assert len(new) == len(old)
    for r in old:
        n = new[json.dumps(r["helion_config"])]
        assert (n["regs"], n["shared"], n["spill_store"], n["code_sha256"]) == (
            r["regs"], r["shared"], r["spill_store"], r["code_sha256"])
