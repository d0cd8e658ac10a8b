"""A Markdown summary for a CI job page (`>> $GITHUB_STEP_SUMMARY`): counts per rule and a findings table.

Everything kernlint did not write itself (messages, paths, rule names) goes through `cell` or `code`, which
follow GitHub Flavored Markdown (GFM spec 0.29): outside code spans every markup character is
backslash-escaped (§6.1 "Backslash escapes": any ASCII punctuation may be), so `ptr<fp16>` is text and not
an HTML tag that GitHub strips; inside a table a `|` is written `\\|` even in a code span (§4.10 "Tables",
the table is split on unescaped pipes before inline parsing); a code span's fence is longer than any run of
backticks in it (§6.3 "Code spans"); and no cell holds a line break, which would end the row.
"""
from __future__ import annotations

import re
from collections import Counter
from typing import TextIO

from kernlint.pipeline.results import LintResult
from kernlint.core.diagnostic import Severity
from kernlint.report import ReportContext, kernel_count, tool_errors

MAX_ROWS = 200  # GitHub caps a step summary at 1 MiB; a long table is unreadable well before that
_ICON = {Severity.ERROR: "🔴 error", Severity.WARNING: "🟡 warning", Severity.INFO: "🔵 info"}

# What could start markup inline: escapes, code, emphasis, links/images, HTML and entities, strikethrough,
# table pipes. (Block markers such as `#` or `>` only count at the start of a line, which a cell never is.)
_MARKUP = re.compile(r"([\\`*_\[\]<>&~|])")
# C0/C1 controls: a newline ends the table row, the others are invisible or dropped by the renderer
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
# a code span as GFM reads it: a backtick run, then the next run of the same length (§6.3)
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")


def _visible(text: str) -> str:
    return _CONTROL.sub(lambda m: f"\\x{ord(m[0]):02x}", text)


def _literal(text: str) -> str:
    return _MARKUP.sub(r"\\\1", _visible(text))


def code(text: str) -> str:
    """`text` as a code span that shows it verbatim inside a table cell."""
    body = _visible(text).replace("|", "\\|")
    fence = "`" * (max((len(run) for run in re.findall("`+", body)), default=0) + 1)
    # GFM strips one space from each end of a span's content, and needs one where it starts or ends with `
    pad = " " if body[:1] in ("`", " ") or body[-1:] in ("`", " ") else ""
    return f"{fence}{pad}{body}{pad}{fence}"


def cell(text: str) -> str:
    """Text safe inside a table cell and rendered as written: whitespace runs (newlines too) become one
    space, markup characters are escaped, and the message's own `code` spans stay code spans."""
    text = " ".join(text.split())
    parts, pos = [], 0
    for m in _CODE_SPAN.finditer(text):
        parts += [_literal(text[pos:m.start()]), code(m[2])]
        pos = m.end()
    parts.append(_literal(text[pos:]))
    return "".join(parts)


def render(result: LintResult, out: TextIO, ctx: ReportContext) -> None:
    diags = result.diagnostics
    files = len(result.files)
    kernels = sum(kernel_count(f) for f in result.files)
    errors = tool_errors(result)
    targets = cell(", ".join(ctx.targets))
    lines = ["## kernlint", ""]
    if not diags and errors:   # exit status 2: something went unchecked, so nothing "passed"
        lines.append(f"❌ No findings, but kernlint could not check everything ({len(errors)} error(s) below): "
                     f"{files} file(s), {kernels} kernel(s) on {targets}.")
    elif not diags:
        lines.append(f"✅ All checks passed: {files} file(s), {kernels} kernel(s) on {targets}.")
    else:
        by_sev = Counter(d.severity for d in diags)
        parts = ", ".join(f"{by_sev[s]} {s.value}" for s in Severity if by_sev[s])
        lines += [f"**{len(diags)} finding(s)** ({parts}) in {files} file(s), {kernels} kernel(s), "
                  f"targets: {targets}.", "",
                  "| code | rule | severity | count |", "|---|---|---|---:|"]
        counts = Counter((d.code, d.rule, d.severity) for d in diags)
        for (rule_code, rule, sev), n in sorted(counts.items(), key=lambda kv: (kv[0][0], kv[0][1])):
            lines.append(f"| {code(rule_code)} | {cell(rule)} | {_ICON[sev]} | {n} |")
        lines += ["", "| location | code | severity | message |", "|---|---|---|---|"]
        for d in diags[:MAX_ROWS]:
            where = code(f"{ctx.relpath(d.span.path)}:{d.span.start.line}:{d.span.start.col + 1}")
            lines.append(f"| {where} | {code(d.code)} | {_ICON[d.severity]} | {cell(d.message)} |")
        if len(diags) > MAX_ROWS:
            lines += ["", f"… and {len(diags) - MAX_ROWS} more; run `kernlint check` locally for all of them."]
    for err in errors:   # internal errors, then paths that could not be linted
        lines += ["", f"> ⚠️ {cell(err)}"]
    out.write("\n".join(lines) + "\n")
