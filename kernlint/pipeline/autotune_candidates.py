"""Findings on one candidate of an `@triton.autotune` list whose siblings are fine become info.

The autotuner benchmarks every candidate and keeps the fastest; a candidate that spills, runs at low
occupancy or skips wgmma is simply not chosen, and one that raises `OutOfResources` or `PTXASError` while
compiling is caught and dropped (`Autotuner._bench` in triton/runtime/autotuner.py, Triton 3.2-3.9). Such a
finding is worth knowing, not a reason to fail CI, as long as another candidate is feasible for the same
target. When every candidate fails, the findings keep their severity: nothing would be left to launch.
Compile errors the autotuner does not catch (a dot dimension < 16, a non-power-of-two `tl.arange`) are not
in `DROPPED` and keep their severity always.
"""
from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from kernlint.core.diagnostic import Diagnostic, Severity

if TYPE_CHECKING:
    from kernlint.pipeline.rule import KernelAnalysis

# Per-config resource findings whose config the autotuner measures and passes over (spill KL201, low
# occupancy KL202, no wgmma KL204) or catches and drops (shared/tensor memory over the limit: OutOfResources,
# KL101 / KL401).
DROPPED = frozenset({"KL101", "KL201", "KL202", "KL204", "KL401"})

NOTE = "one of {n} autotune candidates and {ok} of them are feasible: the autotuner drops it"


def demote_dropped_candidates(diagnostics: list[Diagnostic], kernels: list[KernelAnalysis]) -> list[Diagnostic]:
    """`diagnostics` with every DROPPED finding on an autotune candidate that has a feasible sibling (for the
    same target) turned into info, its message saying why."""
    # (kernel qualname, line, col, config label) of each autotune candidate → its kernel's candidate anchors.
    # The label tells apart the candidates of one comprehension (`[triton.Config({'BK': BK}, ...) for BK in
    # [32, 64, 128] ...]`), which all sit on the Config's line and column.
    Anchor = tuple[int, int, str]
    candidates: dict[tuple[str, int, int, str], frozenset[Anchor]] = {}
    for k in kernels:
        anchors = frozenset((p.line, p.col, p.label()) for p in k.points if p.origin == "autotune")
        if len(anchors) < 2:
            continue
        for line, col, label in anchors:
            candidates[(k.jit.qualname, line, col, label)] = anchors
    if not candidates:
        return diagnostics

    def anchor(d: Diagnostic) -> tuple[str, int, int, str] | None:
        key = (d.kernel or "", d.span.start.line, d.span.start.col, d.config or "")
        return key if d.code in DROPPED and key in candidates else None

    # (kernel, target) → candidates with a warning or error finding
    failing: dict[tuple[str, str | None], set[Anchor]] = {}
    for d in diagnostics:
        if (key := anchor(d)) is not None and d.severity is not Severity.INFO:
            failing.setdefault((key[0], d.target), set()).add(key[1:])
    out: list[Diagnostic] = []
    for d in diagnostics:
        key = anchor(d)
        if key is None or d.severity is Severity.INFO:
            out.append(d)
            continue
        anchors = candidates[key]
        # a finding without a target holds for every target: it counts against siblings everywhere, and a
        # sibling must be clean on every target to rescue it
        bad = failing.get((key[0], d.target), set()) | failing.get((key[0], None), set())
        if d.target is None:
            bad = bad.union(*(s for (q, _), s in failing.items() if q == key[0]))
        ok = len(anchors - bad)
        if ok == 0:
            out.append(d)      # every candidate fails: nothing is left for the autotuner to pick
            continue
        out.append(replace(d, severity=Severity.INFO,
                           message=f"{d.message} ({NOTE.format(n=len(anchors), ok=ok)})"))
    return out
