"""Live compiles with Triton's compiler and ptxas (CPU only); skipped when Triton is not installed.

Truth numbers come from the reference compiles of docs/design.md (Triton 3.9, ptxas 12.9/13.4); estimate numbers
are never asserted here, because the model moves.
"""
from __future__ import annotations

import io
import json
import textwrap
from pathlib import Path

import pytest

triton = pytest.importorskip("triton")

from kernlint.calibrate import session  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TRITON_39 = triton.__version__.startswith("3.9")


@pytest.fixture(autouse=True)
def _in_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


def test_vector_add_fp32_block_1024_w4_sm90(tmp_path: Path) -> None:
    cal = session.run("examples/vector_add.py", ("h100",), args={"*": "*fp32"}, jobs=1, cache_dir=tmp_path)
    (row,) = cal.rows
    assert row.error is None and row.truth is not None
    assert row.truth["shared"] == 0 and row.truth["spill_store"] == 0 and row.truth_oor is False
    if TRITON_39:
        assert row.truth["regs"] == 26
    assert row.estimate is not None and row.estimate.estimated
    again = session.run("examples/vector_add.py", ("h100",), args={"*": "*fp32"}, jobs=1, cache_dir=tmp_path)
    assert again.rows[0].cached and again.rows[0].truth == row.truth


def test_persistent_matmul_with_a_helper_from_another_file_matches_recorded_truth() -> None:
    # benchmarks/truth/triton-3.9.json recorded this config with the same spec through record_truth.py;
    # here the unit strides come from calibrate's own defaults (offs[None, :] * stride → constexpr 1)
    cfgs = ({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "num_warps": 4, "num_stages": 4},)
    cal = session.run("examples/persistent_matmul.py::persistent_matmul_kernel", ("h100",), cfgs,
                      args={"NUM_SMS": "132", "*": "*bf16"}, jobs=2, cache_dir=None)
    cli = next(r for r in cal.rows if r.origin == "cli")
    assert cli.error is None and cli.truth is not None, cli.error
    assert cli.truth["shared"] == 81920
    if TRITON_39:
        assert (cli.truth["regs"], cli.truth["spill_store"]) == (255, 52)
    assert all(r.error is None for r in cal.rows), [r.error for r in cal.rows if r.error]


def test_users_module_is_never_imported_and_triton_errors_are_attributed(tmp_path: Path) -> None:
    sentinel = tmp_path / "ran.txt"
    mod = tmp_path / "userkern.py"
    mod.write_text(textwrap.dedent(f"""
        import triton
        import triton.language as tl
        open({str(sentinel)!r}, "w").write("top-level code ran")
        raise SystemExit("importing this module is forbidden")

        @triton.jit
        def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)
    """))
    cal = session.run(f"{mod}::copy_kernel", ("h100",), ({"BLOCK": 48}, {"BLOCK": 256}), jobs=2, cache_dir=None)
    assert not sentinel.exists()
    bad = next(r for r in cal.rows if r.point.constexprs.get("BLOCK") == 48)
    good = next(r for r in cal.rows if r.point.constexprs.get("BLOCK") == 256)
    # the failing line itself (Triton quotes it; its 'at 2:38' counts from the def): `offs = ...` is line 9
    assert bad.truth is None and bad.error and "power of 2" in bad.error and bad.error.endswith("userkern.py:9]")
    assert good.error is None and good.truth and good.truth["regs"] > 0  # the sweep goes on


def test_cli_json(tmp_path: Path) -> None:
    from kernlint.cli import main

    out = io.StringIO()
    code = main(["calibrate", "examples/vector_add.py", "--target", "h100,b200", "--json", "--cache-dir",
                 str(tmp_path), "-j", "1"], out)
    assert code == 0
    doc = json.loads(out.getvalue())
    assert [r["target"] for r in doc["rows"]] == ["h100", "b200"]
    assert all(r["truth"]["smem"] == 0 and r["truth"]["regs"] for r in doc["rows"])
    assert any("16-byte aligned (default)" in a for a in doc["assumptions"])
    assert doc["environment"]["triton_version"] == triton.__version__
