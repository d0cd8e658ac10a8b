"""Declared model passes: each measured compiler behaviour the register and shared-memory models apply is one
`Pass` record (name, mechanism, targets, constants with their provenance, function), and the models are
ordered tuples of them (`registers.REGISTER_PASSES`, `smem.SMEM_PASSES`), run by `run_passes`.

An estimate can run with some passes disabled (`estimate(..., disabled=frozenset({...}))`), which is how
benchmarks/ablation.py measures what each mechanism earns on the recorded truth. Passes marked `essential`
are the model's skeleton (the tile costs, the live-set sweep, the budget), not mechanisms: they cannot be
disabled.

Imports only kernlint.hardware (the lint path never imports triton or torch).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from kernlint.hardware.specs import GpuSpec

# The values of GpuSpec.tensor_core: the MMA flavour Triton emits for tl.dot on a target.
TARGET_FAMILIES: frozenset[str] = frozenset({"mma_sync", "wgmma", "tcgen05"})

C = TypeVar("C")


@dataclass(frozen=True, slots=True)
class Targets:
    """The targets a pass applies to, read from the GpuSpec: its tensor-core family and, where a compiler
    behaviour is tied to one ptxas or architecture rather than to a family, the GpuSpec behaviour fields
    (booleans such as `has_tma`, `delays_sunk_loads`) the target must have."""
    families: frozenset[str] = TARGET_FAMILIES
    needs: tuple[str, ...] = ()   # names of boolean GpuSpec fields that must all be true

    def applies(self, spec: GpuSpec) -> bool:
        return spec.tensor_core in self.families and all(getattr(spec, n) for n in self.needs)

    def describe(self) -> str:
        parts = ["all families" if self.families == TARGET_FAMILIES else ", ".join(sorted(self.families))]
        parts.extend(self.needs)
        return "; ".join(parts)


ALL_TARGETS = Targets()


def families(*names: str) -> Targets:
    return Targets(frozenset(names))


@dataclass(frozen=True, slots=True)
class Constant:
    """A model constant as declared by its pass: the value is imported from the mechanism module (so the
    declaration cannot drift from the code), the provenance names the measurement behind it and the gate the
    test that fails when the value is wrong (a pytest node id, "tests/<dir>/test_x.py::test_name"). Every
    declared constant is listed in docs/model-constants.md (benchmarks/model_constants.py writes it)."""
    name: str
    value: float | int | tuple[float, ...]
    unit: str
    provenance: str
    gate: str


@dataclass(frozen=True, slots=True)
class Pass(Generic[C]):
    name: str                        # unique in its list; what `disabled` names
    mechanism: str                   # one line: the compiler behaviour it models
    run: Callable[[C], None]         # reads and updates the model's state object
    module: str                      # where the mechanism lives (kernlint/analysis/<module>.py)
    targets: Targets = ALL_TARGETS
    constants: tuple[Constant, ...] = ()
    essential: bool = False          # the model's skeleton: not a mechanism, cannot be disabled


def run_passes(passes: Iterable[Pass[C]], state: C, spec: GpuSpec, disabled: frozenset[str] = frozenset()) -> None:
    """Run the passes in order on `state`, skipping those disabled and those whose targets exclude `spec`."""
    for p in passes:
        if (disabled and p.name in disabled) or not p.targets.applies(spec):
            continue
        p.run(state)


def validate_disabled(disabled: frozenset[str], *lists: Iterable[Pass[Any]]) -> None:
    """Every disabled name names a non-essential pass of one of the lists."""
    named = {p.name: p for ps in lists for p in ps}
    unknown = sorted(n for n in disabled if n not in named)
    if unknown:
        raise ValueError(f"no such pass: {', '.join(unknown)}")
    essential = sorted(n for n in disabled if named[n].essential)
    if essential:
        raise ValueError(f"essential passes cannot be disabled: {', '.join(essential)}")


class CostTable(dict[int, float]):
    """Registers per thread of each live value (value id → registers) and the sweep's step events.

    Passes change costs through the named operations (`zero`, `set`, `scale`, `set_all`, `add_event`); it is a
    dict so that the mechanism functions written against `dict[int, float]` (and their tests) read and edit it
    unchanged."""
    __slots__ = ("events",)

    def __init__(self) -> None:
        super().__init__()
        self.events: dict[int, float] = {}   # step index → registers that become live (+) or dead (−) there

    def zero(self, vid: int) -> None:
        """The value holds no general registers (in shared or tensor memory, streamed, folded)."""
        self[vid] = 0.0

    def set(self, vid: int, cost: float) -> None:
        self[vid] = cost

    def set_all(self, costs: dict[int, float]) -> None:
        """Replace the costs a mechanism computed for some values."""
        self.update(costs)

    def scale(self, vid: int, factor: float) -> None:
        """The value is held `factor` times (copies in flight, replicated across warps, unrolled)."""
        self[vid] *= factor

    def add_event(self, step: int, registers: float) -> None:
        """Registers that become live (> 0) or free (< 0) at a step, beside the values' own intervals."""
        self.events[step] = self.events.get(step, 0.0) + registers
