"""Search a kernel's config space with `estimate()` and rank by the time model (kernlint.recommend.model).

The space is learnt, not invented (DESIGN.md §8: "stay inside [the author's space] unless the kernel proves
otherwise"): tile constexprs range over powers of two between the smallest and largest value the author's
configs use, pairwise relations every author config satisfies (BLOCK_M ≥ BLOCK_N, BLOCK_M == BLOCK_N) are
kept, and `tl.static_assert` conditions and the launching function's `assert`s are evaluated per candidate.
Constexprs that do not shape a tile (GROUP_M, CAUSAL) keep the author's value. A block size the host
computes at the launch (softmax's `next_power_of_2(n_cols)`) is only searched when a loop steps by it (a
looped reduction accepts any block); otherwise it must come from the bucket (`--shape BLOCK_SIZE=...`) or
there is no recommendation. A candidate with a constexpr value the author never uses (a power of two between
the author's values, a looped block other than the launch's) is marked `in_author_space=False`;
`recommend --verify` (kernlint.recommend.verify) checks those against the author's config.
"""
from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kernlint.analysis.configs import ConfigPoint
from kernlint.analysis.estimate import KernelEstimate, estimate, shape_symbols
from kernlint.hardware.specs import GpuSpec
from kernlint.recommend.model import Score, kernel_work, score
from kernlint.recommend.source import KernelSource, check_asserts, evaluate_grid, read_kernel_source

WARPS = (1, 2, 4, 8, 16, 32)
DEFAULT_SHAPE = 4096          # a host size the bucket does not name
UNKNOWN_BUCKETS = (1024, 4096, 16384)
# An author's autotuned config is the incumbent: it is replaced only when the model predicts a gain larger
# than its own ranking error. On the H200 (benchmarks/gpu/h200_results_run7.json) configs the model ranked
# within 5% of each other were as often slower as faster (swiglu: the author's 2048·w4 modelled equal to the
# pick 1024·w2 and measured 3% faster), while real wins over the author (matmul 1.1-1.5×) were modelled as
# 10-40% gains.
AUTHOR_MARGIN = 0.05
# Modelled times closer than this are a tie (`_tie_key`; CPU replay: same picks for 0.1-0.5 %, not at 1 %)
NEAR_TIE = 0.003
TIGHT_REGISTERS = 0.85


@dataclass
class Candidate:
    constexprs: dict[str, Any]
    num_warps: int
    num_stages: int
    estimate: KernelEstimate
    score: Score
    in_author_space: bool = True
    outside: dict[str, str] = field(default_factory=dict)   # constexpr → the author's values (rationale)
    verified: str | None = None          # `--verify`: how this outside-space config was checked

    def space_note(self) -> str:
        """'' inside the author's space; else which constexprs leave it and whether that was verified."""
        if self.in_author_space:
            return ""
        what = ", ".join(f"{k}={self.constexprs.get(k)} (author: {v})" for k, v in self.outside.items())
        return f"outside the author's space: {what or 'constexprs'}; " + (self.verified or "not verified")

    def config(self) -> dict[str, Any]:
        return {"kwargs": dict(self.constexprs), "num_warps": self.num_warps, "num_stages": self.num_stages}

    def label(self) -> str:
        kv = ", ".join(f"{k}={v}" for k, v in self.constexprs.items())
        return f"{kv + ', ' if kv else ''}num_warps={self.num_warps}, num_stages={self.num_stages}"


@dataclass
class Recommendation:
    kernel: str
    target: str
    bucket: dict[str, int]
    ranked: list[Candidate] = field(default_factory=list)
    author: Candidate | None = None
    reason: str | None = None            # set when there is no recommendation
    searched: int = 0
    rejected: Counter[str] = field(default_factory=Counter)
    author_tuned: bool = False           # the author's configs are an autotune list (tuned on some GPU)
    kept_author: str | None = None       # why the author's tuned config stays first
    notes: list[str] = field(default_factory=list)   # `--verify`: what was verified, dropped or not verified


@dataclass
class Space:
    tunable: dict[str, list[int]]        # constexpr → candidate values
    fixed: dict[str, Any]                # constexprs kept at one value
    relations: list[tuple[str, str, str]]  # (a, op, b) every author config satisfies
    stages: list[int]
    author_points: list[ConfigPoint]
    reason: str | None = None
    # tunable constexpr → the values the author uses: every value of an autotuned tile (the search also
    # tries the powers of two between them, which the author never ran), or for a block the launch site
    # computes, its value at this bucket (empty if that expression does not evaluate). A candidate with a
    # value outside these is outside the author's space (Candidate.in_author_space).
    author_values: dict[str, frozenset[int]] = field(default_factory=dict)


def _pow2_between(lo: int, hi: int) -> list[int]:
    out, v = [], 1
    while v <= hi:
        if v >= lo:
            out.append(v)
        v *= 2
    return out


def learn_space(kernel: Any, src: KernelSource, bucket: Mapping[str, Any]) -> Space:
    ir = kernel.ir
    tiles = shape_symbols(ir)
    known = [p for p in kernel.points if not p.unknown]
    author = [p for p in kernel.points if p.origin in ("autotune", "launch", "default")]
    tunable: dict[str, list[int]] = {}
    fixed: dict[str, Any] = {}
    author_values: dict[str, frozenset[int]] = {}
    loop_steps = {ast_name(lf.step) for lf in src.loops.values()} - {None}
    for name in ir.constexprs:
        if name in bucket:
            fixed[name] = bucket[name]
            continue
        vals = [p.constexprs[name] for p in known if name in p.constexprs]
        ints = [v for v in vals if isinstance(v, int) and not isinstance(v, bool) and v > 0]
        if name in tiles and ints and len(ints) == len(vals) and all(v & (v - 1) == 0 for v in ints) \
                and any(p.origin == "autotune" for p in known):
            tunable[name] = _pow2_between(min(ints), max(ints))
            author_values[name] = frozenset(ints)
        elif name in tiles and name in loop_steps:
            # a looped block: any power of two works; wider than the loop's extent only wastes lanes
            hi = 65536
            for lf in src.loops.values():
                if ast_name(lf.step) == name:
                    from kernlint.recommend.source import SafeEval
                    stop = SafeEval(bucket, lf.locals)(lf.stop)
                    if isinstance(stop, (int, float)) and stop > 0:
                        hi = min(hi, 1 << max(0, int(stop) - 1).bit_length())
            tunable[name] = _pow2_between(min(128, hi), hi)
            launched = src.launch_value(name, bucket)
            author_values[name] = frozenset([launched]) if isinstance(launched, int) else frozenset()
        elif vals:
            fixed[name] = Counter(map(repr, vals)).most_common(1)[0][0]
            fixed[name] = next(v for v in vals if repr(v) == fixed[name])
        elif name in tiles:
            return Space({}, {}, [], [], author,
                         f"`{name}` shapes a tile but its value is computed at the launch site; "
                         f"pass it in the bucket (--shape {name}=...)")
    rel: list[tuple[str, str, str]] = []
    auto = [p for p in known if p.origin == "autotune"]
    for a, b in itertools.permutations(tunable, 2):
        pairs = [(p.constexprs.get(a), p.constexprs.get(b)) for p in auto]
        if len(pairs) < 2 or any(not isinstance(x, int) or not isinstance(y, int) for x, y in pairs):
            continue
        if all(x == y for x, y in pairs):
            if a < b:
                rel.append((a, "==", b))
        elif all(x >= y for x, y in pairs):
            rel.append((a, ">=", b))
    has_loop = bool(src.loops) or any(op.kind == "for" for op, _ in ir.walk())
    has_dot = any(op.kind == "dot" for op, _ in ir.walk())
    stages = list(range(1, 8)) if has_dot else ([1, 2, 3] if has_loop else [1])
    return Space(tunable, fixed, rel, stages, author, None, author_values)


def outside_author_space(values: Mapping[str, Any], space: Space) -> dict[str, str]:
    """Constexprs of `values` the author never uses: name → the author's values, for the rationale.

    Only constexprs count: num_warps and num_stages change how the same program is scheduled, never what it
    computes, so any value of them is inside the author's space. Fixed constexprs are the author's (or the
    bucket's) value by construction."""
    out: dict[str, str] = {}
    for name, allowed in space.author_values.items():
        if values.get(name) not in allowed:
            out[name] = "/".join(map(str, sorted(allowed))) or "computed at the launch"
    return out


def ast_name(node: Any) -> str | None:
    import ast
    return node.id if isinstance(node, ast.Name) else None


def _relations_ok(values: Mapping[str, Any], rel: list[tuple[str, str, str]]) -> bool:
    for a, op, b in rel:
        if op == "==" and values[a] != values[b]:
            return False
        if op == ">=" and values[a] < values[b]:
            return False
    return True


def infeasible_reason(est: Any) -> str | None:
    """Why a config cannot be recommended (None: it can), shared by the Triton and Helion searches."""
    if not est.estimated:
        return "not modelled"
    if est.smem_over:
        return "shared memory over the limit"
    if est.tmem_over:
        return "tensor memory over the limit"
    if est.occupancy is None or est.occupancy.ctas_per_sm == 0:
        return "does not fit on an SM"
    if est.registers is not None and est.registers.pressure > 2.0:
        return "register demand over 2× the budget"
    return None


def _evaluate(kernel: Any, src: KernelSource, spec: GpuSpec, values: dict[str, Any], nw: int, ns: int,
              bucket: Mapping[str, Any], rejected: Counter[str] | None = None) -> Candidate | None:
    point = ConfigPoint(values, nw, ns, "cli", kernel.jit.line)
    est = estimate(kernel.ir, point, spec)
    why = infeasible_reason(est)
    if why:
        if rejected is not None:
            rejected[why] += 1
        return None
    env = {**bucket, **values}
    work = kernel_work(kernel.ir, src, env, ns, nw)
    ctas = evaluate_grid(src, env)
    return Candidate(values, nw, ns, est, score(est, work, spec, ctas))


def bucket_env(kernel: Any, src: KernelSource, bucket: Mapping[str, Any]) -> dict[str, Any]:
    """Fill names the grid/loops need but the bucket does not give with DEFAULT_SHAPE."""
    env = dict(bucket)
    import ast
    names: set[str] = set()
    for expr, _ in src.grids:
        names |= {n.id for n in ast.walk(expr) if isinstance(n, ast.Name)}
    loop_names: set[str] = set()
    bound: set[str] = set()   # kernel locals in loop bounds: trip_count follows them to their definitions
    for lf in src.loops.values():
        todo = [n.id for e in (lf.start, lf.stop, lf.step) if e is not None for n in ast.walk(e)
                if isinstance(n, ast.Name)]
        seen: set[str] = set()
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            if name in lf.locals:
                # a local (`hi = N_CTX` in attention's inner loop), followed through locals it is built
                # from; a default here would shadow its definition (2 × the trips at N_CTX = 2048)
                bound.add(name)
                todo += [n.id for x in lf.locals[name] for n in ast.walk(x) if isinstance(n, ast.Name)]
            else:
                loop_names.add(name)
    params = {p.name for p in kernel.jit.params if not p.is_constexpr}
    for n in names | params | (loop_names - bound):
        if n not in env and n not in kernel.ir.constexprs and not n.startswith(("stride", "META")) \
                and n not in ("triton", "tl", "grid", "lambda"):
            env[n] = DEFAULT_SHAPE
    return env


def recommend(kernel: Any, spec: GpuSpec, bucket: Mapping[str, Any], top_k: int = 5,
              src: KernelSource | None = None) -> Recommendation:
    jit = kernel.jit
    rec = Recommendation(jit.full_name, spec.key, dict(bucket))
    if src is None:
        src = read_kernel_source(jit.path, jit.name)
    env = bucket_env(kernel, src, bucket)
    space = learn_space(kernel, src, bucket)
    if space.reason:
        rec.reason = space.reason
        return rec
    if kernel.ir.unmodelled:
        rec.reason = "the model does not cover: " + "; ".join(u.construct for u in kernel.ir.unmodelled[:3])
    names = list(space.tunable)
    cands: list[Candidate] = []
    for combo in itertools.product(*(space.tunable[n] for n in names)):
        values = {**space.fixed, **dict(zip(names, combo))}
        if not _relations_ok(values, space.relations):
            rec.rejected["outside the author's relations"] += 1
            continue
        bad = check_asserts(src, values)
        if bad:
            rec.rejected[bad] += 1
            continue
        outside = outside_author_space(values, space)
        for nw in WARPS:
            for ns in space.stages:
                rec.searched += 1
                c = _evaluate(kernel, src, spec, values, nw, ns, env, rec.rejected)
                if c is not None:
                    c.in_author_space = not outside
                    c.outside = outside
                    cands.append(c)
    authors = []
    for p in space.author_points:
        if not p.unknown:
            vals = {**space.fixed, **{k: v for k, v in p.constexprs.items() if k in kernel.ir.constexprs}}
            a = _evaluate(kernel, src, spec, vals, p.num_warps, p.num_stages, env)
            if a:
                authors.append(a)
    # the author's config the model ranks first, by the same rule (ties included) as the search
    rec.author = rank(authors)[0] if authors else None
    rec.author_tuned = any(p.origin == "autotune" for p in space.author_points)
    return finish(rec, cands, top_k)


def finish(rec: Any, cands: list[Candidate], top_k: int) -> Any:
    """Rank the feasible candidates into `rec` (or say why none fits); shared by the Triton and Helion searches."""
    if not cands:
        rec.reason = rec.reason or ("no config fits: " + ", ".join(f"{k} ×{v}" for k, v in rec.rejected.items()))
        return rec
    rec.ranked = rank(cands)[:top_k]
    author = getattr(rec, "author", None)
    if getattr(rec, "author_tuned", False) and author is not None and rec.ranked \
            and _rank_key(author)[0] is False and rec.ranked[0].score.time_us > author.score.time_us * (1 - AUTHOR_MARGIN):
        gain = 1 - rec.ranked[0].score.time_us / author.score.time_us
        rec.kept_author = (f"the author's autotuned config is kept first: the best searched config is modelled "
                           f"only {gain:.0%} faster (< {AUTHOR_MARGIN:.0%}, within the model's ranking error)")
        same = (author.constexprs, author.num_warps, author.num_stages)
        rest = [c for c in rec.ranked if (c.constexprs, c.num_warps, c.num_stages) != same]
        rec.ranked = [author, *rest][:top_k]
    return rec


def _rank_key(c: Candidate) -> tuple[bool, float, float, int, int]:
    # A config the estimate says will spill ranks after every non-spilling one: the time model prices a
    # spilled byte far too cheaply for long rows (H200 run 4: cross_entropy 1024×128256 picked
    # BLOCK 65536·32 warps, est. 84 B/thread spilled, and ran at 0.669 of the best). Ties (same modelled
    # time) go to fewer spills, then fewer stages and warps: cheaper to compile, less risk.
    spill = c.estimate.registers.spill_bytes if c.estimate.registers else 0
    return (spill > 0, round(c.score.time_us, 3), spill, c.num_stages, c.num_warps)


def _tie_key(c: Candidate) -> tuple[Any, ...]:
    """Order among candidates the model cannot separate (modelled times within NEAR_TIE)."""
    # Near the cap, the register file is the limit the time model does not see: H200 runs 12-14, attention
    # 128×64 at 4 warps (226 of 255 registers) and at 8 warps (126) are modelled within 0.01 % of each other
    # and 4 warps measured 2-7 % slower on every shape (one warpgroup cannot overlap its softmax with the
    # next wgmma); runs 15-16 with 8 warps: attention 0.974 -> 0.995 of the best. So a config above 85 % of
    # its budget yields to a near-equal one below it.
    r = c.estimate.registers
    tight = bool(r and r.budget and r.allocated > TIGHT_REGISTERS * r.budget)
    if not c.score.wide_ties:
        # Otherwise dot kernels keep the model's order: preferring fewer stages moved six matmul shapes from
        # BLOCK_K 32 · 7 stages to 64 · 4 on 0.07 % modelled gaps, and over runs 13-16 the deeper pipeline
        # was ahead on five of them by 1.5-3 % (behind by 5 % on one, 256 × 16384 × 2048).
        return (tight, *_rank_key(c))
    # Streaming row kernels (no dot, no reduction inside a loop) prefer fewer stages (their loops are not
    # pipelined: stage variants are the same kernel) and more warps per CTA: CPU replay of H200 runs 1-15,
    # swiglu 0.952 -> 0.967 (4096 × 11000: 512 · 4 warps at 0.91 -> 1024 · 8 at 0.96, every run), layernorm
    # 0.947 -> 0.952, nothing worse; run 16 live: layernorm 8192 × 3072 0.904 -> 0.961, 4096 × 5000 0.886 ->
    # 0.911. With cross-entropy's in-loop reductions it lost 2.5 % (1024 × 128256: 4096 · 4 -> 8192 · 8
    # warps, every run): more warps, more barrier traffic per iteration.
    return (tight, c.num_stages, -c.num_warps, c.score.time_us)


def rank(cands: list[Candidate]) -> list[Candidate]:
    """Candidates best first: by `_rank_key`, then the leaders whose modelled times are within NEAR_TIE of the
    fastest (the model cannot separate them) re-ordered by `_tie_key`."""
    out = sorted(cands, key=_rank_key)
    if not out:
        return out
    spills, t0 = _rank_key(out[0])[0], out[0].score.time_us
    lead = [c for c in out if _rank_key(c)[0] == spills and c.score.time_us <= t0 * (1 + NEAR_TIE)]
    return sorted(lead, key=_tie_key) + out[len(lead):]


def buckets_for(kernel: Any, shapes: Mapping[str, int] | None) -> list[dict[str, int]]:
    """The user's shape, or (autotune key known, shapes unknown) one bucket per representative size."""
    if shapes:
        return [dict(shapes)]
    key = kernel.jit.autotune.key if kernel.jit.autotune else ()
    names = [k for k in key if k not in kernel.ir.constexprs]
    if not names:
        return [{}]
    return [{n: size for n in names} for size in UNKNOWN_BUCKETS]


def bucket_label(bucket: Mapping[str, Any]) -> str:
    return ",".join(f"{k}={_pow2_bucket(v)}" for k, v in sorted(bucket.items())) or "*"


def _pow2_bucket(v: Any) -> Any:
    if isinstance(v, int) and not isinstance(v, bool) and v > 0:
        return 1 << max(0, v - 1).bit_length()
    return v


def minimax(recs: list[Recommendation]) -> Candidate | None:
    """Shapes unknown: the config whose worst bucket is closest to that bucket's best (max ratio minimal)."""
    if not recs or any(not r.ranked for r in recs):
        return None
    table: dict[str, list[float]] = {}
    keep: dict[str, Candidate] = {}
    for r in recs:
        best = r.ranked[0].score.time_us
        for c in r.ranked:
            table.setdefault(c.label(), []).append(c.score.time_us / best)
            keep.setdefault(c.label(), c)
    full = {k: v for k, v in table.items() if len(v) == len(recs)}
    if not full:
        return recs[len(recs) // 2].ranked[0]
    best_label = min(full, key=lambda k: (max(full[k]), sum(full[k])))
    return keep[best_label]


def geomean(xs: list[float]) -> float:
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")
