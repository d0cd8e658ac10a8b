"""What the shape ops `tt.join`, `tt.reshape` and a slice do to a linear layout (linear_layout.Layout).

Triton keeps every element in its thread through these ops and infers the result's layout from the operand's
(triton lib/Dialect/TritonGPU/IR/LinearLayoutConversions.cpp and the ops' inferReturnEncoding):
* `tt.join(a, b)` appends a size-2 dim whose basis is the lowest register bit: each thread holds its a/b pair
  side by side (TTGIR: a [64, 64] #blocked sizePerThread [1, 4] joins to [64, 64, 2] sizePerThread [1, 4, 2]);
* `tt.reshape` re-reads the same elements in row-major order (the last dim fastest), so each basis keeps its
  row-major position in the new shape (unsloth's NVFP4 dequantiser: the join above reshaped to [64, 8, 16] is
  #blocked sizePerThread [1, 1, 8], threadsPerWarp [2, 8, 2], warpsPerCTA [4, 1, 1], Triton 3.9);
* `#ttg.slice<{dim}>` of a layout drops that dim: its lane and warp bases become broadcasts, its register
  bases disappear (SliceEncodingAttr::toLinearLayout), the layout an `x[:, :, None]` operand must have to be
  broadcast into the tile.
Shapes are powers of two, so a single-coordinate basis maps to a single coordinate.
"""
from __future__ import annotations

from collections.abc import Callable

from kernlint.analysis.linear_layout import Basis, Layout


def _map(layout: Layout, shape: tuple[int, ...], f: Callable[[Basis], Basis]) -> Layout:
    return Layout(shape, tuple(map(f, layout.reg)), tuple(map(f, layout.lane)), tuple(map(f, layout.warp)))


def join(layout: Layout) -> Layout:
    """Layout of `tt.join(a, b)` with a and b in `layout`: a trailing size-2 dim in the lowest register bit."""
    joined = _map(layout, (*layout.shape, 2), lambda b: (*b, 0))
    pair = (0,) * len(layout.shape) + (1,)
    return Layout(joined.shape, (pair, *joined.reg), joined.lane, joined.warp)


def reshape(layout: Layout, shape: tuple[int, ...]) -> Layout:
    """Layout of `tt.reshape(x, shape)`: every basis moved to the same row-major position in the new shape."""
    total = 1
    for n in layout.shape:
        total *= n
    size = 1
    for n in shape:
        size *= n
    if size != total:
        raise ValueError(f"reshape of {layout.shape} to {shape}")

    def move(basis: Basis) -> Basis:
        flat = 0
        for coord, n in zip(basis, layout.shape):
            flat = flat * n + coord
        out = []
        for n in reversed(shape):
            out.append(flat % n)
            flat //= n
        return tuple(reversed(out))

    return _map(layout, tuple(shape), move)


def drop_dim(layout: Layout, dim: int) -> Layout:
    """`#ttg.slice<{dim}>` of `layout`: the dim removed, registers that only walked it gone."""
    def drop(b: Basis) -> Basis:
        return tuple(c for d, c in enumerate(b) if d != dim)

    return Layout(drop(layout.shape), tuple(drop(b) for b in layout.reg if any(drop(b))),
                  tuple(map(drop, layout.lane)), tuple(map(drop, layout.warp)))
