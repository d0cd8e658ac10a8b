"""The bounded walk of the def-use graph (kernlint/ir/walk.py): depth first, each value once, stopping at its
bound (WALK_BOUND by default, everything reachable with bound=None), upstream over producers and downstream
over users."""
from __future__ import annotations

from kernlint.ir.attributes import make_attrs
from kernlint.ir.nodes import Op, OpKind, Value
from kernlint.ir.walk import WALK_BOUND, bounded_walk, walk_downstream, walk_upstream


def _chain(n: int) -> tuple[list[Value], dict[int, Op]]:
    """v0 <- v1 <- ... <- v(n-1): each value made by an elementwise op of the previous one."""
    values = [Value(i, (), "i32") for i in range(n)]
    producers = {v.id: Op(100 + v.id, OpKind.ELEMENTWISE, v, (values[v.id - 1],), 1,
                          make_attrs(OpKind.ELEMENTWISE, {"fn": "+"})) for v in values[1:]}
    return values, producers


def _operands(op: Op, v: Value) -> tuple[Value, ...]:
    return op.operands


def test_upstream_walk_stops_at_its_bound() -> None:
    values, producers = _chain(200)
    seen = walk_upstream(values[-1], producers, _operands, bound=10)
    assert [v.id for v in seen] == list(range(199, 189, -1))
    assert len(walk_upstream(values[-1], producers, _operands)) == WALK_BOUND
    assert len(walk_upstream(values[-1], producers, _operands, bound=None)) == 200   # everything, once


def test_each_value_is_visited_once_in_a_diamond() -> None:
    # d = b + c, b = a * 2, c = a - 1: `a` is reached twice but visited once, and its op seen once
    a, b, c, d = (Value(i, (), "i32") for i in range(4))
    ew = make_attrs(OpKind.ELEMENTWISE, {"fn": "+"})
    producers = {b.id: Op(11, OpKind.ELEMENTWISE, b, (a,), 1, ew), c.id: Op(12, OpKind.ELEMENTWISE, c, (a,), 1, ew),
                 d.id: Op(13, OpKind.ELEMENTWISE, d, (b, c), 1, ew)}
    visited_ops: list[int] = []

    def visit(op: Op, v: Value) -> tuple[Value, ...]:
        visited_ops.append(op.id)
        return op.operands

    seen = walk_upstream(d, producers, visit)
    assert sorted(v.id for v in seen) == [0, 1, 2, 3] and len(seen) == 4
    assert sorted(visited_ops) == [11, 12, 13]


def test_through_follows_a_carried_value_to_its_sources() -> None:
    values, producers = _chain(3)
    arg, init = Value(50, (), "i32"), Value(51, (), "i32")
    producers[values[0].id] = Op(99, OpKind.ELEMENTWISE, values[0], (arg,), 1, make_attrs(OpKind.ELEMENTWISE, {}))
    seen = walk_upstream(values[2], producers, _operands, through={arg.id: (init, values[1])})
    assert [v.id for v in seen] == [2, 1, 0, 50, 51]     # values[1] again is not revisited


def test_downstream_walk_over_users() -> None:
    values, producers = _chain(30)
    users = {op.operands[0].id: (op,) for op in producers.values()}
    seen = walk_downstream((values[0],), users, lambda op, v: (op.result,) if op.result else (), bound=5)
    assert [v.id for v in seen] == [0, 1, 2, 3, 4]


def test_a_search_that_stops_early_expands_nothing_more() -> None:
    values, producers = _chain(100)
    expanded: list[int] = []

    def expand(v: Value) -> tuple[Value, ...]:
        expanded.append(v.id)
        op = producers.get(v.id)
        return op.operands if op else ()

    found = next(v for v in bounded_walk((values[-1],), expand, bound=None) if v.id == 95)
    assert found.id == 95 and expanded == [99, 98, 97, 96]


def test_admit_refuses_without_counting_and_key_allows_other_items() -> None:
    walked = list(bounded_walk([(0, "a")], lambda item: [(item[0] + 1, "b"), (item[0] + 2, "c")], bound=4,
                               key=lambda item: item[0], admit=lambda item: item[1] != "c"))
    assert [k for k, _ in walked] == [0, 1, 2, 3]         # the "c" items are refused and not counted
