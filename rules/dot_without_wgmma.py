from __future__ import annotations

from collections.abc import Iterator

from kernlint.core.diagnostic import Confidence, Diagnostic, Severity
from kernlint.pipeline.rule import Case, FileContext, Rule
from kernlint.pipeline.rule_messages import config_text, where
from kernlint.rules._cases import autotuned_matmul

_FOUR = "triton.Config({'BLOCK_M': 128, 'BLOCK_N': 128, 'BLOCK_K': 64}, num_warps=4, num_stages=3)"
_TWO = "triton.Config({'BLOCK_M': 128, 'BLOCK_N': 64, 'BLOCK_K': 64}, num_warps=2, num_stages=3)"


class DotWithoutWgmma(Rule):
    """A `tl.dot` with a 64-row (or larger) tile runs on fewer than 4 warps on Hopper: no wgmma.

    ## What it does
    Flags configs whose `tl.dot` tiles could use Hopper's warpgroup MMA (`wgmma`, tile M ≥ 64) but whose
    `num_warps` is below 4, so Triton falls back to the Ampere-style `mma.sync` path.

    ## Why is this bad?
    `wgmma` is issued by a warpgroup of 4 warps and reads its operands straight from shared memory; with
    1–2 warps Triton uses `mma.sync`, which needs the operands in registers and delivers a fraction of
    H100's tensor-core throughput for large tiles.

    ## Hardware
    sm_90 (H100/H200): `wgmma.mma_async` works on warpgroups of 4 warps and M = 64 per warpgroup (PTX ISA,
    "Asynchronous Warpgroup Level Matrix Multiply-Accumulate"). Triton only emits it for ≥ 4 warps.

    ## Recommended fix
    Use `num_warps=4` or 8 for 64-row and larger tiles. For skinny problems (a 16-row M) a small tile with
    2 warps can still win — then use a tile below 64 rows, which this rule does not flag.

    ## Confidence
    Heuristic: the instruction selection is exact, the performance consequence is typical, not certain.
    """

    CODE = "KL204"
    SEVERITY = Severity.WARNING
    CONFIDENCE = Confidence.HEURISTIC
    VALID = [Case(autotuned_matmul(_FOUR))]
    INVALID = [Case(autotuned_matmul(_FOUR, _TWO + ",  # expect: KL204").replace("KL204,\n", "KL204\n"))]

    def check(self, ctx: FileContext) -> Iterator[Diagnostic]:
        for k in ctx.kernels:
            seen: set[tuple[int, str]] = set()
            for e in k.estimates:
                if e.target.tensor_core != "wgmma" or e.config.num_warps >= 4:
                    continue
                dots = [d for d in e.dots if d.m is not None and d.m >= 64]
                if not dots or (e.config.line, e.target.key) in seen:
                    continue
                seen.add((e.config.line, e.target.key))
                d = dots[0]
                yield self.diagnostic(
                    ctx, e.config.line,
                    f"`tl.dot` at line {d.op.line} of `{k.jit.name}` has a {d.m}-row tile but only "
                    f"{e.config.num_warps} warp(s) {where(e)}: Triton uses mma.sync instead of wgmma "
                    f"({config_text(e)})",
                    col=e.config.col, kernel=k.jit.qualname, target=e.target.key, config=config_text(e))
