"""ranking.rank: modelled times within NEAR_TIE are a tie; the tie-break is the measured H200 preference
(below 85 % of the register budget first; then, for streaming kernels, more warps and fewer stages; for
the rest the model's own order). Candidates are hand-built: only the fields rank reads."""
from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from kernlint.recommend.ranking import NEAR_TIE, TIGHT_REGISTERS, rank


def cand(name: str, time_us: float, warps: int, stages: int = 1, regs: int = 64, budget: int = 255,
         wide: bool = False, spill: int = 0) -> Any:
    regs_ns = SimpleNamespace(allocated=regs, budget=budget, spill_bytes=spill)
    return SimpleNamespace(name=name, num_warps=warps, num_stages=stages,
                           estimate=SimpleNamespace(registers=regs_ns),
                           score=SimpleNamespace(time_us=time_us, wide_ties=wide))


def names(cands: list[Any]) -> list[str]:
    return [c.name for c in rank(cands)]


def test_a_config_near_its_register_cap_yields_to_an_equal_time_one() -> None:
    # attention 128×64: 226 of 255 registers at 4 warps, 126 at 8 warps, modelled 0.001 µs apart
    assert 226 > TIGHT_REGISTERS * 255 and 126 < TIGHT_REGISTERS * 255
    four = cand("w4", 44.579, 4, stages=6, regs=226)
    eight = cand("w8", 44.580, 8, stages=6, regs=126)
    assert names([four, eight]) == ["w8", "w4"]


def test_outside_the_tie_window_the_model_decides() -> None:
    fast = cand("fast", 100.0, 4, regs=230)
    slower = cand("slower", 100.0 * (1 + 2 * NEAR_TIE), 8, regs=100)   # 0.6 % slower: not a tie
    assert names([slower, fast]) == ["fast", "slower"]


def test_streaming_kernels_prefer_more_warps_then_fewer_stages_in_a_tie() -> None:
    few = cand("few", 83.75, 2, wide=True)      # swiglu 2048 · 4 warps vs 4096 · 8 warps: 0.06 % apart
    many = cand("many", 83.80, 4, wide=True)
    assert names([few, many]) == ["many", "few"]
    # stages matter only between configs with the same warps (their loops are not pipelined: the same cubin)
    deep = cand("s3", 83.70, 4, stages=3, wide=True)
    assert names([deep, few, many]) == ["many", "s3", "few"]
    # swiglu 4096 × 14336, two of the author's configs: 2048 · 8 warps · 2 stages measured 0.975 of the best
    # against 0.960 for 2048 · 4 warps · 1 stage, averaged over all 21 saved H200 runs and ahead in every one
    assert names([cand("w4·s1", 88.0, 4, wide=True), cand("w8·s2", 88.1, 8, stages=2, wide=True)]) == \
        ["w8·s2", "w4·s1"]


def test_dot_kernels_keep_the_model_order_in_a_tie_and_spilling_configs_stay_last() -> None:
    deep = cand("s7", 196.30, 8, stages=7)      # matmul BLOCK_K 32 · 7 stages vs 64 · 4: 0.07 % apart
    shallow = cand("s4", 196.44, 8, stages=4)
    spiller = cand("spill", 150.0, 8, stages=1, spill=64)
    assert names([shallow, spiller, deep]) == ["s7", "s4", "spill"]
    # exact ties (warps the model does not separate) go to fewer warps
    assert names([cand("w16", 16.51, 16), cand("w8", 16.51, 8)]) == ["w8", "w16"]


def test_the_author_incumbent_is_tie_broken_within_the_author_margin() -> None:
    from kernlint.recommend.ranking import AUTHOR_MARGIN, incumbent
    # swiglu 8192 × 11008, the author's autotune list as modelled on the H200: 1024 · 4 warps first at 136.2 µs,
    # 4096 · 8 warps 4.3 % behind (inside the 5 % margin) and measured 2.6 % faster in runs 13-17
    w4 = cand("1024·w4", 136.2, 4, wide=True)
    w8 = cand("4096·w8", 142.1, 8, wide=True)
    far = cand("2048·w16", 136.2 * (1 + 2 * AUTHOR_MARGIN), 16, wide=True)   # 10 % behind: not a candidate
    kept, floor = incumbent([w4, w8, far])
    assert kept is w8 and floor == 136.2
    # a dot kernel's list keeps the model's order inside the margin too
    a, b = cand("a", 100.0, 4, stages=4), cand("b", 103.0, 8, stages=3)
    assert incumbent([b, a]) == (a, 100.0)
    assert incumbent([]) == (None, None)
