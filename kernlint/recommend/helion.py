"""Recommended `helion.Config`s: search with kernlint's estimate, rank with the Triton recommender's time model,
write them to the same config store, and apply them through Helion's own configuration surface.

    from kernlint.recommend.helion import load_kernel, recommend, write_entries
    k = load_kernel("examples/helion_matmul.py", "helion_matmul")
    rec = recommend(k, resolve_target("h100"), {"m": 4096, "n": 4096, "k": 4096})
    write_entries("kernlint.lock.json", [entry(k, rec)])
    kernlint.shim.helion.apply(helion_matmul, "kernlint.lock.json", target="h100")   # where the kernel runs

Search space (no author space to learn from, unlike Triton autotune lists): per `hl.tile` block-size slot,
powers of two — 16..256 for a dimension a dot consumes (KL302 below 16), 1..next_pow2(extent) otherwise;
per full-extent reduction dimension `reduction_loops` ∈ {None (persistent), 128 .. next_pow2(extent)/2};
`num_warps` ∈ 1..32; `num_stages` 1..7 with a dot, 1..3 with a device loop, else 1 (the Triton recommender's
rule). Combos whose non-dot blocks × reduction widths exceed 2^16 elements are skipped before estimating (they cannot fit
a register file). A config is dropped when the estimate says it is infeasible (shared/tensor memory over the
limit, no CTA fits an SM, register demand over 2x the budget: `kernlint.recommend.core._evaluate`'s rules).

Ranking: `kernlint.recommend.model.score` (the same model as `kernlint recommend`) on work from
`model.kernel_work`. The host facts the Triton path reads from a launch site come from the Helion source:
CTAs = product over the outermost `hl.tile` of cdiv(extent, block) (`hl.grid`: the extent), device-loop trip
counts = cdiv(extent, block). A looped reduction (`reduction_loops=[R]`) is lowered as one R-wide chunk, so
its bytes/ops/round trips are multiplied by cdiv(extent, R). Extents come from the bucket (`m=4096,...`);
one the bucket does not give is DEFAULT_SHAPE.

Apply (Helion >= 1.x, helion/runtime/kernel.py): `Kernel.configs` is the decorator's `config=`/`configs=`
list; with exactly one config Helion runs it without autotuning (`BoundKernel._user_provided_config`), with
several it autotunes among them. `apply(..., mode="replace")` makes the recommendation the only config
("pinned"); `mode="seed"` puts it first and keeps the author's configs for the autotuner. Either way the
kernel's bound-kernel cache is reset (`Kernel.reset()`) so the next call compiles the new config. For one
shape, `apply(..., args=(x, y))` calls `kernel.bind(args).set_config(cfg)` instead (Helion's per-binding pin).
Helion is imported only by `apply`; everything else is static.
"""
from __future__ import annotations

import ast
import dataclasses
import itertools
import logging
import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kernlint.ir.nodes import OpKind

log = logging.getLogger("kernlint.recommend.helion")

DEFAULT_SHAPE = 4096
WARPS = (1, 2, 4, 8, 16, 32)
DOT_BLOCKS = (16, 32, 64, 128, 256)
MAX_TILE_ELEMS = 1 << 16
RLOOP_MIN = 128
HELION_KEYS = ("block_sizes", "reduction_loops")


@dataclass
class HelionTarget:
    """A Helion kernel read statically: the frontend's kernel and IR plus the host facts the ranking needs."""

    kernel: Any                          # kernlint.frontend.helion.HelionKernel
    ir: Any                              # kernlint.lowering.helion_lower.HelionIR
    points: tuple[Any, ...]              # the author's config points
    source: str                          # the kernel's text from `def` (what the store hashes)
    grid: list[tuple[str, ast.expr]]     # (slot symbol or "grid", extent expression) of the outermost loop
    loops: dict[int, tuple[ast.expr, str]]   # inner device loop line → (extent, slot symbol)
    dot_slots: frozenset[str]


# ------------------------------------------------------------------------------------------------ reading
def load_kernel(path: str, qualname: str, arg_types: Mapping[str, str] | None = None) -> HelionTarget:
    import os

    from kernlint.pipeline.helion import analyse_helion_file
    from kernlint.recommend.cli import kernel_source
    from kernlint.pipeline.settings import Settings
    rel = os.path.relpath(path)
    path = rel if not rel.startswith("..") else path   # module names like the CLI's (paths from the cwd)
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    settings = Settings(arg_types=dict(arg_types or {}))
    found = [k for k in analyse_helion_file(path, text, (), settings) if k.jit.qualname == qualname]
    if not found:
        raise LookupError(f"{path}: no @helion.kernel named {qualname!r}")
    ka = found[0]
    src = kernel_source(path, ka.jit.line)
    grid, loops = _host_facts(text, ka.jit, ka.ir)
    dots: set[str] = set()
    for op, _ in ka.ir.walk():
        if op.kind == OpKind.DOT:  # the M, N, K of the dot (a bmm's batch tile is not an MMA dimension)
            dot = op.dot_attrs()
            for d in (dot.M, dot.N, dot.K):
                dots |= d.free_symbols() if hasattr(d, "free_symbols") else set()
    return HelionTarget(ka.jit, ka.ir, ka.points, src, grid, loops, frozenset(dots))


def _host_facts(text: str, kernel: Any, ir: Any) -> tuple[list[tuple[str, ast.expr]], dict[int, tuple[ast.expr, str]]]:
    """The grid loop's (slot, extent) pairs and every inner device loop's (extent, slot), from the kernel's ast."""
    fn = next((n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.FunctionDef) and n.name == kernel.name
               and any(d.lineno == kernel.decorator_line for d in n.decorator_list)), None)
    if fn is None:
        return [], {}
    registered: dict[str, int] = {}   # host name → line of its hl.register_block_size
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and isinstance(node.value, ast.Call) and _callee(node.value) == "register_block_size":
            registered[node.targets[0].id] = node.lineno
    by_line: dict[int, list[Any]] = {}
    for s in ir.slots:
        by_line.setdefault(s.line, []).append(s)

    def slots_of(loop: ast.For) -> list[tuple[str, ast.expr]]:
        call = loop.iter
        assert isinstance(call, ast.Call)
        ends = call.args[1] if len(call.args) >= 2 else call.args[0] if call.args else None
        extents = list(ends.elts) if isinstance(ends, (ast.List, ast.Tuple)) else [ends]
        block = next((k.value for k in call.keywords if k.arg == "block_size"), None)
        if _callee(call) == "grid":
            return [("grid", e) for e in extents if e is not None]
        own = [s for s in by_line.get(loop.lineno, [])]
        out: list[tuple[str, ast.expr]] = []
        for i, e in enumerate(extents):
            if e is None:
                continue
            blk = block.elts[i] if isinstance(block, (ast.List, ast.Tuple)) and i < len(block.elts) else block
            if isinstance(blk, ast.Name) and blk.id in registered:
                reg = by_line.get(registered[blk.id], [])
                out.append((reg[0].symbol if reg else "?", e))
            elif own:
                s = own.pop(0)
                out.append((s.symbol if s.fixed is None else str(s.fixed), e))
        return out

    grid: list[tuple[str, ast.expr]] = []
    loops: dict[int, tuple[ast.expr, str]] = {}

    def walk(stmts: list[ast.stmt], depth: int) -> None:
        for st in stmts:
            if isinstance(st, ast.For) and isinstance(st.iter, ast.Call) and _callee(st.iter) in ("tile", "grid"):
                pairs = slots_of(st)
                if depth == 0:
                    grid.extend(pairs)
                elif pairs:
                    sym, ext = pairs[0]
                    loops[st.lineno] = (ext, sym)
                walk(st.body, depth + 1)
            else:
                for field_ in ("body", "orelse", "finalbody"):
                    walk(getattr(st, field_, []) or [], depth)
    walk(fn.body, 0)
    return grid, loops


def _callee(call: ast.Call) -> str | None:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None


# ------------------------------------------------------------------------------------------------ estimate
def point(target: HelionTarget, config: Mapping[str, Any], extents: Mapping[str, Any], origin: str = "cli") -> Any:
    from kernlint.frontend.helion import HelionConfig
    from kernlint.pipeline.helion import point_for
    known = {k: v for k, v in extents.items() if k in target.ir.extents}
    return point_for(target.kernel, target.ir, HelionConfig(dict(config), target.kernel.decorator_line),
                     known, origin)


def estimate_config(target: HelionTarget, config: Mapping[str, Any], extents: Mapping[str, Any], spec: Any) -> Any:
    """kernlint's estimate for one `helion.Config` (as a dict) at the given extents on one GPU."""
    from kernlint.analysis.estimate import estimate
    return estimate(target.ir, point(target, config, extents), spec)


# ------------------------------------------------------------------------------------------------ search
def _np2(n: int) -> int:
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


def _extent_value(expr: ast.expr | None, env: Mapping[str, Any]) -> int | None:
    from kernlint.frontend.host_facts import SafeEval
    v = SafeEval(env)(expr) if expr is not None else None
    return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 else None


def _extent_env(target: HelionTarget, bucket: Mapping[str, Any]) -> dict[str, Any]:
    env = {k: v for k, v in bucket.items()}
    for name in target.ir.extents:
        env.setdefault(name, DEFAULT_SHAPE)
    return env


def _slot_extent(target: HelionTarget, symbol: str, env: Mapping[str, Any]) -> int | None:
    for sym, ext in target.grid:
        if sym == symbol:
            return _extent_value(ext, env)
    for ext, sym in target.loops.values():
        if sym == symbol:
            return _extent_value(ext, env)
    slot = next((s for s in target.ir.slots if s.symbol == symbol), None)
    return _extent_value(ast.parse(slot.extent, mode="eval").body, env) if slot else None


def space(target: HelionTarget, bucket: Mapping[str, Any]) -> tuple[list[list[int]], list[list[int | None]]]:
    from kernlint.recommend.core import pow2_between
    env = _extent_env(target, bucket)
    blocks: list[list[int]] = []
    for s in target.ir.tunable_slots:
        ext = _slot_extent(target, s.symbol, env)
        hi = _np2(ext) if ext else 1024
        if s.symbol in target.dot_slots:
            vals = [b for b in DOT_BLOCKS if b <= max(16, hi)]
        else:
            vals = pow2_between(1, min(hi, 16384))
        blocks.append(vals)
    rloops: list[list[int | None]] = []
    for r in target.ir.rdims:
        ext = r.extent.evaluate(env)
        vals: list[int | None] = [None]
        if isinstance(ext, int) and ext > RLOOP_MIN:
            vals += pow2_between(RLOOP_MIN, _np2(ext) // 2)
        rloops.append(vals)
    return blocks, rloops


def _stages(target: HelionTarget) -> list[int]:
    has_dot = any(op.kind == OpKind.DOT for op, _ in target.ir.walk())
    has_loop = any(op.kind == OpKind.FOR for op, _ in target.ir.walk())
    return list(range(1, 8)) if has_dot else ([1, 2, 3] if has_loop else [1])


def _work(target: HelionTarget, config: Mapping[str, Any], env: Mapping[str, Any], est: Any, ns: int) -> tuple[Any, int | None]:
    from kernlint.recommend.model import kernel_work
    from kernlint.frontend.host_facts import KernelSource, LoopFacts

    values = {**env, **est.config.constexprs}
    src = KernelSource(loops={line: LoopFacts(ast.Constant(0), ext, _name_or_const(sym), {})
                              for line, (ext, sym) in target.loops.items()})
    work = kernel_work(target.ir, src, values, ns, est.config.num_warps)
    scale = 1
    for j, r in enumerate(target.ir.rdims):
        loops = config.get("reduction_loops") or []
        chunk = loops[j] if j < len(loops) else None
        ext = r.extent.evaluate(values)
        if isinstance(chunk, int) and isinstance(ext, int) and chunk < ext:
            scale *= -(-ext // chunk)
    if scale > 1:
        work = dataclasses.replace(work, bytes=work.bytes * scale, dot_bytes=work.dot_bytes * scale,
                                   ops=work.ops * scale, flops=work.flops * scale, serial=work.serial * scale)
    ctas: int | None = 1
    for sym, ext in target.grid:
        e = _extent_value(ext, values)
        b = values.get(sym) if sym != "grid" else 1
        if sym.isdigit():
            b = int(sym)
        if e is None or not isinstance(b, int):
            ctas = None
            break
        ctas *= -(-e // b)
    return work, ctas


def _name_or_const(sym: str) -> ast.expr:
    return ast.Constant(int(sym)) if sym.isdigit() else ast.Name(sym)


def evaluate(target: HelionTarget, config: dict[str, Any], spec: Any, bucket: Mapping[str, Any],
             rejected: Counter[str] | None = None) -> Any:
    """One candidate: estimate, feasibility (the Triton recommender's rules), score. None when infeasible."""
    from kernlint.analysis.estimate import estimate
    from kernlint.recommend.core import Candidate, infeasible_reason
    from kernlint.recommend.model import score

    env = _extent_env(target, bucket)
    p = point(target, config, env)
    est = estimate(target.ir, p, spec)
    why = infeasible_reason(est)
    if why:
        if rejected is not None:
            rejected[why] += 1
        return None
    work, ctas = _work(target, config, env, est, p.num_stages)
    kw = {k: config[k] for k in HELION_KEYS if k in config}
    return Candidate(kw, p.num_warps, p.num_stages, est, score(est, work, spec, ctas))


def recommend(target: HelionTarget, spec: Any, bucket: Mapping[str, Any], top_k: int = 5) -> Any:
    """Ranked feasible `helion.Config`s for one GPU and shape bucket (a kernlint.recommend.core.Recommendation)."""
    from kernlint.recommend.core import Recommendation
    from kernlint.recommend.ranking import finish, incumbent, kernel_kind

    rec = Recommendation(f"{target.kernel.module}.{target.kernel.qualname}", spec.key, dict(bucket))
    if target.ir.unmodelled:
        rec.reason = "the model does not cover: " + "; ".join(u.construct for u in target.ir.unmodelled[:3])
    blocks, rloops = space(target, bucket)
    env = _extent_env(target, bucket)
    rwidth = [[(_np2(r.extent.evaluate(env)) if v is None and isinstance(r.extent.evaluate(env), int) else v or 1)
               for v in vals] for r, vals in zip(target.ir.rdims, rloops)]
    cands = []
    for bs in itertools.product(*blocks):
        for ri, rl in enumerate(itertools.product(*rloops)):
            widths = [dict(zip(vals, ws))[v] for vals, ws, v in zip(rloops, rwidth, rl)]
            rows = [b for b, sl in zip(bs, target.ir.tunable_slots) if sl.symbol not in target.dot_slots]
            if math.prod(rows) * math.prod(widths) > MAX_TILE_ELEMS:
                rec.rejected["tile over 2^16 elements"] += 1
                continue
            cfg: dict[str, Any] = {"block_sizes": list(bs)}
            if any(v is not None for v in rl):   # all None is Helion's default (persistent): left out
                cfg["reduction_loops"] = list(rl)
            for nw in WARPS:
                for ns in _stages(target):
                    rec.searched += 1
                    c = evaluate(target, {**cfg, "num_warps": nw, "num_stages": ns}, spec, bucket, rec.rejected)
                    if c is not None:
                        cands.append(c)
    if target.kernel.helion.configs:
        authors = [a for p in target.points if not p.unknown
                   if (a := evaluate(target, author_config(target, p), spec, bucket)) is not None]
    else:   # no config in the decorator: Helion's default runs (autotune_effort="none") or seeds its autotuner
        default, rec.author_note = default_incumbent(target, spec, bucket)
        authors = [a for a in [evaluate(target, default, spec, bucket)] if a is not None] if default else []
    rec.author, rec.author_floor_us = incumbent(authors)
    rec.author_configs = authors
    rec.kind = kernel_kind(target.ir)
    if target.ir.unmodelled:   # as for Triton kernels (core.model_doubts): the author's config stays
        rec.doubts = ["the model does not cover " + ", ".join(f"line {u.line}: {u.construct}"
                                                             for u in target.ir.unmodelled[:3])]
    return finish(rec, cands, top_k)


# Helion 1.5 promotes a device heuristic's seed to the default config (autotuner_heuristics/triton.py:
# TritonH100MatmulHeuristic, TritonB200*MatmulHeuristic, TritonPointwiseSeedHeuristic, TritonReductionHeuristic,
# each `promote_seed_to_default`) on these compute capabilities; elsewhere the default is ConfigSpec's own.
HEURISTIC_DEFAULT_CAPABILITIES = (90, 100)


def default_config(target: HelionTarget, bucket: Mapping[str, Any]) -> dict[str, Any] | str:
    """Helion's own default config for this kernel at the bucket's extents (pipeline.helion.helion_default_config:
    `ConfigSpec.default_config()` where no device heuristic promotes a seed), or why it is not known."""
    from kernlint.pipeline.helion import helion_default_config
    env = _extent_env(target, bucket)
    return helion_default_config(target.ir, env, lambda sym: _slot_extent(target, sym, env))


def default_incumbent(target: HelionTarget, spec: Any, bucket: Mapping[str, Any]) -> tuple[dict[str, Any] | None, str]:
    """The incumbent of a kernel without configs: Helion's default config (what `autotune_effort="none"` runs),
    or None and why it is not known; the second item is the note on the `author:` line."""
    cfg = default_config(target, bucket)
    if isinstance(cfg, str):
        return None, f"Helion's default config is not known: {cfg}"
    effort = target.kernel.helion.settings.get("autotune_effort")
    if spec.capability in HEURISTIC_DEFAULT_CAPABILITIES:
        return None, (f"on {spec.arch} Helion's default is a device heuristic's seed (matmul, pointwise or "
                      f"reduction), which kernlint does not model; elsewhere it would be {_fields_text(cfg)}")
    tuned = "" if effort == "none" else "; Helion autotunes from it at the first call unless autotune_effort='none'"
    return {k: v for k, v in cfg.items() if not (k == "reduction_loops" and not any(v))}, \
        "Helion's default config" + tuned


def _fields_text(cfg: Mapping[str, Any]) -> str:
    return "helion.Config(" + ", ".join(f"{k}={v!r}" for k, v in cfg.items()) + ")"


def author_config(target: HelionTarget, p: Any) -> dict[str, Any]:
    """A ConfigPoint of the author's back to helion.Config fields."""
    cx = p.constexprs
    cfg: dict[str, Any] = {"block_sizes": [cx[s.symbol] for s in target.ir.tunable_slots if s.symbol in cx],
                           "num_warps": p.num_warps, "num_stages": p.num_stages}
    if target.ir.rdims:
        raw = next((c.values.get("reduction_loops") for c in target.kernel.helion.configs
                    if c.line == p.line), None)
        cfg["reduction_loops"] = list(raw) if isinstance(raw, (list, tuple)) else [None] * len(target.ir.rdims)
    return cfg


def helion_config_kwargs(c: Any) -> dict[str, Any]:
    """A ranked Candidate as `helion.Config(**kwargs)` keywords."""
    return {**c.constexprs, "num_warps": c.num_warps, "num_stages": c.num_stages}


def config_text(c: Any) -> str:
    return "helion.Config(" + ", ".join(f"{k}={v!r}" for k, v in helion_config_kwargs(c).items()) + ")"


# The config-store and codemod halves live in helion_apply.py; re-exported for callers of this module.
# Applying an entry at run time is kernlint.shim.helion's.
from kernlint.recommend.helion_apply import (  # noqa: E402, F401
    cli_entries, entry, fix_source, kernel_id_for, write_entries,
)
