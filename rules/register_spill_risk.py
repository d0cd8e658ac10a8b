from __future__ import annotations

from collections.abc import Iterator

from kernlint.analysis.spill_band import BORDERLINE_PRESSURE, BORDERLINE_SPILL_RATE, SPILL_BYTES_SPREAD
from kernlint.core.diagnostic import Confidence, Diagnostic, Severity
from kernlint.pipeline.rule import Case, FileContext, Rule
from kernlint.pipeline.rule_messages import config_text, unbound_note, where
from kernlint.rules._cases import launched_matmul


class RegisterSpillRisk(Rule):
    """The live tiles of a config need more registers than a thread may have: ptxas will spill.

    ## What it does
    Runs liveness over the kernel's dataflow graph, sums the registers of every tile live at the peak
    (elements per thread × 32-bit words, vectorised addresses and masks, dot accumulators) and compares
    the demand with the per-thread budget `min(255, 65536 / (32·num_warps))` (or `maxnreg`).

    ## Why is this bad?
    Spilled registers go to local memory (L1/L2, then HBM). A 128×256 fp16 matmul tile with 4 warps on
    H100 spills 2,000 B per thread and ran 6.7× slower than the same tile with 8 warps (measured on an
    H200; docs/design.md, "Ground truth").

    ## Hardware
    65,536 registers per SM, at most 255 per thread; Triton sets `.reqntid 32·num_warps`, so 16 warps
    cap a thread at 128 registers and 32 warps at 64.

    ## Recommended fix
    More warps for the same tile (the accumulator is split across them), a smaller tile, or a looped
    reduction instead of a whole row in registers.

    ## Confidence
    Estimate: the model is calibrated against ptxas; see the accuracy table in the README. Spills are
    sometimes the fastest option; treat a finding as a prompt to measure. Within 20 % over the budget the
    finding is a heuristic and info-level: ptxas spilled in 65 of 86 such configs measured (76 %, below the
    90 % a warning must reach; docs/finding-precision.md), and the message says so. fla's attnres backward
    kernel, BN=2048 BD=32 at 8 warps: estimated 272 without `D`, ptxas 195 and no spill.
    """

    CODE = "KL201"
    SEVERITY = Severity.WARNING
    CONFIDENCE = Confidence.ESTIMATE
    VALID = [Case(launched_matmul("BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, num_warps=8, num_stages=3"))]
    INVALID = [Case(launched_matmul("BLOCK_M=256, BLOCK_N=256, BLOCK_K=64, num_warps=4, num_stages=3",
                                    "  # expect: KL201"))]

    def check(self, ctx: FileContext) -> Iterator[Diagnostic]:
        for k in ctx.kernels:
            for e in k.estimates:
                r = e.registers
                if r is None or r.demand <= r.budget or e.smem_over:
                    continue
                top = ", ".join(f"{t.name} {t.shape} {t.dtype} ≈{t.registers:.0f}" for t in r.peak_tiles[:3])
                borderline = r.demand <= BORDERLINE_PRESSURE * r.budget
                spilled, measured = BORDERLINE_SPILL_RATE
                lo, hi = SPILL_BYTES_SPREAD
                size = f"≈{r.spill_bytes:,} B/thread (measured spills: {lo}-{hi}× such estimates in half the configs)"
                verdict = (f"borderline (≤ {BORDERLINE_PRESSURE - 1:.0%} over): ptxas spilled in {spilled} of "
                           f"{measured} such measured configs, {size} if it does"
                           if borderline else f"ptxas will spill {size}")
                yield self.diagnostic(
                    ctx, e.config.line,
                    f"`{k.jit.name}` needs est. {r.demand} registers/thread > {r.budget} available {where(e)} "
                    f"({config_text(e)}{unbound_note(k.jit.constexpr_names, e)}); {verdict}. Peak at line "
                    f"{r.peak_line}: {top}",
                    col=e.config.col, kernel=k.jit.qualname, target=e.target.key, config=config_text(e),
                    confidence=Confidence.HEURISTIC if borderline else e.confidence,
                    severity=Severity.INFO if borderline else None)
