"""Declared keys of the analysis results kept on a graph (`KernelIR.cache`) or on a liveness
(`Liveness.cache`, through `analysis.liveness.derived`).

Every cached analysis is a member of `Analysis`, listed here once; its key is `Analysis.X.key(*params)`, a
`CacheKey` of the member and the parameters the result depends on (a constexpr binding, num_warps, a
target). Two analyses can therefore never share an entry by choosing the same string, and a key's
parameters say what the result varies with. Two call sites that compute the same result (the sunk loads,
read by two register passes) use the same member on purpose.
"""
from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from enum import Enum


class Analysis(Enum):
    # -- on a KernelIR (depend on the graph alone, or on it and a constexpr binding) -------------------------
    DEF_USE = "def-use index"                  # KernelIR.producers / users
    SHAPE_SYMBOLS = "shape symbols"            # analysis/estimate.shape_symbols
    LIVENESS = "liveness"                      # per constexpr binding (analysis/estimate._liveness)
    SPECIALISED = "specialised"                # the graph lowered again per binding of its branch constexprs
    RECOMMEND_ESTIMATE = "recommend estimate"  # per target, constexprs, num_warps, num_stages (recommend/core)
    # -- on a Liveness (depend on it and the constexprs it was built with; analysis/liveness.derived) --------
    LOOP_OPS = "loop ops"
    STEP_POSITIONS = "step positions"
    CARRIED_INITS = "carried inits"
    CARRIED_ARGS = "carried args"              # loop op id → its block argument ids (liveness.invariant_load)
    CARRIED_ARG_SETS = "carried arg sets"      # the same as sets (computed_operands)
    READERS = "readers"
    PRODUCERS = "producers"
    RAW_LOOPS = "raw loops"                    # op id → the loops around it (computed_operands)
    DOT_PLACEMENT = "dot placement"            # per target and num_warps (analysis/placement)
    CONVERSION_SCRATCH = "conversion scratch"  # per num_warps, stmatrix, ldmatrix and dots list (smem)
    CONVERSION_ACCESSES = "conversion accesses"
    CONVERSION_SOURCES = "conversion sources"  # a memo filled while smem_convert walks
    MERGE_SOURCES = "merge sources"
    REDUCTION_SCRATCH = "reduction scratch"    # per num_warps, stmatrix, ldmatrix (smem_reduce)
    STAGED_A_MERGES = "staged-a merges"
    ACCUMULATED_LOADS = "accumulated loads"
    SUNK_LOADS = "sunk loads"
    STREAMED_VALUES = "streamed values"
    REDUCED_STREAMS = "reduced streams"
    INDEPENDENT_LOOPS = "independent loops"
    IN_PLACE_STREAMS = "in-place streams"
    CONSTANT_TILES = "constant tiles"

    def key(self, *params: Hashable) -> CacheKey:
        """The key of this analysis for these parameters."""
        return CacheKey(self, params)


@dataclass(frozen=True, slots=True)
class CacheKey:
    analysis: Analysis
    params: tuple[Hashable, ...] = ()
