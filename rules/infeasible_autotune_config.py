from __future__ import annotations

from collections.abc import Iterator

from kernlint.core.diagnostic import Confidence, Diagnostic, Severity
from kernlint.pipeline.rule import Case, FileContext, Rule
from kernlint.pipeline.rule_messages import assumed_types_note, config_text, smem_breakdown, where
from kernlint.rules._cases import autotuned_matmul

_OK = "triton.Config({'BLOCK_M': 128, 'BLOCK_N': 128, 'BLOCK_K': 64}, num_warps=8, num_stages=4)"
_TOO_BIG = "triton.Config({'BLOCK_M': 256, 'BLOCK_N': 256, 'BLOCK_K': 64}, num_warps=8, num_stages=4)"


class InfeasibleAutotuneConfig(Rule):
    """An autotune config cannot run on the target: it exceeds shared or tensor memory.

    ## What it does
    Estimates every `triton.Config` of an `@triton.autotune` list on each target and flags those whose
    shared memory exceeds the per-CTA limit or whose accumulators exceed the 512 tensor-memory columns
    of sm_100.

    ## Why is this bad?
    The autotuner compiles and benchmarks every config. An infeasible one costs a full compile and then
    fails with `OutOfResources` (the autotuner skips it), so it only slows tuning down — and if it is the
    only config left for a GPU, the kernel cannot launch at all.

    ## Hardware
    232,448 B shared memory per CTA on H100/H200/B200, 166,912 B on A100; 512 TMEM columns on B200.

    ## Recommended fix
    Drop the config, or prune per GPU with `prune_configs_by={"early_config_prune": ...}`.

    ## Confidence
    Estimate; the shared-memory model is exact on all measured matmul configs.
    """

    CODE = "KL401"
    SEVERITY = Severity.WARNING
    CONFIDENCE = Confidence.ESTIMATE
    VALID = [Case(autotuned_matmul(_OK))]
    INVALID = [Case(autotuned_matmul(_OK, _TOO_BIG + ",  # expect: KL401").replace(",  # expect: KL401,",
                                                                                    ",  # expect: KL401"))]

    def check(self, ctx: FileContext) -> Iterator[Diagnostic]:
        for k in ctx.kernels:
            for e in k.estimates:
                if e.config.origin != "autotune" or e.smem is None:
                    continue
                if e.smem_over:
                    reason = (f"est. {e.smem.total:,} B shared memory > {e.target.smem_per_cta_optin:,} B "
                              f"({smem_breakdown(e)})")
                elif e.tmem_over:
                    reason = f"est. {e.smem.tmem_columns} tensor-memory columns > {e.target.tmem_columns}"
                else:
                    continue
                yield self.diagnostic(
                    ctx, e.config.line,
                    f"autotune config of `{k.jit.name}` cannot run {where(e)}: {reason}; ({config_text(e)})"
                    f"{assumed_types_note(k.ir) if e.smem_over else ''}",
                    col=e.config.col, kernel=k.jit.qualname, target=e.target.key, config=config_text(e))
