"""The Helion pipeline: Helion configs → kernlint ConfigPoints, and the per-file entry point
`analyse_helion_file` (frontend facts → lowering → estimates), which `kernlint.pipeline.api` runs beside the Triton one.

`helion.Config.block_sizes[i]` binds `block_size_<i>` (see kernlint.lowering.helion_lower for the order),
`reduction_loops[j]` binds `rdim_<j>` (None: persistent, `next_power_of_2(extent)` wide), `num_warps` and
`num_stages` are Triton launch options. Helion's own defaults differ from Triton's: `num_warps=4`,
`num_stages=1` (DEFAULT_NUM_WARPS / DEFAULT_NUM_STAGES in helion/autotuner/config_spec.py).
"""
from __future__ import annotations

from collections.abc import Callable
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


def helion_default_blocks(ir: HelionIR, rvalues: dict[str, Any],
                          extent_of: Callable[[str], int | None] | None = None) -> list[int] | str:
    """Helion's default block size per tunable tile (helion/autotuner/config_spec.py, BlockSizeSpec._fragment):
    32 with at most two tiles and reduction dimensions of at most 128 elements together (each rounded up to a
    power of two, persistent); with three or more tiles and a reduction, the largest power of two whose
    tiles × reduction stay within 32768 elements; else 16 up to 256 reduction elements, 1 above. Each is then
    clamped to its dimension (`next_power_of_2(extent)`, where `extent_of` knows it) and raised to the dot's
    minimum for a dot's K tile, even above the dimension (Triton's `min_dot_size` on NVIDIA: K >= 16 for
    16-bit operands, 8 for 32-bit, 32 for 8-bit; M and N have none)."""
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
    k_min = _dot_k_minimum(ir)
    out: list[int] = []
    for s in ir.tunable_slots:
        extent = extent_of(s.symbol) if extent_of is not None else None
        cap = _next_pow2(extent) if extent is not None else None
        block = min(default, cap) if cap is not None else default
        if s.symbol in k_min:   # the minimum raises the tile's upper bound too (BlockSizeSpec.update_min)
            block = max(block, k_min[s.symbol])
        out.append(block)
    return out


def _dot_k_minimum(ir: HelionIR) -> dict[str, int]:
    """Block-size symbol of a dot's K tile → the K Triton requires for the operands' width."""
    from kernlint.ir.nodes import OpKind
    out: dict[str, int] = {}
    for op, _ in ir.walk():
        if op.kind != OpKind.DOT:
            continue
        dot = op.dot_attrs()
        k = dot.K
        dtype = dot.a_dtype or (op.operands[0].dtype if op.operands else "fp16")
        bits = 8 if dtype in ("fp8e4nv", "fp8e5", "i8", "u8") else 32 if dtype in ("fp32", "i32") else 16
        for sym in (k.free_symbols() if hasattr(k, "free_symbols") else ()):
            out[sym] = max(out.get(sym, 1), {8: 32, 16: 16, 32: 8}[bits])
    return out


def slot_extents(ir: HelionIR, env: dict[str, Any]) -> Callable[[str], int | None]:
    """A tile's extent where its source text is an extent the environment gives (`m`, `x.size(1)`)."""
    by_symbol = {s.symbol: s.extent for s in ir.slots}

    def extent_of(symbol: str) -> int | None:
        v = env.get(by_symbol.get(symbol, ""))
        return v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else None
    return extent_of


def helion_default_config(ir: HelionIR, env: dict[str, Any],
                          extent_of: Callable[[str], int | None] | None = None) -> dict[str, Any] | str:
    """Helion's default config (`ConfigSpec.default_config()` when no device heuristic promotes a seed: what
    `autotune_effort="none"` runs, and the autotuner's reference config) as `helion.Config` fields, or why it
    cannot be known statically. Persistent reductions (`reduction_loops` None), 4 warps, 1 stage; Helion's
    other defaults (`indexing="pointer"`, `pid_type="flat"`) are what the lowering assumes."""
    rvals, unknown = rdim_values(ir, env, [])
    if unknown:
        return next(iter(unknown.values()))
    blocks = helion_default_blocks(ir, rvals, extent_of or slot_extents(ir, env))
    if isinstance(blocks, str):
        return blocks
    cfg: dict[str, Any] = {"block_sizes": blocks}
    if ir.rdims:
        cfg["reduction_loops"] = [None] * len(ir.rdims)
    return {**cfg, "num_warps": HELION_NUM_WARPS, "num_stages": HELION_NUM_STAGES}


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
        blocks = helion_default_blocks(ir, rvals, slot_extents(ir, env)) if blocks is None else str(blocks.reason)
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
