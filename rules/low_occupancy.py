from __future__ import annotations

from collections.abc import Iterator

from kernlint.core.diagnostic import Confidence, Diagnostic, Severity
from kernlint.pipeline.rule import Case, FileContext, Rule
from kernlint.pipeline.rule_messages import config_text, unbound_note, where
from kernlint.rules._cases import ROW_KERNEL

MIN_OCCUPANCY = 0.25  # below 16 of 64 resident warps a memory-bound kernel cannot hide DRAM latency


# A matmul whose operands come from tensor descriptors kernlint does not follow (KL002): its dot is not in
# the estimate, but it is still a dot kernel (liger's _swiglu_kernel_forward drew 24 findings like this)
_UNREAD_DOT = '''import triton
import triton.language as tl


@triton.jit
def gate_kernel(a_desc, b_desc, y_ptr, n, BLOCK: tl.constexpr):
    a = a_desc.load([0, 0])
    b = b_desc.load([0, 0])
    acc = tl.dot(a, b)
    offs = tl.arange(0, BLOCK)
    x = tl.load(y_ptr + offs, mask=offs < n, other=0.0).to(tl.float32)
    m = tl.max(x, axis=0) + tl.sum(acc)
    tl.store(y_ptr + offs, (x - m).to(tl.float16), mask=offs < n)


def launch(a, b, y, n):
    gate_kernel[(1,)](a, b, y, n, BLOCK=16384, num_warps=4)
'''


class LowOccupancy(Rule):
    """A memory-bound kernel's registers or shared memory leave too few warps per SM.

    ## What it does
    Computes CTAs per SM from registers (256-register warp granule), shared memory (+1 KiB reserved per
    CTA), warps and the CTA cap, names the limiter the way Nsight Compute does, and flags kernels
    without `tl.dot` (read or not) whose theoretical occupancy is below 25 % because of registers or shared memory.

    ## Why is this bad?
    Element-wise and reduction kernels hide memory latency with many resident warps. Matmul-like kernels
    are exempt: they hide latency with software pipelining and usually run at 1–2 CTAs per SM by design.

    ## Hardware
    2,048 threads (64 warps) and 32 CTAs per SM on sm_80/90/100; 65,536 registers; 228 KiB shared.

    ## Recommended fix
    Smaller blocks or a looped reduction (fewer live elements per thread), or fewer pipeline stages.

    ## Confidence
    Estimate: the occupancy formula is exact given registers and shared memory; registers are estimated.
    """

    CODE = "KL202"
    SEVERITY = Severity.WARNING
    CONFIDENCE = Confidence.ESTIMATE
    VALID = [Case(ROW_KERNEL.format(kwargs="BLOCK=1024, num_warps=4", marker="")), Case(_UNREAD_DOT)]
    INVALID = [Case(ROW_KERNEL.format(kwargs="BLOCK=65536, num_warps=8", marker="  # expect: KL202"))]

    def check(self, ctx: FileContext) -> Iterator[Diagnostic]:
        for k in ctx.kernels:
            # a `tl.dot` kernlint could not read is still a dot: the exemption below holds for it too
            unread_dot = any("dot" in u.construct for u in k.ir.unmodelled)
            for e in k.estimates:
                occ, r = e.occupancy, e.registers
                if occ is None or r is None or e.dots or unread_dot or occ.ctas_per_sm == 0:
                    continue
                if r.demand > r.budget:
                    continue  # KL201 already reports this config
                if occ.occupancy >= MIN_OCCUPANCY or occ.limiter not in ("registers", "shared memory"):
                    continue
                detail = (f"est. {r.allocated} registers/thread" if occ.limiter == "registers"
                          else f"est. {e.smem.total:,} B shared memory" if e.smem else "")
                yield self.diagnostic(
                    ctx, e.config.line,
                    f"`{k.jit.name}` is limited by {occ.limiter} to {occ.ctas_per_sm} CTA(s) = "
                    f"{occ.warps_per_sm} warps/SM ({occ.occupancy:.0%} occupancy) {where(e)} ({detail}; "
                    f"{config_text(e)}{unbound_note(k.jit.constexpr_names, e)})",
                    col=e.config.col, kernel=k.jit.qualname, target=e.target.key, config=config_text(e),
                    confidence=e.confidence)
