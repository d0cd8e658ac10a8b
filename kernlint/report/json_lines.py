"""JSON Lines: one diagnostic object per line (the `json` format's diagnostic schema), for streaming tools.

A file the engine failed on is a KL000 line, so a consumer that reads only this stream sees the failure.
Paths that could not be linted (`LintResult.path_errors`) name no linted file, so they have no line here:
they are on stderr and make the exit status 2."""
from __future__ import annotations

import json
from typing import TextIO

from kernlint.pipeline.results import LintResult
from kernlint.report import ReportContext, findings
from kernlint.report.json_format import diagnostic_json


def render(result: LintResult, out: TextIO, ctx: ReportContext) -> None:
    for d in findings(result):
        # sort_keys + compact separators: a line is a stable key for dedup/grep in CI logs
        out.write(json.dumps(diagnostic_json(d), sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n")
