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
            encoding_shape: tuple[int, ...] | None = None,
            params: tuple[tuple[int, ...], tuple[int, ...]] | None = None) -> Layout:
    """Linear layout of #blocked on `shape`. `encoding_shape` is the shape the encoding was built for (a
    slice's parent is laid out on the sliced shape with a 1 in the sliced dim); `params` gives threadsPerWarp
    and warpsPerCTA where a pass chose them (tl.gather's layout) instead of BlockedEncodingAttr::get."""
    tpw, wpc = params or blocked_params(encoding_shape or shape, size_per_thread, order, num_warps)
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


def mma_warps(shape: tuple[int, int], num_warps: int, wgmma: bool) -> tuple[int, int]:
    """warpsPerCTA of a dot's accumulator (triton AccelerateMatmul.cpp, warpsPerTileV2 / warpsPerTileV3):
    wgmma starts from a warp group along M (4, 1) and doubles M while the tile has 16-row slabs left, else
    N; mma.sync doubles M while a warp has at least as many 16-row slabs as 8-column ones, else N.
    Checked against Triton 3.9 TTGIR on sm_80 (#mma warpsPerCTA): 128×64 w4 [2, 2], w8 [4, 2];
    128×128 w4 [2, 2], w8 [2, 4]; 64×128 w4 [1, 4]; 64×64 w4 [2, 2]; 16×16 w4 [2, 2]; 32×16 w8 [4, 2].
    (A dot chained into another dot, as in attention, gets [num_warps, 1] in Triton: not modelled.)"""
    m, n = shape
    if wgmma:
        wm, wn = 4, 1
        while wm * wn < num_warps:
            if m > 16 * wm:
                wm *= 2
            else:
                wn *= 2
        return wm, wn
    wm, wn = 1, 1
    while wm * wn < num_warps:
        if m // 16 // wm >= n // 8 // wn:   # M keeps doubling past its 16-row slabs (replicated warps)
            wm *= 2
        else:
            wn *= 2
    return wm, wn


def mma_accumulator(shape: tuple[int, int], num_warps: int, wgmma: bool) -> Layout:
    """Linear layout of a dot's accumulator (#mma v2 on mma.sync, v3 on wgmma; triton
    LinearLayoutConversions.cpp, nvidiaMmaTile). One warp holds a 16 × 8 tile per instruction: two adjacent
    columns per thread, lanes 0-3 step columns by 2, lanes 4-31 step rows, a second register row 8 below;
    wgmma widens the instruction to 16 × instrN (N ≤ 256 and dividing the warp's share of the tile). Warps
    are stacked along M in warp groups on wgmma and row-major on mma.sync; what the warps do not cover
    repeats in registers, N before M."""
    m, n = shape
    wm, wn = mma_warps(shape, num_warps, wgmma)
    instr_n = 8
    if wgmma:
        share = max(8, n // wn)
        instr_n = next((c for c in range(min(256, share), 7, -8) if share % c == 0), 8)

    def unit(dim: int, value: int) -> Basis:
        full = (m, n)[dim]
        return tuple(value if d == dim and value < full else 0 for d in range(2))

    reg: list[Basis] = [unit(1, 1), unit(0, 8)]
    reg += [unit(1, c) for c in (8 << b for b in range(_log2(instr_n // 8)))]
    lane = [unit(1, 2), unit(1, 4), unit(0, 1), unit(0, 2), unit(0, 4)]
    along_m = [unit(0, 16 << b) for b in range(_log2(wm))]
    along_n = [unit(1, instr_n << b) for b in range(_log2(wn))]
    # a wgmma warp group is 4 consecutive warps stacked along M; mma.sync numbers its warps row-major
    warp = along_m + along_n if wgmma else along_n + along_m
    col = instr_n * wn
    while col < n:
        reg.append(unit(1, col))
        col *= 2
    row = 16 * wm
    while row < m:
        reg.append(unit(0, row))
        row *= 2
    return Layout((m, n), tuple(reg), tuple(lane), tuple(warp))


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


@dataclass(frozen=True, slots=True)
class _Tile:
    """A shared-memory instruction's lane pattern (LocalMemOpTile): lanes that hold contiguous 32-bit
    pieces of one access and lanes that address rows; registers fill the rest of a 128-bit access."""
    contig: tuple[int, ...]
    addr: tuple[int, ...]


_LD_ST = _Tile((), (0, 1, 2))
_MATRIX = _Tile((0, 1), (2, 3, 4))          # stmatrix / ldmatrix .x4
_MATRIX_TRANS = _Tile((2, 3, 4), (0, 1))    # their .trans forms (16-bit only)


def _tiles(stmatrix: bool, ldmatrix: bool, bitwidth: int) -> tuple[list[_Tile], list[_Tile]]:
    """getSrcDstTiles (TritonGPUToLLVM Utility.cpp): ld/st.shared always; stmatrix writes (GpuSpec.stmatrix:
    sm_90+) and ldmatrix reads (GpuSpec.ldmatrix: sm_75+) for elements of at most 32 bits, their .trans forms
    for 16 bits."""
    src, dst = [_LD_ST], [_LD_ST]
    if bitwidth <= 32 and stmatrix:
        src.append(_MATRIX)
    if bitwidth <= 32 and ldmatrix:
        dst.append(_MATRIX)
    if bitwidth == 16 and stmatrix:
        src.append(_MATRIX_TRANS)
    if bitwidth == 16 and ldmatrix:
        dst.append(_MATRIX_TRANS)
    return src, dst


def _pair_bases(src: Layout, dst: Layout) -> tuple[int, list[int], list[int], list[int], list[int]]:
    """log2(numel) and the non-zero register bases and the lane bases of both sides of a conversion."""
    numel = 1
    for n in src.shape:
        numel *= n
    reg_s = [b for b in _bases(src, "reg") if b]
    reg_d = [b for b in _bases(dst, "reg") if b]
    return _log2(numel), reg_s, reg_d, _bases(src, "lane"), _bases(dst, "lane")


def scratch_elements(src: Layout, dst: Layout, bitwidth: int, stmatrix: bool = False, ldmatrix: bool = True) -> int:
    """Elements of the swizzled scratch of one conversion on NVIDIA: numel / reps. Every pair of a store
    and a load instruction whose lane pattern both layouts can feed is tried; the pair with the fewest bank
    conflicts wins, ties going to more reps (a smaller buffer); with no pair the generic ld/st layout is
    used (`stmatrix` / `ldmatrix`: the target's GpuSpec fields; the defaults are sm_80's) (triton third_party/nvidia Allocation.cpp getNumScratchElemsSwizzledCvt → GenericSwizzling.cpp
    optimalSwizzling / optimalSwizzlingTile / buildReps). Measured (Triton 3.9): [256] 2/thread fp32 →
    slice of a [256, 256] 8/thread tile takes 1,024 B on sm_80 (no pair fits) and 512 B on sm_90/100
    (stmatrix lane pattern)."""
    dim, reg_s, reg_d, lane_s, lane_d = _pair_bases(src, dst)
    total = _log2(max(1, 128 // bitwidth))
    best: tuple[int, int] | None = None   # (conflicts, -reps)
    src_tiles, dst_tiles = _tiles(stmatrix, ldmatrix, bitwidth)
    for ts in src_tiles:
        for td in dst_tiles:
            n_s, n_d = total - len(ts.contig), total - len(td.contig)
            if n_s < 0 or n_d < 0:
                continue
            vec = _tile_vector(reg_s, lane_s, ts, n_s, reg_d, lane_d, td, n_d)
            if vec is None:
                continue
            tile_s = _instr_lanes(ts, reg_s, lane_s, vec)
            tile_d = _instr_lanes(td, reg_d, lane_d, vec)
            if tile_s is None or tile_d is None:
                continue
            leave = min(len(ts.contig) + len(ts.addr) - 3, len(td.contig) + len(td.addr) - 3)
            len_bank = min(_log2(max(1, 1024 // ((1 << len(vec)) * bitwidth))), dim - len(vec))
            segment = _segment(set(vec + tile_s) - {0}, set(vec + tile_d) - {0}, dim, dim - len_bank - len(vec))
            both = set(reg_s) & set(reg_d)
            reps = max(0, sum(1 for b in segment if b in both) - leave)
            conflicts = (1 << _common(segment, tile_s)) - 1 + (1 << _common(segment, tile_d)) - 1
            if best is None or (conflicts, -reps) < best:
                best = (conflicts, -reps)
    if best is None:
        return _scratch_ld_st(src, dst, bitwidth)
    return (1 << dim) >> -best[1]


def _tile_vector(reg_s: list[int], lane_s: list[int], ts: _Tile, n_s: int,
                 reg_d: list[int], lane_d: list[int], td: _Tile, n_d: int) -> list[int] | None:
    """optimalSwizzlingTile: the vector bases of an instruction pair, or None when the layouts cannot feed
    it. Normalised so side A needs at least as many register bases as side B; B's first contiguous lanes
    must be registers of A, its other contiguous lanes must be A's contiguous lanes."""
    a_reg, a_lane, a_tile, n_a = reg_s, lane_s, ts, n_s
    b_reg, b_lane, b_tile, n_b = reg_d, lane_d, td, n_d
    if n_a < n_b:
        a_reg, a_lane, a_tile, n_a, b_reg, b_lane, b_tile, n_b = b_reg, b_lane, b_tile, n_b, a_reg, a_lane, a_tile, n_a
    vec = [b for b in a_reg if b in b_reg]
    if len(vec) < n_b:
        return None
    vec = vec[:n_b]
    if max(a_tile.contig + b_tile.contig, default=-1) >= min(len(a_lane), len(b_lane)):
        return None
    a_contig = [a_lane[i] for i in a_tile.contig]
    b_contig = [b_lane[i] for i in b_tile.contig]
    if 0 in a_contig or 0 in b_contig:
        return None
    for i in range(n_a - n_b):
        if i >= len(b_tile.contig) or b_lane[b_tile.contig[i]] not in a_reg:
            return None
    tail = b_tile.contig[len(b_tile.contig) - len(a_tile.contig):] if a_tile.contig else ()
    for ia, ib in zip(a_tile.contig, tail):
        if b_lane[ib] != a_lane[ia]:
            return None
    return vec + b_contig


def _instr_lanes(tile: _Tile, regs: list[int], lanes: list[int], vec: list[int]) -> list[int] | None:
    """getTile: registers outside the vector fill the row address bits the instruction does not take from
    lanes, then the lanes that address rows."""
    needed = 3 - len(tile.addr)
    out = [r for r in regs if r not in vec][:needed]
    if len(out) < needed or max(tile.addr, default=-1) >= len(lanes):
        return None
    return out + [lanes[i] for i in tile.addr]


def _rank(vectors: list[int]) -> int:
    basis: list[int] = []
    for v in vectors:
        for b in basis:
            v = min(v, v ^ b)
        if v:
            basis.append(v)
    return len(basis)


def _common(a: list[int], b: list[int]) -> int:
    """Dimension of the intersection of the spans of two sets of F2 vectors."""
    a = [x for x in a if x]
    b = [x for x in b if x]
    return _rank(a) + _rank(b) - _rank(a + b)


def _scratch_ld_st(src: Layout, dst: Layout, bitwidth: int) -> int:
    """optimalSwizzlingLdSt: the fallback when no instruction tile fits (getVbasis, computeSegment)."""
    dim, reg_s, reg_d, lane_s, lane_d = _pair_bases(src, dst)
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
    return (1 << dim) >> reps


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
