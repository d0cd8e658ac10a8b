"""The bytes per thread Triton's software pipeliner sees for a load (AssignLatencies.cpp, isSmallLoad: under
32 bits it is no async copy): contiguity (axis_info.py) capped by the pointer's alignment and the mask's
constancy (axis_divisibility.py)."""
from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

from kernlint.analysis.axis_divisibility import Divisibility
from kernlint.analysis.axis_info import Contiguity, load_vector_bytes, order_from_contiguity, tile_shape
from kernlint.ir.nodes import Op, Value, element_bytes, pointee


def async_copy_bytes(load: Op, producers: Mapping[int, Op], env: Mapping[str, Any],
                     carried: Mapping[int, Value] | None = None, loops: Sequence[Op] = ()) -> int | None:
    """Bytes per thread the pipeliner sees for a pointer-tile load (AssignLatencies.cpp, isSmallLoad): the
    contiguous vector (axis_info.load_vector_bytes) capped by the pointer's alignment and the mask's constancy
    along the contiguous dim. None when the load is not a tile of plain pointers.

    With `loops`, a carried pointer's fastest dim and divisibility come from its entry value; its contiguity
    only where `carried` is given (`a_ptrs += BLOCK_K * stride_ak` usually runs with stride_ak = 1)."""
    width = load_vector_bytes(load, producers, env, carried)
    if width is None:
        return None
    pointer = load.operands[0]
    shape = tile_shape(pointer, env)
    info = Contiguity(producers, env, optimistic=True, carried=carried).info(pointer)
    entry = {c.arg.id: c.init for loop in loops for c in loop.carried}
    followed = Contiguity(producers, env, optimistic=True, carried={**entry, **(carried or {})}).info(pointer) \
        if entry else info
    if shape is None or info is None or followed is None:
        return width
    axis = order_from_contiguity(followed[0])[0]
    elem = max(1, int(element_bytes(pointee(pointer.dtype))))
    width = min(info[0][axis] * elem, 16)
    analysis = _divisibility(producers, env, loops)
    aligned = max(1, analysis.of(pointer)[axis] // elem)
    width = min(width, aligned * elem)
    if load.load_attrs().masked and len(load.operands) > 1 and load.operands[1].shape:
        width = min(width, max(1, analysis.mask_constancy(load.operands[1], shape)[axis]) * elem)
    return width


# One Divisibility per producer map, binding and loop set: every load of every config of a sweep asked for a
# new one, and each rebuilt its loop tables from the whole producer map (a quarter of a recommend search of
# liger's fused MoE kernels). The entry holds the producer map and loops, so their ids are not reused while
# it lives.
_SHARED: OrderedDict[tuple[Any, ...], tuple[object, Sequence[Op], Divisibility]] = OrderedDict()
_SHARED_ENTRIES = 128


def _divisibility(producers: Mapping[int, Op], env: Mapping[str, Any], loops: Sequence[Op]) -> Divisibility:
    try:
        key = (id(producers), frozenset((k, type(v), v) for k, v in env.items()), tuple(id(op) for op in loops))
        hit = _SHARED.get(key)
    except TypeError:  # an unhashable value in the binding
        return Divisibility(producers, env, loops)
    if hit is not None and hit[0] is producers and all(a is b for a, b in zip(hit[1], loops)):
        _SHARED.move_to_end(key)
        return hit[2]
    analysis = Divisibility(producers, env, loops)
    _SHARED[key] = (producers, tuple(loops), analysis)
    if len(_SHARED) > _SHARED_ENTRIES:
        _SHARED.popitem(last=False)
    return analysis
