"""Findings on one autotune candidate are info while a sibling candidate is feasible (the autotuner drops
the failing one); when every candidate fails they keep their severity."""
from __future__ import annotations

from kernlint.pipeline.api import lint_source
from kernlint.core.diagnostic import Severity
from kernlint.rules._cases import autotuned_matmul

# 128x128x64 fp16 x 4 stages: (128*64 + 64*128) * 2 B * 4 = 131,072 B, under H100's 232,448 B
_OK = "triton.Config({'BLOCK_M': 128, 'BLOCK_N': 128, 'BLOCK_K': 64}, num_warps=8, num_stages=4)"
# 256x256x64 fp16 x 4 stages: (256*64 + 64*256) * 2 B * 4 = 262,144 B, over H100's 232,448 B
_TOO_BIG = "triton.Config({'BLOCK_M': 256, 'BLOCK_N': 256, 'BLOCK_K': 64}, num_warps=8, num_stages=4)"
_TOO_BIG_2 = "triton.Config({'BLOCK_M': 256, 'BLOCK_N': 256, 'BLOCK_K': 64}, num_warps=8, num_stages=5)"
# BLOCK_K=8 < 16: a compile error the autotuner does not catch (CompilationError, not OutOfResources)
_SMALL_K = "triton.Config({'BLOCK_M': 64, 'BLOCK_N': 64, 'BLOCK_K': 8}, num_warps=4)"


def _found(src: str, code: str) -> list[Severity]:
    return [d.severity for d in lint_source(src, "k.py").diagnostics if d.code == code]


def test_infeasible_candidate_with_feasible_sibling_is_info() -> None:
    src = autotuned_matmul(_OK, _TOO_BIG)
    found = [d for d in lint_source(src, "k.py").diagnostics if d.code == "KL401"]
    assert [d.severity for d in found] == [Severity.INFO]
    assert "the autotuner drops it" in found[0].message and "1 of them are feasible" in found[0].message
    assert lint_source(src, "k.py").exit_code() == 0


def test_every_candidate_failing_keeps_the_warning() -> None:
    assert _found(autotuned_matmul(_TOO_BIG, _TOO_BIG_2), "KL401") == [Severity.WARNING, Severity.WARNING]


def test_a_lone_config_is_not_a_candidate_with_siblings() -> None:
    assert _found(autotuned_matmul(_TOO_BIG), "KL401") == [Severity.WARNING]


def test_compile_errors_the_autotuner_does_not_catch_stay_errors() -> None:
    assert _found(autotuned_matmul(_OK, _SMALL_K), "KL302") == [Severity.ERROR]


def _comprehension(pairs: str) -> str:
    from kernlint.rules._cases import MATMUL_BODY, MATMUL_HEAD

    return (MATMUL_HEAD + "@triton.autotune(\n    configs=[\n        triton.Config({'BLOCK_M': bm, 'BLOCK_N': 256, "
            "'BLOCK_K': 64}, num_warps=w, num_stages=3)\n        for bm, w in " + pairs + "\n    ],\n"
            "    key=['M', 'N', 'K'],\n)\n@triton.jit\n" + MATMUL_BODY)


def test_candidates_of_one_comprehension_are_siblings() -> None:
    # every candidate of the comprehension sits on the Config's line and column: told apart by their values
    # (fla's chunk_h kernels: 81 candidates on one line, a few of them spilling)
    found = [d for d in lint_source(_comprehension("[(128, 8), (256, 4)]"), "k.py").diagnostics if d.code == "KL201"]
    assert [d.severity for d in found] == [Severity.INFO]
    assert "BLOCK_M=256" in (found[0].config or "") and "1 of them are feasible" in found[0].message
    assert _found(_comprehension("[(256, 4), (256, 2)]"), "KL201") == [Severity.WARNING, Severity.WARNING]
