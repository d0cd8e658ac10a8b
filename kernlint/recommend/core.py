"""Search a kernel's config space with `estimate()` and rank by the time model (kernlint.recommend.model).

The space is learnt, not invented (docs/design.md: stay inside the author's space unless the kernel proves
otherwise): tile constexprs range over powers of two between the smallest and largest value the author's
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

import dataclasses
import functools
import heapq
import itertools
import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kernlint.analysis.configs import ConfigPoint
from kernlint.analysis.estimate import KernelEstimate, estimate, shape_symbols
from kernlint.hardware.specs import GpuSpec
from kernlint.recommend.model import Score, Work, kernel_work, score, score_floor
from kernlint.recommend.ranking import NEAR_TIE, _equivalence_key, finish, incumbent, kernel_kind, rank
from kernlint.frontend.host_facts import KernelSource, check_asserts, evaluate_grid, read_kernel_source
from kernlint.ir.nodes import OpKind
from kernlint.ir.cache_keys import Analysis

WARPS = (1, 2, 4, 8, 16, 32)
DEFAULT_SHAPE = 4096          # a host size the bucket does not name
UNKNOWN_BUCKETS = (1024, 4096, 16384)
# A launch whose grid kernlint cannot evaluate is scored as if it wrote this much output (the same for every
# config, so they compare per byte written); 64 MiB is a 4096 × 8192 bf16 matrix, many waves on any GPU.
ASSUMED_OUTPUT_BYTES = 64 << 20


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
    # other num_stages values with the same estimate, listed once (ranking.collapse_stage_variants)
    equivalent_stages: tuple[int, ...] = ()

    def space_note(self) -> str:
        """'' inside the author's space; else which constexprs leave it and whether that was verified."""
        if self.in_author_space:
            return ""
        what = ", ".join(f"{k}={self.constexprs.get(k)} (author: {v})" for k, v in self.outside.items())
        return f"outside the author's space: {what or 'constexprs'}; " + (self.verified or "not verified")

    def stages_note(self) -> str:
        """'' unless other num_stages values were folded into this entry."""
        if not self.equivalent_stages:
            return ""
        values = ", ".join(map(str, self.equivalent_stages))
        return (f"num_stages {values} give the same estimate (no multi-buffered loop in the model): "
                f"listed once, with the fewest")

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
    kept_author: str | None = None       # why the author's config stays (the store then applies nothing)
    kind: str = "dot"                    # ranking.kernel_kind: which MODEL_ERROR applies
    doubts: list[str] = field(default_factory=list)   # why the time model cannot be trusted for this kernel
    author_configs: list[Candidate] = field(default_factory=list)   # every author config that evaluates
    author_floor_us: float | None = None  # modelled time of the author config the model ranks first
    author_note: str | None = None       # Helion: where the incumbent comes from (its default config), or why unknown
    notes: list[str] = field(default_factory=list)   # `--verify`: what was verified, dropped or not verified
    pruned: int = 0      # configs not estimated: their time floor ranks them below the top_k (core._search)


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


def pow2_between(lo: int, hi: int) -> list[int]:
    """Powers of two in [lo, hi]."""
    out, v = [], 1
    while v <= hi:
        if v >= lo:
            out.append(v)
        v *= 2
    return out


def learn_space(kernel: Any, src: KernelSource, bucket: Mapping[str, Any]) -> Space:
    ir = kernel.ir
    tiles = shape_symbols(ir)
    # a constexpr's values come from every config that gives it one: a flag a @triton.heuristics derives
    # (EVEN_K) is unknown in all of them, which must not hide the autotuned block sizes beside it
    given = [p for p in kernel.points if p.origin != "launch" or not p.unknown]
    author = [p for p in kernel.points if p.origin in ("autotune", "launch", "default")]
    tunable: dict[str, list[int]] = {}
    fixed: dict[str, Any] = {}
    author_values: dict[str, frozenset[int]] = {}
    loop_steps = {ast_name(lf.step) for lf in src.loops.values()} - {None}
    missing: list[str] = []   # tile constexprs the launch computes from sizes the bucket does not give
    # constexprs that size a tl.dot operand: Triton's frontend wants every dot dim >= 16 (min_dot_size), and
    # past 256 a dim is more than one MMA instruction (wgmma N <= 256) and its operands outgrow shared memory
    dot_dims: set[str] = set()
    for op, _ in ir.walk():
        if op.kind == OpKind.DOT:
            dot = op.dot_attrs()
            for expr in (dot.M, dot.N, dot.K):
                if hasattr(expr, "free_symbols"):
                    dot_dims |= expr.free_symbols()
    for name in ir.constexprs:
        if name in bucket:
            v = bucket[name]
            if name in tiles and isinstance(v, int) and not isinstance(v, bool) and (v <= 0 or v & (v - 1)):
                # `--shape BLOCK_SIZE=1000` was ranked and stored, a config `tl.arange` refuses to compile
                return Space({}, {}, [], [], author, f"--shape {name}={v}: `{name}` sets the length of a tile, "
                                                     "which Triton needs to be a positive power of two")
            fixed[name] = v
            continue
        vals = [p.constexprs[name] for p in given if name in p.constexprs and name not in p.unknown]
        ints = [v for v in vals if isinstance(v, int) and not isinstance(v, bool) and v > 0]
        if name in tiles and ints and len(ints) == len(vals) and all(v & (v - 1) == 0 for v in ints) \
                and any(p.origin == "autotune" for p in given):
            tunable[name] = pow2_between(min(ints), max(ints))
            author_values[name] = frozenset(ints)
        elif name in tiles and name in loop_steps:
            # a looped block: any power of two works; wider than the loop's extent only wastes lanes. One that
            # sizes a dot operand stays within MMA tile sizes (a K step of 65536 was searched, 16-64 was not)
            lo, hi = (DOT_DIM_RANGE if name in dot_dims else (128, 65536))
            for lf in src.loops.values():
                if ast_name(lf.step) == name:
                    from kernlint.frontend.host_facts import SafeEval
                    stop = SafeEval(bucket, lf.locals)(lf.stop)
                    if isinstance(stop, (int, float)) and stop > 0:
                        hi = min(hi, 1 << max(0, int(stop) - 1).bit_length())
            tunable[name] = pow2_between(min(lo, hi), hi)
            launched = src.launch_value(name, bucket)
            author_values[name] = frozenset([launched]) if isinstance(launched, int) else frozenset()
        elif vals:
            fixed[name] = Counter(map(repr, vals)).most_common(1)[0][0]
            fixed[name] = next(v for v in vals if repr(v) == fixed[name])
        elif name in tiles:
            # `BLOCK = triton.next_power_of_2(n_cols)` at the launch: derived once the sizes it reads are given
            launched = src.launch_value(name, bucket)
            if isinstance(launched, int) and not isinstance(launched, bool) and launched > 0:
                fixed[name] = launched
            else:
                missing.append(name)
    if missing:   # every name at once: one per run made a user run kernlint once per block size
        needs = sorted({n for m in missing for n in src.launch_names(m)} - set(bucket))
        hint = f" or the sizes the launch computes {'it' if len(missing) == 1 else 'them'} from " \
               f"({', '.join(needs)})" if needs else ""
        return Space({}, {}, [], [], author,
                     f"{', '.join(f'`{m}`' for m in missing)} {'shapes a tile' if len(missing) == 1 else 'shape tiles'}"
                     f" but {'its value is' if len(missing) == 1 else 'their values are'} computed at the launch "
                     f"site; pass {'it' if len(missing) == 1 else 'them'} in the bucket "
                     f"(--shape {','.join(f'{m}=...' for m in missing)}){hint}")
    rel: list[tuple[str, str, str]] = []
    auto = [p for p in given if p.origin == "autotune"]
    for a, b in itertools.permutations(tunable, 2):
        pairs = [(p.constexprs.get(a), p.constexprs.get(b)) for p in auto]
        if len(pairs) < 2 or any(not isinstance(x, int) or not isinstance(y, int) for x, y in pairs):
            continue
        if all(x == y for x, y in pairs):
            if a < b:
                rel.append((a, "==", b))
        elif all(x >= y for x, y in pairs):
            rel.append((a, ">=", b))
    has_loop = bool(src.loops) or any(op.kind == OpKind.FOR for op, _ in ir.walk())
    has_dot = any(op.kind == OpKind.DOT for op, _ in ir.walk())
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


SMEM_OVER = "shared memory over the limit"
DOT_DIM_RANGE = (16, 256)   # block sizes searched for a looped constexpr that sizes a tl.dot operand


def infeasible_reason(est: Any) -> str | None:
    """Why a config cannot be recommended (None: it can), shared by the Triton and Helion searches."""
    if not est.estimated:
        return "not modelled"
    if est.smem_over:
        return SMEM_OVER
    if est.tmem_over:
        return "tensor memory over the limit"
    if est.occupancy is None or est.occupancy.ctas_per_sm == 0:
        return "does not fit on an SM"
    if est.registers is not None and est.registers.pressure > 2.0:
        return "register demand over 2× the budget"
    return None


def _estimate_once(kernel: Any, spec: GpuSpec, values: dict[str, Any], nw: int, ns: int) -> Any:
    """The estimate of one config, kept on the kernel's IR: it depends on the constexprs, warps, stages and
    target, not on the shape bucket, and a search with shapes unknown ranks every config for three buckets."""
    point = ConfigPoint(values, nw, ns, "cli", kernel.jit.line)
    try:
        key = Analysis.RECOMMEND_ESTIMATE.key(spec.key, frozenset(values.items()), nw, ns)
        hash(key)
    except TypeError:  # an unhashable constexpr value
        return estimate(kernel.ir, point, spec)
    est = kernel.ir.cache.get(key)
    if est is None:
        est = kernel.ir.cache[key] = estimate(kernel.ir, point, spec)
    return est


def _evaluate(kernel: Any, src: KernelSource, spec: GpuSpec, values: dict[str, Any], nw: int, ns: int,
              bucket: Mapping[str, Any], rejected: Counter[str] | None = None,
              works: _Works | None = None) -> Candidate | None:
    est = _estimate_once(kernel, spec, values, nw, ns)
    why = infeasible_reason(est)
    if why:
        if rejected is not None:
            rejected[why] += 1
        return None
    work, ctas = (works or _Works(kernel, src, bucket)).get(values, nw, ns)
    if ctas is None and work.stored:
        # The grid does not evaluate (a host variable, a closure): scored alone, one CTA's time made the
        # smallest tile look fastest. Every config writes the same output, so assume a launch writing
        # ASSUMED_OUTPUT_BYTES and as many CTAs as that takes: configs compare per byte of output.
        ctas = _assumed_ctas(work)
        sc = score(est, work, spec, ctas)
        note = f"grid unknown: assumed {ctas:,} CTAs, a launch writing {ASSUMED_OUTPUT_BYTES >> 20} MiB"
        return Candidate(values, nw, ns, est, dataclasses.replace(sc, notes=(*sc.notes, note)))
    return Candidate(values, nw, ns, est, score(est, work, spec, ctas))


def _assumed_ctas(work: Work) -> int:
    return max(1, round(ASSUMED_OUTPUT_BYTES / work.stored))


class _Works:
    """`kernel_work` and the grid of each config of one bucket, computed once per (constexprs, num_warps):
    the work reads num_stages only to say whether a loop feeding a dot is pipelined (num_stages >= 2), so the
    other stage counts take the 2-stage work with that flag set (model.kernel_work's last line)."""

    def __init__(self, kernel: Any, src: KernelSource, bucket: Mapping[str, Any]) -> None:
        self.kernel, self.src, self.bucket = kernel, src, bucket
        self._work: dict[Any, Work] = {}
        self._grid: dict[Any, int | None] = {}

    def get(self, values: dict[str, Any], nw: int, ns: int) -> tuple[Work, int | None]:
        env = {**self.bucket, **values}
        try:
            key: Any = frozenset((k, type(v), v) for k, v in values.items())
            hash(key)
        except TypeError:   # an unhashable constexpr value: computed each time
            return kernel_work(self.kernel.ir, self.src, env, ns, nw), evaluate_grid(self.src, env)
        work = self._work.get((key, nw))
        if work is None:
            work = self._work[(key, nw)] = kernel_work(self.kernel.ir, self.src, env, 2, nw)
        if ns < 2 and work.pipelined:
            work = dataclasses.replace(work, pipelined=False)
        if key not in self._grid:
            self._grid[key] = evaluate_grid(self.src, env)
        return work, self._grid[key]


@dataclass
class _Point:
    order: int                  # position in the search order (the order candidates and rejections are listed in)
    values: dict[str, Any]
    outside: dict[str, str]
    num_warps: int
    num_stages: int


class _Bar:
    """What a config's modelled time must reach for it to enter the top `k` of the ranking.

    `ranking.rank` orders by (spills, modelled time to 3 decimals, ...), re-orders the leaders within NEAR_TIE of
    the fastest, folds configs with equal `_equivalence_key`s (`collapse_stage_variants`: the same constexprs,
    warps, modelled time, memory and registers) and keeps `k`. With `k` non-spilling candidates of distinct
    equivalence keys found (k entries of the folded list), a config whose modelled time is certainly above the
    k-th of their best times (after rounding) and above the leaders' window ranks after all `k` of them and
    folds into none of them (its time differs), so it is cut from the list whatever its estimate: such a
    config is not estimated."""

    def __init__(self, k: int) -> None:
        self.k = k
        self.heap: list[tuple[float, Any]] = []   # (-best time, key) of the k fastest keys
        self.inside: dict[Any, float] = {}
        self.fastest = math.inf

    def add(self, key: Any, time_us: float) -> None:
        self.fastest = min(self.fastest, time_us)
        if key in self.inside:
            if time_us < self.inside[key]:
                self.inside[key] = time_us
                self.heap = [(-t, k) for k, t in self.inside.items()]
                heapq.heapify(self.heap)
            return
        if len(self.heap) < self.k:
            self.inside[key] = time_us
            heapq.heappush(self.heap, (-time_us, key))
        elif time_us < -self.heap[0][0]:
            _, out = heapq.heapreplace(self.heap, (-time_us, key))
            del self.inside[out]
            self.inside[key] = time_us

    def beyond(self, floor_us: float) -> bool:
        """Every config whose time is at least `floor_us` ranks after the k kept ones."""
        if len(self.heap) < self.k:
            return False
        bar = max(-self.heap[0][0], self.fastest * (1 + NEAR_TIE))
        # 1e-9: the floor is `score`'s arithmetic in another order, equal up to rounding of the last bits;
        # 2e-6: a time that far above the bar rounds (to 6 decimals) to another equivalence key than the bar's
        floor_us *= 1 - 1e-9
        return round(floor_us, 3) > round(bar, 3) and floor_us > bar + 2e-6


def _search(kernel: Any, src: KernelSource, spec: GpuSpec, env: Mapping[str, Any], points: list[_Point],
            top_k: int, events: list[tuple[int, str]], rec: Recommendation) -> list[Candidate]:
    """The feasible candidates among `points` that can reach the top `top_k`, in search order; every rejection
    counted in `rec.rejected` in search order.

    Configs are estimated in the order of their time floor (`model.score_floor`, from the work alone), so
    the bar (`_Bar`) drops fast; once the next floor is beyond it, no later config can enter the ranking and
    the rest are not estimated (`rec.pruned`). The ranked list is the one a search estimating every config
    gives (tests/recommend/test_search_bound.py compares them). A config whose fewer stages were over the
    shared-memory limit is over it too (shared memory never shrinks with num_stages, an invariant
    benchmarks/fuzz.py checks): it is not estimated."""
    works = _Works(kernel, src, env)
    floors: list[float] = []
    if PRUNE:
        known: dict[tuple[int, int, int], float] = {}   # stage counts that leave the work unpipelined: one floor
        for p in points:
            work, ctas = works.get(p.values, p.num_warps, p.num_stages)
            if ctas is None and work.stored:
                ctas = _assumed_ctas(work)
            key = (id(p.values), p.num_warps, p.num_stages if work.pipelined else 0)
            if key not in known:
                known[key] = score_floor(work, spec, p.num_warps, p.num_stages, ctas)
            floors.append(known[key])
        order = sorted(range(len(points)), key=lambda i: (floors[i], i))
    else:
        order = list(range(len(points)))
    bar = _Bar(top_k)
    over: dict[tuple[int, int], int] = {}   # (id of the constexprs, num_warps) -> fewest stages over the limit
    found: list[tuple[int, Candidate]] = []
    for n, i in enumerate(order):
        p = points[i]
        if PRUNE and bar.beyond(floors[i]):
            rec.pruned = len(order) - n   # the floors ascend: every later config is beyond the bar too
            break
        group = (id(p.values), p.num_warps)
        if over.get(group, p.num_stages) < p.num_stages:
            events.append((p.order, SMEM_OVER))
            continue
        why: Counter[str] = Counter()
        c = _evaluate(kernel, src, spec, p.values, p.num_warps, p.num_stages, env, why, works)
        if c is None:
            reason = next(iter(why), None)
            if reason is not None:
                events.append((p.order, reason))
                if reason == SMEM_OVER:
                    over[group] = min(over.get(group, p.num_stages), p.num_stages)
            continue
        c.in_author_space = not p.outside
        c.outside = p.outside
        found.append((p.order, c))
        spill = c.estimate.registers.spill_bytes if c.estimate.registers else 0
        if not spill:
            bar.add(_equivalence_key(c), c.score.time_us)
    for _, why_ in sorted(events):
        rec.rejected[why_] += 1
    return [c for _, c in sorted(found, key=lambda oc: oc[0])]


# Skip configs the time floor rules out (`_search`); False estimates every config (the reference the tests
# compare the pruned search with)
PRUNE = True


def kernel_source_facts(path: str, name: str) -> KernelSource:
    """`read_kernel_source`, once per file version and kernel in a process: the CLI asks for every kernel's
    `--shape` names and again per bucket and target (fla's log_linear_attn/chunk.py: 16 reads, 26 of 41 s
    under cProfile). The facts are only read by the search, never changed."""
    import os
    try:
        stamp: tuple[int, int] | None = (os.stat(path).st_mtime_ns, os.stat(path).st_size)
    except OSError:
        stamp = None
    return _kernel_source_facts(path, name, stamp)


@functools.lru_cache(maxsize=256)
def _kernel_source_facts(path: str, name: str, stamp: tuple[int, int] | None) -> KernelSource:
    return read_kernel_source(path, name)


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
        src = kernel_source_facts(jit.path, jit.name)
    env = bucket_env(kernel, src, bucket)
    space = learn_space(kernel, src, bucket)
    if space.reason:
        rec.reason = space.reason
        return rec
    if kernel.ir.unmodelled:
        rec.reason = "the model does not cover: " + "; ".join(u.construct for u in kernel.ir.unmodelled[:3])
    rec.kind = kernel_kind(kernel.ir)
    names = list(space.tunable)
    points: list[_Point] = []
    events: list[tuple[int, str]] = []   # (search order, why): rejections, counted in search order at the end
    for combo in itertools.product(*(space.tunable[n] for n in names)):
        values = {**space.fixed, **dict(zip(names, combo))}
        if not _relations_ok(values, space.relations):
            events.append((len(points) + len(events), "outside the author's relations"))
            continue
        bad = check_asserts(src, values)
        if bad:
            events.append((len(points) + len(events), bad))
            continue
        outside = outside_author_space(values, space)
        for nw in WARPS:
            for ns in sorted(space.stages):
                rec.searched += 1
                points.append(_Point(len(points) + len(events), values, outside, nw, ns))
    cands = _search(kernel, src, spec, env, points, top_k, events, rec)
    authors = []
    for p in space.author_points:
        p = launch_point(p, src, env)
        if not p.unknown:
            vals = {**space.fixed, **{k: v for k, v in p.constexprs.items() if k in kernel.ir.constexprs}}
            a = _evaluate(kernel, src, spec, vals, p.num_warps, p.num_stages, env)
            if a:
                a.in_author_space = True
                authors.append(a)
    rec.author, rec.author_floor_us = incumbent(authors)
    rec.author_configs = authors
    rec.author_tuned = any(p.origin == "autotune" for p in space.author_points)
    rec.doubts = model_doubts(kernel.ir, cands[:1] and rank(cands)[:1])
    return finish(rec, cands, top_k)


def launch_point(p: ConfigPoint, src: KernelSource, env: Mapping[str, Any]) -> ConfigPoint:
    """A launch site's config with what the static evaluation left unknown or defaulted (`BLOCK_SIZE=block`,
    `num_warps=num_warps` computed in the launching function) evaluated under the bucket: the author line
    showed Triton's default 4 warps, or nothing, for such launches."""
    if p.origin != "launch":
        return p
    constexprs, unknown = dict(p.constexprs), dict(p.unknown)
    for name in list(unknown):
        v = src.launch_value_in_order(name, env)
        if isinstance(v, (int, float, bool)):
            constexprs[name] = v
            del unknown[name]
    opts = {}
    for name in ("num_warps", "num_stages"):
        v = src.launch_value_in_order(name, env) if name in p.defaulted else None
        if isinstance(v, int) and not isinstance(v, bool) and v > 0:
            opts[name] = v
    if not opts and constexprs == p.constexprs:
        return p
    return dataclasses.replace(p, constexprs=constexprs, unknown=unknown, **opts,
                               defaulted=tuple(d for d in p.defaulted if d not in opts))


def model_doubts(ir: Any, top: list[Candidate]) -> list[str]:
    """Why the time model does not understand what drives this kernel's time (empty: it does): constructs it
    does not model (KL002), a tl.dot whose work it cannot count (compute 0.00), a grid or loop trip count
    it could not evaluate. With any of them, the author's config stays."""
    out = []
    if ir.unmodelled:
        where = ", ".join(f"line {u.line}: {u.construct}" for u in ir.unmodelled[:3])
        out.append(f"the model does not cover {where} (KL002)")
    if top:
        sc = top[0].score
        if any(op.kind == OpKind.DOT for op, _ in ir.walk()) and not sc.terms.get("compute"):
            out.append("a tl.dot whose operands the model does not follow (compute 0.00)")
        out += [n for n in sc.notes if n.startswith(("grid unknown", "loop trip count unknown"))]
    return out


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
