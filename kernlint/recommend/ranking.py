"""Ordering of modelled candidates: the rank by modelled time, near-ties broken by what the H200 measured,
and the author's autotuned config as the incumbent the search has to beat (shared by the Triton and Helion
recommenders)."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from kernlint.ir.nodes import OpKind

if TYPE_CHECKING:
    from kernlint.recommend.core import Candidate

# Among the author's own configs, those modelled within this of the best are one incumbent pool (`incumbent`).
# On the H200 (benchmarks/gpu/h200_results_run7.json) configs the model ranked within 5% of each other were as
# often slower as faster (swiglu: the author's 2048·w4 modelled equal to 1024·w2 and measured 3% faster).
AUTHOR_MARGIN = 0.05
# Modelled times closer than this are a tie (`_tie_key`; CPU replay: same picks for 0.1-0.5 %, not at 1 %)
NEAR_TIE = 0.003
# "Near the cap" (`_tie_key`) starts at 80 % of the budget: the rule was measured on attention 128×64 at 4 warps,
# which ptxas compiles to 236-245 registers (calibrate, Triton 3.6 and 3.9, sm_90) and kernlint estimates at
# 210, 82 % of 255, once its K and V are known to be pointers (they are loaded only in a jit helper). CPU replay
# of H200 runs 1-33: 0.70-0.82 give the same picks (attention 0.990); at 0.85 attention falls to 0.976.
TIGHT_REGISTERS = 0.80


def kernel_kind(ir: Any) -> str:
    """"dot" (a tl.dot anywhere), "reduction" (a reduce or scan, no dot) or "elementwise": the kinds whose
    ranking error MODEL_ERROR measures separately."""
    kinds = {op.kind for op, _ in ir.walk()}
    return "dot" if OpKind.DOT in kinds else "reduction" if kinds & {OpKind.REDUCE, OpKind.SCAN} else "elementwise"


# The model's ranking error per kernel kind (kernel_kind): an author's config is replaced only by a config
# modelled more than this much faster. `python benchmarks/gpu/model_error.py` over H200 runs 2-35: the
# smallest modelled gain over the author's incumbent above which the pick measured >1 % slower in at most
# 1 pair of 20, and never below the smallest gain the runs tested (dot 546 pairs: none modelled under 7.0 %
# faster; elementwise 184: swiglu picks modelled up to 2.8 % faster lost in 71; reduction 736: 2.1 %).
MODEL_ERROR = {"dot": 0.070, "elementwise": 0.028, "reduction": 0.021}


def finish(rec: Any, cands: list[Candidate], top_k: int) -> Any:
    """Rank the feasible candidates into `rec` (or say why none fits), and keep the author's config first
    (`rec.kept_author` says why) unless the model both understands the kernel (`rec.doubts` empty) and predicts
    a gain over it above its error for this kind of kernel (MODEL_ERROR). Shared by the Triton and Helion
    searches."""
    authors = list(getattr(rec, "author_configs", None) or ([rec.author] if rec.author is not None else []))
    if not cands:
        rec.reason = rec.reason or ("no config fits: " + ", ".join(f"{k} ×{v}" for k, v in rec.rejected.items()))
        return rec
    rec.ranked = collapse_stage_variants(rank(cands, authors))[:top_k]
    author = rec.author
    kind = getattr(rec, "kind", "dot")
    doubts = list(getattr(rec, "doubts", None) or [])
    if author is None:
        # nothing to measure a gain against: what runs today (a list built at run time, values computed from
        # the device) may already be the pick (mamba-ssm's layer_norm, autotuned over a list filtered at run
        # time: the model's 8 warps ran 10-15 % slower than its autotuner's 4 on an H200)
        why = "; ".join(doubts) + "; " if doubts else ""
        rec.kept_author = why + "the author's config is not known, so no gain over it can be predicted: nothing is applied"
        return rec
    # the bar is the author config the model ranks first, even where `incumbent` keeps a near-equal one
    floor = rec.author_floor_us or author.score.time_us
    top = rec.ranked[0]
    gain = 1 - top.score.time_us / floor
    err = MODEL_ERROR.get(kind, max(MODEL_ERROR.values()))
    if doubts:
        rec.kept_author = "; ".join(doubts)
    elif len(authors) > 1 and any(_same_config(top, a) or _equivalence_key(top) == _equivalence_key(a)
                                  for a in authors):   # the same program: at most a num_stages that changes nothing
        # an autotune list: the autotuner times its candidates on the device and keeps the fastest, which the
        # model can only match, never beat, by naming one of them (mamba-ssm's layer_norm on an H200: its
        # autotuner's 4 warps against the model's 8 from the same list, 10-15 % faster)
        rec.kept_author = ("the best searched config is one of the author's autotune candidates: the autotuner "
                           "measures them on the device")
    elif _same_config(top, author) or (_rank_key(author)[0] is False and gain <= err):
        rec.kept_author = (f"the best searched config is modelled {gain:.1%} faster, within the model's "
                           f"{err:.1%} error for {kind} kernels")
    if rec.kept_author:
        # the author's config replaces its own entry, and any stage variant folded into it
        twin = next((c for c in rec.ranked if _equivalence_key(c) == _equivalence_key(author)), None)
        if twin is not None and twin is not author:
            stages = {*twin.equivalent_stages, *author.equivalent_stages, twin.num_stages, author.num_stages}
            author.equivalent_stages = tuple(sorted(stages)) if len(stages) > 1 else ()
        rest = [c for c in rec.ranked if c is not twin and not _same_config(c, author)]
        rec.ranked = [author, *rest][:top_k]
    return rec


def _same_config(a: Candidate, b: Candidate) -> bool:
    return (a.constexprs, a.num_warps, a.num_stages) == (b.constexprs, b.num_warps, b.num_stages)


def author_distance(c: Candidate, authors: list[Candidate], stages: bool = True) -> float:
    """How far `c` is from the nearest of the author's configs: octaves between block sizes and warp counts,
    a quarter per pipeline stage (`stages`), one per other differing constexpr. With no author config known, the octaves
    from Triton's default of 4 warps: a tie never goes to an extreme warp count."""
    def octaves(x: Any, y: Any) -> float:
        if isinstance(x, int) and isinstance(y, int) and not isinstance(x, bool) and x > 0 and y > 0:
            return abs(math.log2(x / y))
        return 0.0 if x == y else 1.0

    if not authors:
        return octaves(c.num_warps, 4)
    return min(sum(octaves(v, a.constexprs.get(k)) for k, v in c.constexprs.items())
               + octaves(c.num_warps, a.num_warps) + 0.25 * stages * abs(c.num_stages - a.num_stages) for a in authors)


def collapse_stage_variants(ranked: list[Candidate]) -> list[Candidate]:
    """One entry per config that only `num_stages` tells apart where the model sees no difference.

    `num_stages` only multi-buffers loops whose loads Triton's pipeliner handles; where a kernel has none, the
    stage variants of a config get the same estimate (same shared memory, registers and modelled time) and,
    on the H200, the same cubin (runs 20-21 hashed them: every stage variant of the streaming row kernels
    compiled alike). Listing them separately filled a top 3 with one program three times, and seeded an
    autotuner with duplicates. The first in rank order is kept (the fewest stages: ties go to fewer stages)
    and names the stage values it stands for."""
    kept: dict[tuple[Any, ...], Candidate] = {}
    out: list[Candidate] = []
    for c in ranked:
        first = kept.setdefault(_equivalence_key(c), c)
        if first is c:
            out.append(c)
        else:
            first.equivalent_stages = tuple(sorted({*first.equivalent_stages, first.num_stages, c.num_stages}))
    return out


def _equivalence_key(c: Candidate) -> tuple[Any, ...]:
    """What the model knows of a config apart from its num_stages: equal keys, indistinguishable configs."""
    r, m = c.estimate.registers, c.estimate.smem
    # helion configs hold lists (block_sizes=[64, 64, 32]): their repr is the hashable identity
    return (repr(sorted(c.constexprs.items())), c.num_warps, round(c.score.time_us, 6),
            m.total if m else None, (r.allocated, r.spill_bytes) if r else None, c.in_author_space)


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
    # next wgmma); runs 15-16 with 8 warps: attention 0.974 -> 0.995 of the best. So a config near the cap of
    # its budget (TIGHT_REGISTERS) yields to a near-equal one below it.
    r = c.estimate.registers
    tight = bool(r and r.budget and r.allocated > TIGHT_REGISTERS * r.budget)
    if not c.score.wide_ties:
        # Otherwise dot kernels keep the model's order: preferring fewer stages moved six matmul shapes from
        # BLOCK_K 32 · 7 stages to 64 · 4 on 0.07 % modelled gaps, and over runs 13-16 the deeper pipeline
        # was ahead on five of them by 1.5-3 % (behind by 5 % on one, 256 × 16384 × 2048).
        return (tight, *_rank_key(c))
    # Streaming row kernels (no dot, no reduction inside a loop) prefer more warps per CTA, then fewer stages
    # (their loops are not pipelined: stage variants compile to the same cubin, which H200 runs 20-21 hashed),
    # so stages never outrank warps: swiglu 4096 × 14336, the author's 2048 · 8 warps · 2 stages measured
    # 0.975 of the best against 0.960 for 2048 · 4 warps · 1 stage over all 21 saved runs, ahead in each.
    # More warps first: CPU replay of H200 runs 1-15,
    # swiglu 0.952 -> 0.967 (4096 × 11000: 512 · 4 warps at 0.91 -> 1024 · 8 at 0.96, every run), layernorm
    # 0.947 -> 0.952, nothing worse; run 16 live: layernorm 8192 × 3072 0.904 -> 0.961, 4096 × 5000 0.886 ->
    # 0.911. With cross-entropy's in-loop reductions it lost 2.5 % (1024 × 128256: 4096 · 4 -> 8192 · 8
    # warps, every run): more warps, more barrier traffic per iteration.
    return (tight, -c.num_warps, c.num_stages, c.score.time_us)


def _author_tie_key(c: Candidate, authors: list[Candidate]) -> tuple[Any, ...]:
    """`_tie_key` with the distance to the author's configs: streaming kernels' ties (where the model sees no
    difference between warp counts) go to the config closest to the author's before more warps; dot kernels
    keep the model's order and only exact ties go to the closest."""
    # stages do not count: variants the model cannot tell apart are listed once with the fewest stages
    # (collapse_stage_variants; streaming kernels' compile to one cubin)
    t, near = _tie_key(c), round(author_distance(c, authors, stages=False), 3)
    return (t[0], near, *t[1:]) if c.score.wide_ties else (*t[:3], near, *t[3:])


def rank(cands: list[Candidate], authors: list[Candidate] | None = None) -> list[Candidate]:
    """Candidates best first: by `_rank_key`, then the leaders whose modelled times are within NEAR_TIE of the
    fastest (the model cannot separate them) re-ordered: below the register cap first, then the one closest
    to the author's configs (`author_distance`), then `_tie_key`."""
    out = sorted(cands, key=_rank_key)
    if not out:
        return out
    spills, t0 = _rank_key(out[0])[0], out[0].score.time_us
    lead = [c for c in out if _rank_key(c)[0] == spills and c.score.time_us <= t0 * (1 + NEAR_TIE)]
    key = _tie_key if authors is None else (lambda c: _author_tie_key(c, authors))
    return sorted(lead, key=key) + out[len(lead):]


def incumbent(authors: list[Candidate]) -> tuple[Candidate | None, float | None]:
    """The author config to keep first and the modelled time a searched config has to beat (by MODEL_ERROR).

    The model cannot order the author's configs it places within AUTHOR_MARGIN of its best one any better
    than it can beat them, so among those the tie-break decides (for streaming kernels: more warps per CTA).
    Replay of H200 runs 13-17 (matmul fp16/bf16, attention, swiglu; 120 pairs): rec/best 0.978 -> 0.979 and
    a recommendation more than 2 % slower than the fastest config of the author's list in 8 -> 3 pairs
    (swiglu 8192 x 11008: 1024 x 4 warps -> 4096 x 8 warps, 2.6 % faster in every run)."""
    if not authors:
        return None, None
    first = rank(authors)[0]
    floor = first.score.time_us
    pool = [a for a in authors if _rank_key(a)[0] == _rank_key(first)[0]
            and a.score.time_us <= floor * (1 + AUTHOR_MARGIN)]
    return sorted(pool, key=_tie_key)[0], floor
