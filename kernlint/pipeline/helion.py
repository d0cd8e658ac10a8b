"""The Helion pipeline: Helion configs → kernlint ConfigPoints, and the per-file entry point
`analyse_helion_file` (frontend facts → lowering → estimates), which `kernlint.pipeline.api` runs beside the Triton one.

`helion.Config.block_sizes[i]` binds `block_size_<i>` (see kernlint.lowering.helion_lower for the order),
`reduction_loops[j]` binds `rdim_<j>` (None: persistent, `next_power_of_2(extent)` wide), `num_warps` and
`num_stages` are Triton launch options. Helion's own defaults differ from Triton's: `num_warps=4`,
`num_stages=1` (DEFAULT_NUM_WARPS / DEFAULT_NUM_STAGES in helion/autotuner/config_spec.py).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kernlint.analysis.configs import ConfigPoint
from kernlint.frontend.helion import HelionConfig, HelionKernel
from kernlint.ir.symbolic import Unknown, as_int

if TYPE_CHECKING:
    from kernlint.hardware.specs import GpuSpec
    from kernlint.ir.helion_types import HelionIR
    from kernlint.pipeline.rule import KernelAnalysis
    from kernlint.pipeline.settings import Settings

HELION_NUM_WARPS = 4
HELION_NUM_STAGES = 1


def _next_pow2(n: int) -> int:
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


def extent_values(ir: HelionIR, cli: list[dict[str, Any]]) -> dict[str, Any]:
    """Extents (`n`, `x.size(1)`) the user states with `--config n=4096`: shapes, so they hold for every config."""
    return {k: v for c in cli for k, v in c.items() if k in ir.extents and isinstance(v, int)}


def rdim_values(ir: HelionIR, env: dict[str, Any], loops: list[Any]) -> tuple[dict[str, Any], dict[str, str]]:
    values: dict[str, Any] = {}
    unknown: dict[str, str] = {}
    for j, r in enumerate(ir.rdims):
        looped = loops[j] if j < len(loops) else None
        if isinstance(looped, int) and not isinstance(looped, bool):
            values[r.symbol] = looped
            continue
        extent = as_int(r.extent.evaluate(env))
        if extent is None:
            unknown[r.symbol] = (f"full-extent dimension `{r.extent_text}` (line {r.line}) has no static size; "
                                 f"give it with --config {r.extent_text}=N or set reduction_loops")
        else:
            values[r.symbol] = _next_pow2(extent)
    return values, unknown


def helion_default_blocks(ir: HelionIR, rvalues: dict[str, Any]) -> list[int] | str:
    """Helion's default block size per tile (BlockSizeSpec._fragment in helion/autotuner/config_spec.py)."""
    n = len(ir.tunable_slots)
    if any(r.symbol not in rvalues for r in ir.rdims):
        return "Helion's default block size depends on the runtime size of a full-extent dimension"
    numel = 1
    for r in ir.rdims:
        numel *= rvalues[r.symbol]
    if n <= 2 and numel <= 128:
        default = 32
    elif n >= 3 and numel > 1:
        per_dim = int((32768 / numel) ** (1.0 / n))
        default = max(1, 1 << (per_dim.bit_length() - 1)) if per_dim >= 1 else 1
    elif numel <= 256:
        default = 16
    else:
        default = 1
    return [default] * n


def point_for(kernel: HelionKernel, ir: HelionIR, cfg: HelionConfig | None, extents: dict[str, Any],
              origin: str) -> ConfigPoint:
    values = cfg.values if cfg is not None else {}
    env: dict[str, Any] = dict(extents)
    unknown: dict[str, str] = {}
    defaulted: list[str] = []
    loops = values.get("reduction_loops")
    rvals, runknown = rdim_values(ir, env, list(loops) if isinstance(loops, (list, tuple)) else [])
    env.update(rvals)
    unknown.update(runknown)
    blocks = values.get("block_sizes")
    slots = ir.tunable_slots
    if isinstance(blocks, int):
        blocks = [blocks]
    if blocks is None or isinstance(blocks, Unknown):
        blocks = helion_default_blocks(ir, rvals) if blocks is None else str(blocks.reason)
        defaulted += [s.symbol for s in slots] if isinstance(blocks, list) else []
    if isinstance(blocks, str):
        unknown.update({s.symbol: blocks for s in slots})
    else:
        for i, s in enumerate(slots):
            b = blocks[i] if i < len(blocks) else None
            if isinstance(b, int) and not isinstance(b, bool):
                env[s.symbol] = b
            else:
                unknown[s.symbol] = (f"block_sizes has {len(blocks)} entries but the kernel has {len(slots)} "
                                     f"hl.tile dimensions" if b is None else f"block_sizes[{i}] is not static")
    nw, ns = values.get("num_warps"), values.get("num_stages")
    if not isinstance(nw, int):
        nw, _ = HELION_NUM_WARPS, defaulted.append("num_warps")
    if not isinstance(ns, int):
        ns, _ = HELION_NUM_STAGES, defaulted.append("num_stages")
    maxnreg = values.get("maxnreg")
    line, col = (cfg.line, cfg.col) if cfg is not None else (kernel.decorator_line, 0)
    return ConfigPoint(env, nw, ns, origin, line, col, maxnreg if isinstance(maxnreg, int) else None,  # type: ignore[arg-type]
                       unknown, tuple(defaulted))


def helion_points(kernel: HelionKernel, ir: HelionIR, settings: Settings) -> list[ConfigPoint]:
    cli = list(settings.cli_configs)
    extents = extent_values(ir, cli)
    points: list[ConfigPoint] = []
    own = {s.symbol for s in ir.tunable_slots} | {r.symbol for r in ir.rdims} | {"num_warps", "num_stages"}
    for raw in cli:
        keys = set(raw) - set(ir.extents)
        if keys and keys <= own | {"maxnreg"}:
            base = point_for(kernel, ir, None, extents, "cli")
            env = {**base.constexprs, **{k: v for k, v in raw.items() if k not in ("num_warps", "num_stages")}}
            points.append(ConfigPoint(env, raw.get("num_warps", base.num_warps), raw.get("num_stages", base.num_stages),
                                      "cli", kernel.line, 0, raw.get("maxnreg"),
                                      {k: v for k, v in base.unknown.items() if k not in env}))
    facts = kernel.helion
    # Pinned `config=` runs exactly like a Triton launch with explicit values; a `configs=` list is what
    # Helion's autotuner chooses from (KL401 territory); no config at all: Helion's default config.
    origin = {"pinned": "launch", "configs": "autotune"}.get(facts.mode, "default")
    for cfg in facts.configs:
        points.append(point_for(kernel, ir, cfg, extents, origin))
    if not facts.configs:
        points.append(point_for(kernel, ir, None, extents, "default"))
    return points


def analyse_helion_file(path: str, text: str | None, targets: tuple[GpuSpec, ...],
                        settings: Settings) -> list[KernelAnalysis]:
    """Every `@helion.kernel` of one file, analysed like a Triton kernel. Cheap when the file never says helion."""
    from kernlint.frontend.helion import collect_helion_kernels, mentions_helion

    if not mentions_helion(text):
        return []
    import libcst as cst
    from libcst.metadata import MetadataWrapper

    from kernlint.analysis.estimate import estimate
    from kernlint.frontend.kernels import collect_constants
    from kernlint.frontend.names import NameResolver
    from kernlint.core.module_names import package_module_name
    from kernlint.frontend.static_eval import StaticEvaluator
    from kernlint.lowering.helion_lower import HelionLowerer
    from kernlint.lowering.lower import ModuleRef
    from kernlint.pipeline.rule import KernelAnalysis

    try:
        module = cst.parse_module(text or "")
    except Exception:
        return []  # KL001 comes from the main parse
    module_name = package_module_name(path)
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    names = NameResolver(wrapper, module_name.rpartition(".")[0])
    constants = collect_constants(module, StaticEvaluator(names))
    out: list[KernelAnalysis] = []
    arg_types = {k: v for k, v in settings.arg_types.items() if k != "*"}
    pointee = settings.arg_types.get("*", settings.default_pointee).lstrip("*")
    for kernel in collect_helion_kernels(path, module, names, constants):
        ir = HelionLowerer(kernel, ModuleRef(names, constants, module_name), arg_types, pointee).lower()
        points = helion_points(kernel, ir, settings)
        estimates = tuple(estimate(ir, p, t) for p in points for t in targets)
        out.append(KernelAnalysis(kernel, ir, tuple(points), estimates))
    return out
