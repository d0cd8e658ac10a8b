from __future__ import annotations

from collections.abc import Iterator

from kernlint.core.diagnostic import Confidence, Diagnostic, Severity
from kernlint.pipeline.rule import Case, FileContext, Rule

_KERNEL = '''import helion
import helion.language as hl
import torch


@helion.kernel({decorator})
def row_sum(x: torch.Tensor) -> torch.Tensor:
    m, n = x.size()
    out = torch.empty([m], dtype=torch.float32, device=x.device)
    for tile_m in hl.tile(m):
        out[tile_m] = x[tile_m, :].to(torch.float32).sum(-1)
    return out
'''


class HelionUnknownReductionExtent(Rule):
    """A Helion kernel reduces over a full-extent dimension whose size is not known before it runs.

    ## What it does
    Finds full-extent slices (`x[tile, :]`, `hl.zeros([tile, n])`) in `@helion.kernel` device loops whose
    extent comes from a runtime size (`x.size(1)`) and that the config leaves persistent (no
    `reduction_loops` entry, or no config at all). Reported once per config, on the config's line. A kernel
    with `static_shapes=True` is compiled per input shape, and an extent passed through `hl.specialize`
    is a constant of each compile: neither is reported.

    ## Why is this bad?
    Helion sizes a persistent reduction at `next_power_of_2(n)` elements per row when it compiles: the
    register footprint, and whether ptxas spills, depends on a number nobody sees in the source. With no
    config, Helion's default block sizes also depend on it (`BlockSizeSpec._fragment` in
    helion/autotuner/config_spec.py: 1 for reductions wider than 256), and kernlint cannot estimate
    the kernel at all.

    ## Hardware
    Any: a 32k-column fp32 row held persistently needs 32,768 / (32 · num_warps) registers per thread for
    the row alone — 128 with 8 warps, beyond the 255 cap with 4 warps on 65,536-register SMs.

    ## Recommended fix
    Set `reduction_loops=[N]` in the `helion.Config` to loop over the dimension in chunks of N, or state
    the extent (`kernlint check --config n=4096`) so the persistent footprint can be estimated.

    ## Confidence
    Exact about the source: the extent is not a literal. Whether the kernel spills depends on the runtime
    size.
    """

    CODE = "KL501"
    SEVERITY = Severity.WARNING
    CONFIDENCE = Confidence.EXACT
    VALID = [Case(_KERNEL.format(decorator="config=helion.Config(block_sizes=[4], reduction_loops=[1024])")),
             Case(_KERNEL.format(decorator="config=helion.Config(block_sizes=[4]), static_shapes=True"))]
    INVALID = [
        Case(_KERNEL.format(decorator="config=helion.Config(block_sizes=[4])").replace(
            "[4]))\n", "[4]))  # expect: KL501\n", 1)),
        Case(_KERNEL.format(decorator="").replace("@helion.kernel()\n", "@helion.kernel()  # expect: KL501\n")),
    ]

    def check(self, ctx: FileContext) -> Iterator[Diagnostic]:
        if not ctx.kernels:
            return   # (and libcst, which the Helion lowering imports, stays unimported for a file without kernels)
        from kernlint.ir.helion_types import HelionIR

        for k in ctx.kernels:
            if not isinstance(k.ir, HelionIR):
                continue
            helion = getattr(k.jit, "helion", None)
            if helion is not None and helion.settings.get("static_shapes") is True:
                continue  # Helion compiles (and autotunes) per input shape: every extent is a constant there
            seen: set[tuple[int, int, str]] = set()
            for p in k.points:
                for r in k.ir.rdims:
                    if r.symbol not in p.unknown or r.extent.free_symbols() & k.ir.specialized:
                        continue  # hl.specialize: the author fixes the extent per compile on purpose
                    if (p.line, p.col, r.symbol) in seen:
                        continue  # one finding per config line and dimension, not per target
                    seen.add((p.line, p.col, r.symbol))
                    yield self.diagnostic(
                        ctx, p.line,
                        f"`{k.jit.name}` reduces over the full extent `{r.extent_text}` (line {r.line}) whose size "
                        f"is not known statically, and this config keeps it persistent: Helion will hold "
                        f"next_power_of_2({r.extent_text}) elements per row; set reduction_loops=[...] or pass "
                        f"--config {r.extent_text}=N ({p.label()})",
                        col=p.col, kernel=k.jit.qualname, config=p.label())
