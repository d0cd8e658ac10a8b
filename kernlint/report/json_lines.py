"""JSON Lines: one diagnostic object per line (the `json` format's diagnostic schema), for streaming tools."""
from __future__ import annotations

import json
from typing import TextIO

from kernlint.api import LintResult
from kernlint.report import ReportContext
from kernlint.report.json_format import diagnostic_json


def render(result: LintResult, out: TextIO, ctx: ReportContext) -> None:
    for d in result.diagnostics:
        # sort_keys + compact separators: a line is a stable key for dedup/grep in CI logs
        out.write(json.dumps(diagnostic_json(d), sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n")
