"""Blocked / slice register layouts as F2 linear layouts, and the shared-memory scratch of a conversion.

Triton 3.9 describes every distributed layout as a linear map from hardware bits (register, lane, warp) to
tensor positions; a `ttg.convert_layout` between two layouts goes through shared memory when data has to
cross warps (or a warp shuffle cannot express it), and its scratch buffer holds one "rep" of the tensor
(triton lib/Analysis/Allocation.cpp, getNumScratchElemsSwizzledCvt: total elements / reps, with the reps
chosen by lib/Tools/GenericSwizzling.cpp, optimalSwizzlingLdSt). This module rebuilds those facts for the
layouts kernlint predicts (blocked encodings from the coalesce pass and their slices); it is an
independent re-derivation from the documented algorithm, not a transcription.

A basis is a tuple of tensor coordinates (one per dim); bases of blocked and slice layouts are single
powers of two, so a layout is three lists of such tuples. Positions are flattened with dim 0 the most
minor, as LinearLayout::flattenOuts does.
"""
from __future__ import annotations

from dataclasses import dataclass

Basis = tuple[int, ...]


def _log2(n: int) -> int:
    return max(0, n.bit_length() - 1)


@dataclass(frozen=True, slots=True)
class Layout:
    shape: tuple[int, ...]
    reg: tuple[Basis, ...]
    lane: tuple[Basis, ...]
    warp: tuple[Basis, ...]

    def flat(self, basis: Basis) -> int:
        index, stride = 0, 1
        for coord, size in zip(basis, self.shape):
            index += coord * stride
            stride *= size
        return index

    def flat_bases(self, kind: str) -> list[int]:
        return [self.flat(b) for b in getattr(self, kind)]


def blocked_params(shape: tuple[int, ...], size_per_thread: tuple[int, ...], order: tuple[int, ...],
                   num_warps: int, threads: int = 32) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """threadsPerWarp / warpsPerCTA the way BlockedEncodingAttr::get distributes them: fill the most
    contiguous dim first up to shape / sizePerThread, the slowest dim takes what is left (TritonGPU
    Dialect.cpp, the BlockedEncodingAttr builder used by the coalesce pass)."""
    rank = len(shape)
    tpw, wpc = [1] * rank, [1] * rank
    lanes_left, threads_left, warps_left = threads, threads * num_warps, num_warps
    lanes_used, warps_used = 1, 1
    for i in order[:-1]:
        per_cta = min(max(threads_left, 1), max(1, shape[i] // size_per_thread[i]))
        tpw[i] = min(max(per_cta, 1), lanes_left)
        wpc[i] = min(max(per_cta // tpw[i], 1), warps_left)
        warps_left //= wpc[i]
        lanes_left //= tpw[i]
        threads_left //= per_cta
        lanes_used *= tpw[i]
        warps_used *= wpc[i]
    tpw[order[-1]] = threads // lanes_used
    wpc[order[-1]] = num_warps // warps_used
    return tuple(tpw), tuple(wpc)


def blocked(shape: tuple[int, ...], size_per_thread: tuple[int, ...], order: tuple[int, ...], num_warps: int,
            encoding_shape: tuple[int, ...] | None = None) -> Layout:
    """Linear layout of #blocked on `shape`. `encoding_shape` is the shape the encoding was built for (a
    slice's parent is laid out on the sliced shape with a 1 in the sliced dim)."""
    tpw, wpc = blocked_params(encoding_shape or shape, size_per_thread, order, num_warps)
    rank = len(shape)

    def unit(dim: int, value: int) -> Basis:
        return tuple(value if d == dim and value < shape[d] else 0 for d in range(rank))

    reg: list[Basis] = []
    lane: list[Basis] = []
    warp: list[Basis] = []
    for dim in order:
        reg += [unit(dim, 1 << b) for b in range(_log2(size_per_thread[dim]))]
    for dim in order:
        lane += [unit(dim, size_per_thread[dim] << b) for b in range(_log2(tpw[dim]))]
    for dim in order:
        warp += [unit(dim, size_per_thread[dim] * tpw[dim] << b) for b in range(_log2(wpc[dim]))]
    for dim in order:  # a tile smaller than the tensor repeats in registers
        tile = size_per_thread[dim] * tpw[dim] * wpc[dim]
        while tile < shape[dim]:
            reg.append(unit(dim, tile))
            tile *= 2
    return Layout(tuple(shape), tuple(reg), tuple(lane), tuple(warp))


def slice_of(parent_shape: tuple[int, ...], size_per_thread: tuple[int, ...], order: tuple[int, ...],
             num_warps: int, dim: int) -> Layout:
    """#ttg.slice<{dim, parent = #blocked}>: the parent laid out with extent 1 in `dim`, that dim dropped;
    registers that became broadcasts are removed (SliceEncodingAttr::toLinearLayout)."""
    one = tuple(1 if d == dim else n for d, n in enumerate(parent_shape))
    full = blocked(one, size_per_thread, order, num_warps, encoding_shape=parent_shape)

    def drop(b: Basis) -> Basis:
        return tuple(c for d, c in enumerate(b) if d != dim)

    shape = drop(one)
    reg = tuple(drop(b) for b in full.reg if any(drop(b)))
    return Layout(shape, reg, tuple(drop(b) for b in full.lane), tuple(drop(b) for b in full.warp))


def _bases(layout: Layout, kind: str) -> list[int]:
    return layout.flat_bases(kind)


def needs_shared_memory(src: Layout, dst: Layout) -> bool:
    """cvtNeedsSharedMemory (triton lib/Analysis/Utility.cpp): not a register permutation and not a warp
    shuffle. Data crosses warps when a destination warp bit differs from a non-broadcast source warp bit or
    a destination thread needs positions the source keeps in other warps."""
    s_reg, s_lane, s_warp = (set(_bases(src, k)) - {0} for k in ("reg", "lane", "warp"))
    d_reg, d_lane, d_warp = _bases(dst, "reg"), _bases(dst, "lane"), _bases(dst, "warp")
    sw = _bases(src, "warp")
    for i, w in enumerate(sw):
        if w and (i >= len(d_warp) or d_warp[i] != w):
            return True
    if any(b in s_warp for b in d_reg + d_lane if b):
        return True
    sl = _bases(src, "lane")
    if all(b in s_reg for b in d_reg if b) and list(d_lane) == list(sl):
        return False  # registers only
    # Inside one warp the conversion is a permutation of register and lane bits; a warp shuffle handles
    # at most one register<->lane transposition (cvtNeedsWarpShuffle: mixedTranspositions.size() < 2).
    # Measured (Triton 3.9, 1 warp): [64] 2/thread → slice of [2,64] 4/thread: one bit moves, shuffles
    # (0 B); [32] 1/thread → slice of [8,32] 8/thread: three bits move, 128 B of scratch.
    reg_to_lane = sum(1 for b in d_lane if b and b in s_reg)
    lane_to_reg = sum(1 for b in d_reg if b and b in s_lane)
    return max(reg_to_lane, lane_to_reg) >= 2


def scratch_elements(src: Layout, dst: Layout, bitwidth: int) -> int:
    """Elements of the swizzled scratch of one conversion: numel / reps, where reps are the segment bases
    that both layouts keep in registers (GenericSwizzling.cpp: getVbasis, computeSegment, buildReps; the
    generic ld.shared/st.shared path, i.e. no ldmatrix/stmatrix tile)."""
    numel = 1
    for n in src.shape:
        numel *= n
    dim = _log2(numel)
    reg_s = [b for b in _bases(src, "reg") if b]
    reg_d = [b for b in _bases(dst, "reg") if b]
    lane_s, lane_d = _bases(src, "lane"), _bases(dst, "lane")
    vec = [b for b in reg_s if b in reg_d][:_log2(128 // bitwidth)]
    use_src = True
    if (1 << len(vec)) * bitwidth < 32:
        per_bank = _log2(32 // bitwidth)
        pre_s, pre_d = reg_s[:len(vec)] == vec, reg_d[:len(vec)] == vec
        if vec and not pre_s and not pre_d:
            reg_s = vec + [b for b in reg_s if b not in vec]
            reg_d = vec + [b for b in reg_d if b not in vec]
            pre_s = pre_d = True

        def fill(regs: list[int]) -> list[int]:
            return vec + regs[len(vec):per_bank]

        if pre_s and pre_d:
            more_s = _extra_vector(reg_s, fill(reg_s), set(lane_d), bitwidth)
            more_d = _extra_vector(reg_d, fill(reg_d), set(lane_s), bitwidth)
            pre_s = len(more_s) >= len(more_d)
        use_src = pre_s
        vec = fill(reg_s if use_src else reg_d)
    vec = vec + (_extra_vector(reg_s, vec, set(lane_d), bitwidth) if use_src
                 else _extra_vector(reg_d, vec, set(lane_s), bitwidth))

    def tile(regs: list[int], lanes: list[int]) -> list[int]:
        prefix = 0
        while prefix < len(vec) and prefix < len(regs) and regs[prefix] == vec[prefix]:
            prefix += 1
        bits = (1 << prefix) * bitwidth
        if bits > 32:
            lanes = lanes[:len(lanes) - _log2(bits // 32)]
        return [b for b in lanes if b not in vec]

    tile_s, tile_d = tile(reg_s, lane_s), tile(reg_d, lane_d)
    len_bank = min(_log2(max(1, 1024 // ((1 << len(vec)) * bitwidth))), dim - len(vec))
    len_segment = dim - len_bank - len(vec)
    segment = _segment(set(vec + tile_s) - {0}, set(vec + tile_d) - {0}, dim, len_segment)
    both = set(reg_s) & set(reg_d)
    reps = sum(1 for s in segment if s in both)
    return numel >> reps


def _extra_vector(regs: list[int], vec: list[int], other_lanes: set[int], bitwidth: int) -> list[int]:
    """Register bits beyond the vector that are lane bits of the other layout (more vectorisation on one
    side without bank conflicts on the other), at most 128 bits per access."""
    limit = _log2(128 // max(bitwidth, 32))
    out: list[int] = []
    for r in regs:
        if len(out) >= limit:
            break
        if r not in vec and r in other_lanes:
            out.append(r)
    return out


def _segment(bank_src: set[int], bank_dst: set[int], dim: int, length: int) -> list[int]:
    """computeSegment: free bits first (lowest first), then conflict-free xors of the two difference sets,
    then the bits that cost bank conflicts."""
    segment = [1 << b for b in range(dim) if (1 << b) not in bank_src and (1 << b) not in bank_dst]
    if len(segment) >= length:
        return segment[:max(0, length)]
    a = sorted(bank_src - bank_dst)
    b = sorted(bank_dst - bank_src)
    if len(a) > len(b):
        a, b = b, a
    conflicts = min(max(0, length - len(a) - len(segment)), len(a))
    segment += [x ^ y for x, y in zip(a[conflicts:], b[conflicts:])]
    segment += a[:conflicts] + b[:conflicts]
    return segment[:length]
