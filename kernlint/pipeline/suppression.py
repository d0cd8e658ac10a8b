"""`# kernlint: noqa` suppressions: where they apply, which ones were used, and KL003 for the rest.

Three placements:
* on a line: `x = ...  # kernlint: noqa[KL101]` covers findings that start or end on that line (a line
  inside a multi-line string maps to the line where the string ends, the only place a comment fits);
* on a kernel's first decorator line: covers every finding about that kernel and inside its body;
* on a comment-only line: file level, `# kernlint: noqa` (everything) or `# kernlint: noqa[KL201]`.
Codes are rule codes or prefixes (`KL2`), as in `--select`. No codes means "all codes".
"""
from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from kernlint.core.diagnostic import Diagnostic

# `# kernlint: noqa`, `# kernlint: noqa[KL101, KL2]`, and ruff's spelling `# kernlint: noqa: KL101, KL2`
# (before, the colon form was read as a bare noqa and silenced every code on the line)
NOQA = re.compile(r"#\s*kernlint:\s*noqa(?:\[(?P<codes>[A-Za-z0-9_,\s]*)\]"
                  r"|:[ \t]*(?P<colon>[A-Za-z]+[0-9]*(?:[ \t]*,[ \t]*[A-Za-z]+[0-9]*)*))?", re.IGNORECASE)


def noqa_codes(m: re.Match[str]) -> tuple[str, ...] | None:
    """The codes a NOQA match names (upper case, in order), or None for a bare noqa (every code)."""
    raw = m.group("codes") if m.group("codes") is not None else m.group("colon")
    if raw is None:
        return None
    return tuple(dict.fromkeys(c.strip().upper() for c in raw.split(",") if c.strip()))


def comments(text: str) -> dict[int, list[tuple[int, str]]] | None:
    """(column, text) of the comment tokens on each line, or None when the text does not tokenize. A
    `# kernlint: noqa` inside a string or docstring is not a comment and suppresses nothing."""
    out: dict[int, list[tuple[int, str]]] = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                out.setdefault(tok.start[0], []).append((tok.start[1], tok.string))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None
    return out
UNUSED_CODE = "KL003"


@dataclass
class Directive:
    line: int                          # 1-based line of the comment
    col: int                           # 0-based column where `# kernlint: noqa` starts
    end_col: int
    codes: tuple[str, ...] | None      # None: every code
    file_level: bool
    kernel: str | None = None          # qualname when it sits on a kernel's decorator line
    kernel_lines: tuple[int, int] | None = None
    used: set[str] = field(default_factory=set)   # codes of findings it suppressed

    def matches_code(self, code: str) -> bool:
        return self.codes is None or any(code.startswith(c) for c in self.codes)


@dataclass(frozen=True)
class KernelSpan:
    qualname: str
    name: str
    decorator_line: int
    def_line: int


def comment_lines(text: str) -> dict[int, int]:
    """Map each line that lies inside a multi-line string token to the line where that token ends."""
    mapping: dict[int, int] = {}
    if '"""' not in text and "'''" not in text and "\\\n" not in text:
        return mapping
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.STRING and tok.end[0] > tok.start[0]:
                for line in range(tok.start[0], tok.end[0]):
                    mapping[line] = tok.end[0]
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass  # an unparsable file: comments stay where they are
    return mapping


def _extent(lines: list[str], def_line: int) -> int:
    """Last line of the `def` at `def_line`: the block ends at the next code line indented no deeper."""
    if not 0 < def_line <= len(lines):
        return def_line
    header = lines[def_line - 1]
    indent = len(header) - len(header.lstrip())
    last = def_line
    for i in range(def_line, len(lines)):
        text = lines[i]
        stripped = text.strip()
        if not stripped:
            continue
        if len(text) - len(text.lstrip()) <= indent and not stripped.startswith((")", "]", "#")):
            break
        last = i + 1
    return last


def parse_directives(lines: list[str], kernels: Iterable[KernelSpan] = ()) -> list[Directive]:
    on_decorator = {k.decorator_line: k for k in kernels}
    found: list[Directive] = []
    candidates = [i for i, line in enumerate(lines, start=1) if "noqa" in line.lower()]
    tokens = comments("\n".join(lines) + "\n") if candidates else None
    for i in candidates:
        line = lines[i - 1]
        # only comment tokens count; a file that does not tokenize falls back to the raw line
        spans = tokens.get(i, []) if tokens is not None else [(0, line)]
        m, col = next(((m, c) for c, t in spans if (m := NOQA.search(t))), (None, 0))
        if not m:
            continue
        codes = noqa_codes(m)
        d = Directive(i, col + m.start(), col + m.end(), codes or None, line.lstrip().startswith("#"))
        k = on_decorator.get(i)
        if k is not None and not d.file_level:
            d.kernel, d.kernel_lines = k.qualname, (k.decorator_line, _extent(lines, k.def_line))
        found.append(d)
    return found


def _covers(d: Directive, diag: Diagnostic, lines: set[int]) -> bool:
    if not d.matches_code(diag.code):
        return False
    if d.file_level or d.line in lines:
        return True
    if d.kernel_lines is not None:
        lo, hi = d.kernel_lines
        return diag.kernel == d.kernel or lo <= diag.span.start.line <= hi
    return False


def suppress(diagnostics: Iterable[Diagnostic], directives: list[Directive], text: str) -> list[Diagnostic]:
    """The diagnostics no directive covers; marks each directive with the codes it suppressed."""
    if not directives:
        return list(diagnostics)
    remap = comment_lines(text)
    kept: list[Diagnostic] = []
    for diag in diagnostics:
        lines = {remap.get(diag.span.start.line, diag.span.start.line), remap.get(diag.span.end.line, diag.span.end.line)}
        hit = False
        for d in directives:
            if _covers(d, diag, lines):
                d.used.add(diag.code)
                hit = True  # keep going: every directive that applies counts as used
        if not hit:
            kept.append(diag)
    return kept


@dataclass(frozen=True)
class Unused:
    directive: Directive
    codes: tuple[str, ...]             # empty: a blanket `noqa` that suppressed nothing
    unknown: tuple[str, ...]


def unused(directives: list[Directive], known: set[str]) -> list[Unused]:
    out: list[Unused] = []
    for d in directives:
        if d.codes is None:
            if not d.used:
                out.append(Unused(d, (), ()))
            continue
        unknown = tuple(c for c in d.codes if not any(k.startswith(c) for k in known))
        stale = tuple(c for c in d.codes if c not in unknown and c != UNUSED_CODE and not any(u.startswith(c) for u in d.used))
        if stale or unknown:
            out.append(Unused(d, stale, unknown))
    return out


def unknown_code_warnings(path: str, directives: list[Directive], known: set[str]) -> list[str]:
    return [f"{path}:{d.line}: unknown rule code {c} in `# kernlint: noqa[...]`"
            for d in directives if d.codes for c in d.codes if not any(k.startswith(c) for k in known)]


def needed_codes(directives: list[Directive]) -> tuple[str, ...] | None:
    """Codes (prefixes) whose rules must run to judge whether the directives are used; None = all."""
    if any(d.codes is None for d in directives):
        return None
    return tuple(dict.fromkeys(c for d in directives for c in (d.codes or ())))


def finish(diagnostics: list[Diagnostic], lines: list[str], text: str, kernels: Iterable[KernelSpan],
           enabled: set[str], known: set[str], run_extra: Callable[[tuple[str, ...] | None], list[Diagnostic]],
           report_unused: Callable[[list[Unused]], list[Diagnostic]], path: str) -> tuple[list[Diagnostic], list[str]]:
    """Apply suppressions to a file's findings; with KL003 enabled, also report the unused ones.

    To judge a suppression, the rules it names run even when they are not selected (`run_extra`); their
    findings only count as "used" and are then dropped, so `--select KL003` finds stale comments.
    """
    directives = parse_directives(lines, kernels)
    if not directives:
        return diagnostics, []
    warnings = unknown_code_warnings(path, directives, known)
    if UNUSED_CODE not in enabled:
        return suppress(diagnostics, directives, text), warnings
    extra = [d for d in run_extra(needed_codes(directives)) if d.code not in enabled]
    kept = [d for d in suppress([*diagnostics, *extra], directives, text) if d.code in enabled]
    stale = report_unused(unused(directives, known))
    # A KL003 finding is itself suppressible, by a directive naming KL003 (or a file-level one).
    kept.extend(suppress(stale, [d for d in directives if d.file_level or (d.codes and UNUSED_CODE in d.codes)], text))
    return kept, warnings
