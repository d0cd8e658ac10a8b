"""Every example kernel is linted; its `# expect:` markers must match the findings exactly."""
from __future__ import annotations

import os

import pytest

from conftest import ROOT, expected_markers
from kernlint.pipeline.api import lint_paths

EXAMPLES = sorted((ROOT / "examples").rglob("*.py"))


@pytest.fixture(scope="module")
def result():  # type: ignore[no-untyped-def]
    cwd = os.getcwd()
    os.chdir(ROOT)  # module names (for cross-file helpers) come from paths relative to the repo root
    try:
        return lint_paths(["examples"])
    finally:
        os.chdir(cwd)


def test_there_are_at_least_ten_examples() -> None:
    assert len([p for p in EXAMPLES if p.name not in ("__init__.py", "kernel_utils.py")]) >= 10


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_markers_match_findings(result, path) -> None:  # type: ignore[no-untyped-def]
    rel = str(path.relative_to(ROOT))
    found = {(d.span.start.line, d.code) for f in result.files if f.path == rel for d in f.diagnostics}
    assert found == expected_markers(path.read_text())


def test_every_kernel_is_found_and_estimated(result) -> None:  # type: ignore[no-untyped-def]
    kernels = {k.jit.qualname for f in result.files for k in f.kernels}
    for name in ("matmul_kernel", "attn_fwd_kernel", "softmax_kernel", "layernorm_fwd_kernel",
                 "Fp8GroupQuantizer._quant_kernel", "persistent_matmul_kernel", "vector_add_kernel"):
        assert name in kernels
    # helpers are inlined into their callers, not reported as kernels of their own
    assert "silu" not in kernels and "_attn_inner" not in kernels
    assert not result.internal_errors


def test_cross_file_helper_is_inlined(result) -> None:  # type: ignore[no-untyped-def]
    swiglu = next(k for f in result.files for k in f.kernels if k.jit.name == "swiglu_fwd_kernel")
    assert not swiglu.ir.unmodelled
    assert any(op.fn == "sigmoid" or op.fn == "exp" for op, _ in swiglu.ir.walk())
