from __future__ import annotations

from collections.abc import Iterator

from kernlint.core.diagnostic import Confidence, Diagnostic, Severity
from kernlint.pipeline.rule import Case, FileContext, Rule
from kernlint.pipeline.rule_messages import assumed_types_note, config_text, smem_breakdown, where
from kernlint.rules._cases import launched_matmul


class SharedMemoryOverflow(Rule):
    """Shared memory needed by a launched config exceeds the per-CTA limit: the launch fails.

    ## What it does
    Estimates the dynamic shared memory Triton allocates for each launch-site, default or `--config`
    config (pipelined `tl.dot` operand buffers × stages, pipelined loads, reduction scratch) and flags
    configs above the target's per-CTA opt-in limit.

    ## Why is this bad?
    Triton checks `metadata.shared` against the device limit when the kernel is loaded and raises
    `OutOfResources: shared memory, Required: …, Hardware limit: 232448`. The launch never runs.

    ## Hardware
    Per-CTA opt-in limit: 232,448 B on H100/H200/B200, 166,912 B on A100, 101,376 B on sm_89/sm_120.
    Dot operands take `num_stages` buffers of `(BM·BK + BK·BN)·bytes` on sm_90/sm_100 (wgmma/tcgen05),
    `num_stages − 1` on sm_80.

    ## Recommended fix
    Lower `num_stages` first (each stage is one operand buffer), then `BLOCK_K`, then the tile.

    ## Confidence
    Estimate; exact on every measured matmul, softmax and layernorm config (Triton 3.9, ptxas 13.4).
    Layout-conversion scratch is not modelled, so kernels with several dots may need more.
    """

    CODE = "KL101"
    SEVERITY = Severity.ERROR
    CONFIDENCE = Confidence.ESTIMATE
    VALID = [Case(launched_matmul("BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, num_warps=8, num_stages=4"))]
    INVALID = [Case(launched_matmul("BLOCK_M=256, BLOCK_N=256, BLOCK_K=64, num_warps=8, num_stages=4",
                                    "  # expect: KL101"))]

    def check(self, ctx: FileContext) -> Iterator[Diagnostic]:
        for k in ctx.kernels:
            for e in k.estimates:
                if e.config.origin == "autotune" or e.smem is None or not e.smem_over:
                    continue
                assumed = assumed_types_note(k.ir)
                yield self.diagnostic(
                    ctx, e.config.line,
                    f"`{k.jit.name}` needs est. {e.smem.total:,} B shared memory > {e.target.smem_per_cta_optin:,} B "
                    f"per CTA {where(e)} ({config_text(e)}: {smem_breakdown(e)}); the launch will fail "
                    f"with OutOfResources{assumed}",
                    col=e.config.col, kernel=k.jit.qualname, target=e.target.key, config=config_text(e),
                    # certain only when the element types are: an assumed fp16 on an int8 GEMM doubles it
                    severity=Severity.WARNING if assumed else None)
