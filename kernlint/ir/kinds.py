"""What an op is: the closed set of op kinds (re-exported by kernlint.ir.nodes)."""
from __future__ import annotations

from enum import Enum


class OpKind(str, Enum):
    """What an op is: every kind the lowering emits (`Lowerer.emit` converts its `kind` and rejects any other).

    A `str` enum so a kind still prints, formats, hashes and serialises as its name (`f"{op.kind}"` is `load`,
    as `enum.StrEnum` does on Python 3.11+; this runs on 3.10 too); compare with the members, not strings.
    """

    PARAM = "param"                    # a kernel parameter (pointer or scalar) entering the graph
    PROGRAM_ID = "program_id"          # tl.program_id / tl.num_programs (attrs fn, axis); Helion's grid index
    ARANGE = "arange"                  # tl.arange; a Helion tile's index range
    FULL = "full"                      # tl.full / tl.zeros / *_like, hl.zeros / hl.full: a constant tile
    ELEMENTWISE = "elementwise"        # arithmetic, comparisons, math and other per-element functions (attr fn)
    CAST = "cast"                      # .to(dtype), tl.cast and implicit conversions (reduction inputs)
    VIEW = "view"                      # the same elements seen with another shape: x[:, None], tl.expand_dims,
                                       # tl.broadcast_to, implicit broadcasts
    RESHAPE = "reshape"                # tl.reshape / tl.view (and the reshape after tl.interleave's join)
    TRANS = "trans"                    # tl.trans / tl.permute / .T
    JOIN = "join"                      # tl.join / tl.interleave
    SPLIT = "split"                    # tl.split: one op per half
    GATHER = "gather"                  # tl.gather
    LOAD = "load"                      # tl.load, a descriptor's .load, a Helion tensor read
    STORE = "store"                    # tl.store, a descriptor's .store, a Helion tensor write
    ATOMIC = "atomic"                  # tl.atomic_*
    DOT = "dot"                        # tl.dot / tl.dot_scaled / hl.dot: a tensor-core or FMA matrix product
    REDUCE = "reduce"                  # tl.sum / max / min / argmax / reduce ...: one op per call (attrs axis, fn)
    SCAN = "scan"                      # tl.cumsum / cumprod / associative_scan
    MAKE_BLOCK_PTR = "make_block_ptr"  # tl.make_block_ptr
    ADVANCE = "advance"                # tl.advance of a block pointer
    MAKE_DESCRIPTOR = "make_descriptor"  # tl.make_tensor_descriptor (TMA)
    FOR = "for"                        # a loop (range, static_range, while) with one region and carried values
    IF = "if"                          # a run-time or undecided `if`: two regions, merged results

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)
