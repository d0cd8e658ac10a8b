"""`kernlint check --diff` / `--fix --unsafe-fixes`: rewrite configs the model says cannot run.

Two fixes, both *unsafe* (they change which configs run, so a user must ask for them):
* KL401: drop a `triton.Config(...)` from a literal autotune list (in the decorator, or a module-level
  list) when it is infeasible on *every* configured target — a config that fits one of them still
  has a GPU to run on, and deleting it would lose it there. A list is never emptied.
* KL101: lower a literal `num_stages=` at a launch to the largest value whose estimate fits on every
  configured target (the estimate is re-run per candidate; no separate model).

Only findings that survived `select`/`ignore`/noqa are fixed. Writes are atomic (temp file in the same
directory + os.replace), and a file with nothing to fix is never rewritten.
"""
from __future__ import annotations

import dataclasses
import difflib
from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kernlint.core import atomic_io
from kernlint.pipeline.results import content_digest
from kernlint.core.text_lines import source_lines
from kernlint.fix.codemod import Edit, FixError, apply_edits

if TYPE_CHECKING:
    from kernlint.pipeline.results import FileResult, LintResult
    from kernlint.pipeline.rule import KernelAnalysis

__all__ = ["Edit", "FileFix", "FixError", "fix_result", "plan_file", "unified_diff", "write_atomic"]


@dataclass
class FileFix:
    path: str
    old: bytes
    new: bytes
    applied: list[Edit] = field(default_factory=list)
    skipped: list[tuple[Edit, str]] = field(default_factory=list)
    error: str | None = None

    @property
    def changed(self) -> bool:
        return self.new != self.old


def _fits(e: object) -> bool:
    return bool(getattr(e, "estimated", False)) and not e.smem_over and not e.tmem_over


def _drop_edits(kernels: list[KernelAnalysis], reported: set[tuple[int, int]],
                why: list[tuple[int, int, str, str]] | None = None) -> list[Edit]:
    by_pos: dict[tuple[int, int], list[object]] = defaultdict(list)
    for k in kernels:
        for e in k.estimates:
            if e.config.origin == "autotune":
                by_pos[(e.config.line, e.config.col)].append(e)
    edits: list[Edit] = []
    for pos in sorted(reported):
        ests = by_pos.get(pos, [])
        # every kernel using this config (a module-level list can be shared) on every target; a kernel whose
        # estimate could not be made (an unknown block size) may well run it, so it keeps the config
        if ests and all(getattr(e, "estimated", False) and not _fits(e) for e in ests):
            targets = ", ".join(sorted({e.target.key for e in ests}))  # type: ignore[attr-defined]
            edits.append(Edit("drop-config", pos[0], pos[1], "KL401",
                              f"removed an autotune config that cannot run on {targets}"))
        elif why is not None:   # say why the finding stays (`No fixes available` alone explained nothing)
            fits = next((e for e in ests if _fits(e)), None)
            generated = len({e.config.key for e in ests}) > 1  # type: ignore[attr-defined]
            reason = ("the config is not one literal triton.Config of an autotune list" if not ests else
                      "several configs come from this line (a comprehension or loop builds them)" if generated else
                      f"the list is shared with a kernel it fits ({fits.kernel} on {fits.target.key})"  # type: ignore[attr-defined]
                      if fits is not None else "the list is shared with a kernel whose estimate is unknown")
            why.append((pos[0], pos[1], "KL401", reason))
    return edits


def _stage_edits(kernels: list[KernelAnalysis], reported: set[tuple[int, int]],
                 why: list[tuple[int, int, str, str]] | None = None) -> list[Edit]:
    from kernlint.analysis.estimate import estimate

    edits: list[Edit] = []
    for pos in sorted(reported):
        best: int | None = None
        current: int | None = None
        for k in kernels:
            points = [p for p in k.points if p.origin == "launch" and (p.line, p.col) == pos]
            targets = list(dict.fromkeys(e.target for e in k.estimates))
            for p in points:
                if "num_stages" in p.defaulted:
                    continue              # no literal to lower; adding one is a different fix
                current = p.num_stages
                for stages in range(p.num_stages - 1, 0, -1):
                    trial = dataclasses.replace(p, num_stages=stages)
                    if all(_fits(estimate(k.ir, trial, t)) for t in targets):
                        best = stages if best is None else min(best, stages)
                        break
                else:
                    best = -1             # nothing fits: leave the launch alone
        if best is not None and best > 0 and current is not None:
            edits.append(Edit("set-kwarg", pos[0], pos[1], "KL101",
                              f"num_stages={current} -> {best} (the largest that fits)", "num_stages", best))
        elif why is not None:
            why.append((pos[0], pos[1], "KL101", "no smaller num_stages fits" if best == -1 else
                        "no literal num_stages= at this launch to lower"))
    return edits


def plan_file(fr: FileResult, why: list[tuple[int, int, str, str]] | None = None) -> list[Edit]:
    """The edits for one linted file, from its reported findings and its kernels' estimates; `why` collects
    (line, col, code, reason) for the findings that get no edit."""
    kl401 = {(d.span.start.line, d.span.start.col) for d in fr.diagnostics if d.code == "KL401"}
    kl101 = {(d.span.start.line, d.span.start.col) for d in fr.diagnostics if d.code == "KL101"}
    if not (kl401 or kl101) or not fr.kernels:
        return []
    return _drop_edits(fr.kernels, kl401, why) + _stage_edits(fr.kernels, kl101, why)


def fix_result(result: LintResult) -> list[FileFix]:
    """One FileFix per file with something fixable (changed or skipped); reads each file from disk."""
    out: list[FileFix] = []
    for fr in result.files:
        why: list[tuple[int, int, str, str]] = []
        edits = plan_file(fr, why)
        unplanned = [(Edit("none", line, col, code, reason), reason) for line, col, code, reason in why]
        if not edits:
            if unplanned:
                out.append(FileFix(fr.path, b"", b"", skipped=unplanned))
            continue
        try:
            with open(fr.path, "rb") as fh:
                old = fh.read()
        except OSError as exc:
            out.append(FileFix(fr.path, b"", b"", error=f"{fr.path}: cannot read: {exc.strerror}"))
            continue
        if fr.source_digest is not None and content_digest(old) != fr.source_digest:
            # the edits name lines and columns of the text that was linted, not of this one
            out.append(FileFix(fr.path, old, old, error=f"{fr.path}: changed since it was linted; not fixed "
                                                        "(run kernlint again)"))
            continue
        try:
            new, applied, skipped = apply_edits(old, edits, fr.path)
        except FixError as exc:
            out.append(FileFix(fr.path, old, old, error=str(exc)))
            continue
        out.append(FileFix(fr.path, old, new, applied, [*skipped, *unplanned]))
    return out


def unified_diff(fix: FileFix) -> str:
    """A diff `patch -p0` and `git apply -p0` accept: lines split where Python splits them (a form feed or
    U+2028 inside a line is not a break) and a last line without a newline marked as such."""
    old = source_lines(fix.old.decode("utf-8", errors="replace"), keepends=True)
    new = source_lines(fix.new.decode("utf-8", errors="replace"), keepends=True)
    out = []
    for line in difflib.unified_diff(old, new, fix.path, fix.path):
        out.append(line)
        if not line.endswith(("\n", "\r")):
            out.append("\n\\ No newline at end of file\n")
    return "".join(out)


def write_atomic(path: str, data: bytes) -> None:
    """Replace `path` with `data` in one step: a reader (or a crash) never sees half a file."""
    atomic_io.write_atomic(path, data, fsync=True)
