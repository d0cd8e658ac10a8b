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


def gather_params(src_shape: tuple[int, ...], index_shape: tuple[int, ...], axis: int, order: tuple[int, ...],
                  num_warps: int, lanes: int = 32) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...],
                                                            tuple[int, ...]]:
    """(sizePerThread, threadsPerWarp, warpsPerCTA, order) of the warp-local layout Triton gives `tl.gather`'s
    source, index and result (lib/Dialect/TritonGPU/Transforms/OptimizeThreadLocality.cpp,
    setOptimizedGatherLayout): the lanes of a warp go along the gather axis first (up to its size), the rest
    along the other dims in the source's order; no warp along the axis, the warps fill the other dims as they
    fit; the axis holds max(source, index) extent / lanes per thread; leftover lanes and warps broadcast along
    the axis. Checked against Triton 3.9 TTGIR: a [32, 64] tile gathered on axis 0 at 4 warps is
    sizePerThread [1, 1], threadsPerWarp [32, 1], warpsPerCTA [1, 4], order [0, 1] (fla gsa gate backward)."""
    rank = len(src_shape)
    tpw, wpc = [1] * rank, [1] * rank
    tpw[axis] = min(src_shape[axis], lanes)
    threads_left = lanes // tpw[axis]
    for d in order:
        if d != axis:
            tpw[d] = min(src_shape[d], threads_left)
            threads_left //= tpw[d]
    warps_left = num_warps
    for d in order:
        if d != axis:
            wpc[d] = max(1, min(src_shape[d] // tpw[d], warps_left))
            warps_left //= wpc[d]
    spt = [1] * rank
    spt[axis] = max(1, max(src_shape[axis], index_shape[axis]) // tpw[axis])
    tpw[axis] *= threads_left
    wpc[axis] *= warps_left
    return tuple(spt), tuple(tpw), tuple(wpc), (axis, *(d for d in order if d != axis))
