"""axis_info.Contiguity instances with equal inputs share one memo (a config sweep asks the same questions
under one constexpr binding for every num_warps and num_stages); different inputs never share."""
from __future__ import annotations

from kernlint.analysis import axis_info
from kernlint.analysis.axis_info import Contiguity
from kernlint.pipeline.api import Settings, lint_source
from kernlint.ir.nodes import OpKind

SRC = '''import triton
import triton.language as tl


@triton.jit
def copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    clamped = tl.minimum(offs, n - 1)
    tl.store(y_ptr + offs, tl.load(x_ptr + clamped))
'''


def _loads() -> tuple[dict[int, object], list[object]]:
    ir = lint_source(SRC, "k.py", Settings(targets=("h100",))).files[0].kernels[0].ir
    producers = {r.id: op for op, _ in ir.walk() for r in op.all_results()}
    loads = [op for op, _ in ir.walk() if op.kind == OpKind.LOAD]
    return producers, loads


def test_equal_inputs_share_answers_and_other_bindings_do_not() -> None:
    producers, loads = _loads()
    pointer = loads[0].operands[0]
    first = Contiguity(producers, {"BLOCK": 128})
    answer = first.info(pointer)
    # a clamped index is not contiguous (AxisInfo's max/min rule): 1 along the tile, 128 elements
    assert answer == ((1,), (1,))
    again = Contiguity(producers, {"BLOCK": 128})
    assert again.memo is first.memo and again.info(pointer) == answer
    assert Contiguity(producers, {"BLOCK": 256}).memo is not first.memo
    assert Contiguity(producers, {"BLOCK": 128}, optimistic=True).memo is not first.memo
    # another producer map (another kernel or binding's liveness) never reads this one's answers
    assert Contiguity(dict(producers), {"BLOCK": 128}).memo is not first.memo


def test_the_shared_memos_are_bounded() -> None:
    producers, _ = _loads()
    for block in range(axis_info._SHARED_ENTRIES + 10):
        Contiguity(producers, {"BLOCK": block + 1})
    assert len(axis_info._SHARED) <= axis_info._SHARED_ENTRIES


def test_async_copy_shares_one_divisibility_per_producer_map_binding_and_loops() -> None:
    from kernlint.analysis import async_copy
    producers, _ = _loads()
    a = async_copy._divisibility(producers, {"BLOCK": 128}, ())
    assert async_copy._divisibility(producers, {"BLOCK": 128}, ()) is a
    assert async_copy._divisibility(producers, {"BLOCK": 64}, ()) is not a
    assert async_copy._divisibility(dict(producers), {"BLOCK": 128}, ()) is not a
