"""One estimate per (kernel, config, target): registers, spills, shared/tensor memory, occupancy."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kernlint.analysis.configs import ConfigPoint
from kernlint.analysis.liveness import Liveness, compute_liveness, derived
from kernlint.analysis.occupancy import Occupancy, compute_occupancy
from kernlint.analysis.placement import DotPlacement, place_dots
from kernlint.analysis.passes import validate_disabled
from kernlint.analysis.registers import REGISTER_PASSES, RegisterEstimate, estimate_registers
from kernlint.analysis.smem import SMEM_PASSES, SmemEstimate, estimate_smem
from kernlint.core.diagnostic import Confidence
from kernlint.hardware.specs import GpuSpec
from kernlint.ir.nodes import KernelIR, OpKind
from kernlint.ir.cache_keys import Analysis


@dataclass(frozen=True, slots=True)
class KernelEstimate:
    kernel: str
    target: GpuSpec
    config: ConfigPoint
    registers: RegisterEstimate | None
    smem: SmemEstimate | None
    occupancy: Occupancy | None
    dots: tuple[DotPlacement, ...]
    missing: tuple[str, ...]            # constexprs without a value: nothing was estimated
    assumptions: tuple[str, ...]
    confidence: Confidence

    @property
    def estimated(self) -> bool:
        return self.registers is not None

    @property
    def not_estimated_because(self) -> str:
        return self.config.invalid or f"unknown: {', '.join(self.missing)}"

    @property
    def tmem_over(self) -> bool:
        return bool(self.smem and self.target.tmem_columns and self.smem.tmem_columns > self.target.tmem_columns)

    @property
    def smem_over(self) -> bool:
        return bool(self.smem and self.smem.total > self.target.smem_per_cta_optin)


def shape_symbols(ir: KernelIR) -> frozenset[str]:
    """The names that size a tile or a loop's num_stages (kept on the IR: every estimate of a sweep asks)."""
    cached = ir.cache.get(Analysis.SHAPE_SYMBOLS.key())
    if cached is not None:
        return cached  # type: ignore[no-any-return]
    names: set[str] = set()
    for op, _ in ir.walk():
        for v in op.all_results():
            for d in v.shape:
                names |= d.free_symbols()
        stages = op.for_attrs().num_stages if op.kind == OpKind.FOR else None
        if stages is not None:
            names |= stages.free_symbols()
    ir.cache[Analysis.SHAPE_SYMBOLS.key()] = out = frozenset(names)
    return out


def _liveness(ir: KernelIR, env: dict[str, Any]) -> Liveness:
    """A config sweep estimates the same kernel with the same constexprs under many num_warps / num_stages /
    targets; its liveness depends only on the IR and the constexprs (which if-branches are taken), so it
    is kept on the IR, once per binding."""
    try:
        key = Analysis.LIVENESS.key(frozenset((k, type(v), v) for k, v in env.items()))
    except TypeError:  # an unhashable constexpr value: no caching
        return compute_liveness(ir, env)
    live = ir.cache.get(key)
    if live is None:
        live = ir.cache[key] = compute_liveness(ir, env)
    return live  # type: ignore[no-any-return]


def specialised(ir: KernelIR, env: dict[str, Any]) -> KernelIR:
    """The graph Triton would build for this config: the kernel lowered again with the constexprs of its
    undecided `if`s bound (KernelIR.specialise), once per binding. Analysing the generic graph instead decides
    those ifs per config too (liveness._taken_regions), but a name bound in both branches is merged there, and
    a compile-time value merged with a run-time one is run-time: flash-attn AMD's `attn_fwd` takes
    `seqlen_k = MAX_SEQLENS_K` (else a loaded length), so its KV loop bounds (`cdiv`, `min`, `if n_full_blocks
    > 0` over it) were unknown and the loop pipelined, where Triton folds the one-trip loop: 73,728 / 294,912 B
    estimated against 16,384 / 65,536 B at 64² / 128² tiles (Triton 3.9, sm_90)."""
    bound = {n: env[n] for n in ir.branch_symbols if n in env}
    if ir.specialise is None or not bound:
        return ir
    try:
        key = Analysis.SPECIALISED.key(frozenset((k, type(v), v) for k, v in bound.items()))
    except TypeError:  # an unhashable constexpr value: lowered each time
        return ir.specialise(bound)
    out = ir.cache.get(key)
    if out is None:
        out = ir.cache[key] = ir.specialise(bound)
    return out  # type: ignore[no-any-return]


def estimate(ir: KernelIR, config: ConfigPoint, spec: GpuSpec, disabled: frozenset[str] = frozenset()) -> KernelEstimate:
    """`disabled`: names of model passes (registers.REGISTER_PASSES, smem.SMEM_PASSES) to leave out, for
    ablation (benchmarks/ablation.py); empty for every real estimate."""
    if disabled:
        validate_disabled(disabled, REGISTER_PASSES, SMEM_PASSES)
    assumptions = list(ir.assumptions)
    if config.source_note:
        assumptions.append(config.source_note)
    for name in config.defaulted:
        if name in ("num_warps", "num_stages"):
            assumptions.append(f"{name}={getattr(config, name)} (Triton default)")
        else:
            assumptions.append(f"{name}={config.constexprs.get(name)} (parameter default)")
    unknown = [n for n in ir.constexprs if n not in config.constexprs]
    # Only constexprs that shape tiles block an estimate; unknown flags (EVEN_K) just keep both if-branches.
    missing = tuple(sorted(n for n in unknown if n in shape_symbols(ir)))
    for name in unknown:
        if name not in missing:
            assumptions.append(f"{name} unknown: both branches of `if {name}` analysed")
    if missing or config.invalid:
        return KernelEstimate(ir.name, spec, config, None, None, None, (), missing, tuple(assumptions),
                              Confidence.HEURISTIC)
    env = dict(config.constexprs)
    generic, ir = ir, specialised(ir, env)
    live = _liveness(ir, env)
    # dot placement takes no num_stages: a config's stage variants share it (a recommend search estimates up to
    # seven of each), kept on the liveness like the other facts of this constexpr binding
    dots = derived(live, Analysis.DOT_PLACEMENT.key(spec, config.num_warps),
                   lambda: place_dots(live, env, spec, config.num_warps))
    smem = estimate_smem(live, dots, env, spec, config.num_warps, config.num_stages, disabled)
    # Helion reductions (rdims) are generated as whole-row or looped code that kernlint's IR does not spell
    # out; there ptxas keeps the tiles the sunk-load rule would share (Helion rms_norm_looped: -7 % → -19 %
    # if counted, benchmarks/helion_truth.py), so the rule is left to kernels without them
    regs = estimate_registers(live, dots, env, spec, config.num_warps, config.maxnreg, config.num_stages,
                              sink=not getattr(ir, "rdims", ()), disabled=disabled)
    occ = compute_occupancy(spec, config.num_warps, regs.allocated, smem.total)
    confidence = Confidence.ESTIMATE
    if generic.unmodelled or not regs.complete or not smem.complete:
        confidence = Confidence.HEURISTIC
    return KernelEstimate(ir.name, spec, config, regs, smem, occ, tuple(dots), (), tuple(assumptions), confidence)
