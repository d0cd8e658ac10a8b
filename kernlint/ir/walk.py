"""One bounded walk of the def-use graph: upstream over producers, downstream over users.

Analyses follow a value back to what made it (a dot operand to its load, a pointer to its parameter) or
forward to what reads it (a tile to the reduction it feeds). Those walks share one shape, here: depth
first (last pushed, first visited, as the hand-written loops they replace), each value at most once, and at
most `bound` values in all. The bound keeps a search cheap on graphs with long chains; an analysis that
needs more (or less) says so with its own `bound=`. The default, `WALK_BOUND`, is what most of them used.
`bound=None` visits everything reachable (each value once, so it ends on any graph, cycles through carried
values included): for the walks whose answer must not depend on where a cap cut them (what a loaded value
can reach, the whole slice of a product).

`bounded_walk` is the general form: a generator, so a caller can stop at the first value it was looking for
(`expand` of a value runs only when the caller asks for the next one). `walk_upstream` and
`walk_downstream` run a whole walk over a producer or user map with a `visit(op, value)` callback that
returns the values to follow.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TypeVar

from kernlint.ir.nodes import Op, Value

# The default number of values one walk visits. Chains in real kernels are short (an address is a handful of
# ops from its parameter); a walk that reaches the bound stops and the analysis takes what it found.
WALK_BOUND = 64

T = TypeVar("T")


def _value_id(item: object) -> int:
    assert isinstance(item, Value)
    return item.id


def bounded_walk(start: Iterable[T], expand: Callable[[T], Iterable[T]], *, bound: int | None = WALK_BOUND,
                 key: Callable[[T], int] = _value_id, admit: Callable[[T], bool] | None = None) -> Iterator[T]:
    """Yield the items reachable from `start` through `expand`, depth first, each `key` once, at most `bound`
    (None: all). Items are values by default; `key` makes them anything with an integer identity.

    `admit(item)` (when given) is asked before an item counts as visited: a refused item is skipped, is not
    counted, and may be reached again. `expand(item)` runs after the caller has handled `item`, when it asks
    for the next one."""
    stack = list(start)
    seen: set[int] = set()
    while stack and (bound is None or len(seen) < bound):
        item = stack.pop()
        k = key(item)
        if k in seen or (admit is not None and not admit(item)):
            continue
        seen.add(k)
        yield item
        stack.extend(expand(item))


def walk_upstream(start: Value, producers: Mapping[int, Op], visit: Callable[[Op, Value], Iterable[Value]], *,
                  bound: int | None = WALK_BOUND, through: Mapping[int, Sequence[Value]] | None = None) -> list[Value]:
    """Walk a value's producers backwards: `visit(op, value)` sees the op that made `value` and returns the
    operands to follow. A value in `through` (a loop-carried merge: block argument → init and yielded value)
    is followed to what flows into it instead; a value without a producer ends its branch. Returns the values
    visited, in order."""
    def expand(v: Value) -> Iterable[Value]:
        if through is not None and v.id in through:
            return through[v.id]
        op = producers.get(v.id)
        return visit(op, v) if op is not None else ()

    return list(bounded_walk((start,), expand, bound=bound))


def walk_downstream(start: Iterable[Value], users: Mapping[int, Sequence[Op]],
                    visit: Callable[[Op, Value], Iterable[Value]], *, bound: int | None = WALK_BOUND) -> list[Value]:
    """Walk forward from values to the ops that read them: `visit(op, value)` sees each reader of `value`
    and returns the values to follow (usually its results). Returns the values visited, in order."""
    def expand(v: Value) -> Iterable[Value]:
        return [x for op in users.get(v.id, ()) for x in visit(op, v)]

    return list(bounded_walk(start, expand, bound=bound))
