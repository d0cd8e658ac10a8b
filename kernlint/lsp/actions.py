"""Quick fixes as plain text edits in code-point columns (the server converts them to LSP ranges).

Two kinds, both real edits that leave valid Python behind — never a placeholder:
* add `# kernlint: noqa[CODE]` to the diagnostic's line, or extend the line's existing noqa list;
* for config findings (KL101/KL401 shared or tensor memory, KL201 spills), rewrite the *literal*
  `num_stages=`/`num_warps=` of the one `triton.Config(...)` or launch call that produced the config, to
  the nearest value the estimate model says fits. Offered only when that literal exists and belongs to
  exactly one config (a literal inside a comprehension would change every config it generates).
"""
from __future__ import annotations

import dataclasses
import io
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from kernlint.analysis.estimate import KernelEstimate, estimate
from kernlint.pipeline.api import NOQA
from kernlint.pipeline.suppression import noqa_codes
from kernlint.pipeline.rule import KernelAnalysis

SMEM_CODES = ("KL101", "KL401")
SPILL_CODES = ("KL201",)


@dataclass(frozen=True, slots=True)
class TextEdit:
    line: int          # 1-based
    start_col: int     # 0-based code points
    end_col: int
    new_text: str


@dataclass(frozen=True, slots=True)
class Fix:
    title: str
    edit: TextEdit
    preferred: bool = False


def noqa_fix(lines: list[str], line: int, code: str) -> Fix | None:
    if not 0 < line <= len(lines):
        return None
    text = lines[line - 1]
    m = NOQA.search(text)
    if m:
        present = noqa_codes(m)
        if present is None:
            return None                      # a bare noqa already silences every code on the line
        if code.upper() in present:
            return None
        at = m.end() - 1 if m.group("codes") is not None else m.end()  # before `]`, or after `: KL101`
        return Fix(f"Add {code} to this line's `# kernlint: noqa`", TextEdit(line, at, at, f", {code}"))
    body = text.rstrip()
    if body.endswith("\\"):
        return None                          # a comment after a line continuation is a syntax error
    edit = TextEdit(line, len(body), len(text), f"  # kernlint: noqa[{code}]")
    if not _comment_lands(lines, edit):
        return None
    return Fix(f"Add `# kernlint: noqa[{code}]`", edit)


def _comment_lands(lines: list[str], edit: TextEdit) -> bool:
    """True when the appended text tokenizes as a comment (not inside a multi-line string).
    Documents that do not tokenize at all (half-typed code) get the benefit of the doubt."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO("\n".join(lines) + "\n").readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return True
    string_types = {tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", tokenize.STRING)}
    return not any(tok.type in string_types and tok.start[0] <= edit.line < tok.end[0] for tok in tokens)


def _find_estimate(kernels: list[KernelAnalysis], data: dict[str, Any]) -> tuple[KernelAnalysis, KernelEstimate] | None:
    for k in kernels:
        if k.jit.qualname != data.get("kernel"):
            continue
        for e in k.estimates:
            if (e.config.line == data.get("line") and e.target.key == data.get("target")
                    and (data.get("config") is None or e.config.label() == data.get("config"))):
                return k, e
    return None


def _candidates(k: KernelAnalysis, e: KernelEstimate, code: str) -> Iterator[tuple[str, int, KernelEstimate]]:
    p = e.config
    spilled = bool(e.registers and e.registers.spill_bytes)
    if code in SMEM_CODES:
        for stages in range(p.num_stages - 1, 0, -1):
            new = estimate(k.ir, dataclasses.replace(p, num_stages=stages), e.target)
            # a fix must not add a problem: a spill the config did not have is another finding
            if new.estimated and not new.smem_over and not new.tmem_over \
                    and (spilled or not (new.registers and new.registers.spill_bytes)):
                yield "num_stages", stages, new
                return
    elif code in SPILL_CODES:
        warps = p.num_warps * 2
        while warps <= 32:
            new = estimate(k.ir, dataclasses.replace(p, num_warps=warps), e.target)
            if new.estimated and new.registers is not None and not new.registers.spill_bytes and not new.smem_over:
                yield "num_warps", warps, new
                return
            warps *= 2


class _IntKwargs(cst.CSTVisitor):
    """Positions of `name=<int literal>` keyword arguments of calls that start on a given line."""

    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, line: int, name: str) -> None:
        self.line, self.name = line, name
        self.found: list[tuple[int, int, int]] = []

    def visit_Call(self, node: cst.Call) -> None:
        if self.get_metadata(PositionProvider, node).start.line != self.line:
            return
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value == self.name and isinstance(arg.value, cst.Integer):
                pos = self.get_metadata(PositionProvider, arg.value)
                if pos.start.line == pos.end.line:
                    self.found.append((pos.start.line, pos.start.column, pos.end.column))


def _literal_edit(source: str, line: int, name: str, value: int) -> TextEdit | None:
    try:
        wrapper = MetadataWrapper(cst.parse_module(source))
    except Exception:  # half-typed code: no safe edit
        return None
    visitor = _IntKwargs(line, name)
    wrapper.visit(visitor)
    spots = set(visitor.found)
    if len(spots) != 1:
        return None
    ln, start, end = spots.pop()
    return TextEdit(ln, start, end, str(value))


def config_fixes(source: str, kernels: list[KernelAnalysis], code: str, data: dict[str, Any]) -> list[Fix]:
    if code not in SMEM_CODES + SPILL_CODES:
        return []
    found = _find_estimate(kernels, data)
    if found is None:
        return []
    k, e = found
    if sum(1 for p in k.points if p.line == e.config.line) != 1:
        return []                            # several configs share this source line (comprehension, product)
    fixes: list[Fix] = []
    for name, value, new in _candidates(k, e, code):
        edit = _literal_edit(source, e.config.line, name, value)
        if edit is None:
            continue
        what = (f"est. {new.smem.total:,} B shared memory" if name == "num_stages" and new.smem
                else f"est. {new.registers.demand} registers, no spill" if new.registers else "fits")
        # a config with a second problem (a spill the shared-memory finding was hiding) is offered, but says
        # so and is not the preferred one-keystroke fix
        left = new.registers.spill_bytes if new.registers else 0
        if left:
            what += f"; still spills est. {left} B/thread"
        fixes.append(Fix(f"Set {name}={value} ({what} on {e.target.key})", edit, preferred=not left))
    return fixes
