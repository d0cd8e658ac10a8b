"""The LSP server's pure parts (no pygls needed): position encodings, quick-fix edits, hover tables."""
from __future__ import annotations

import pytest

from conftest import ROOT
from kernlint.pipeline.api import lint_source
from kernlint.lsp import actions, hover, positions
from kernlint.rules._cases import launched_matmul

LINE = "x = 1  # a😀b é"   # 😀 is outside the BMP: 2 UTF-16 units, 4 UTF-8 bytes; é is 2 UTF-8 bytes


@pytest.mark.parametrize("encoding", [positions.UTF8, positions.UTF16, positions.UTF32])
def test_columns_round_trip_in_every_encoding(encoding: str) -> None:
    codec = {"utf-8": "utf-8", "utf-16": "utf-16-le", "utf-32": "utf-32-le"}[encoding]
    unit = {"utf-8": 1, "utf-16": 2, "utf-32": 4}[encoding]
    for col in range(len(LINE) + 1):
        units = positions.col_to_units(LINE, col, encoding)
        assert units == len(LINE[:col].encode(codec)) // unit
        assert positions.units_to_col(LINE, units, encoding) == col


def test_position_inside_a_surrogate_pair_rounds_down_and_past_the_end_clamps() -> None:
    emoji_col = LINE.index("😀")
    start = positions.col_to_units(LINE, emoji_col, positions.UTF16)
    assert positions.units_to_col(LINE, start + 1, positions.UTF16) == emoji_col
    assert positions.units_to_col(LINE, 10_000, positions.UTF16) == len(LINE)
    assert positions.col_to_units(LINE, 10_000, positions.UTF16) == len(LINE) + 1
    assert positions.normalise_encoding(None) == positions.UTF16
    assert positions.normalise_encoding("UTF-8") == positions.UTF8


def test_span_to_range_is_zero_based_and_clamps_lines() -> None:
    from kernlint.core.diagnostic import Span

    lines = ["a = 1", LINE]
    start, end = positions.span_to_range(Span.at("f.py", 2, 0, 2, len(LINE)), lines)
    assert (start.line, start.character, end.line, end.character) == (1, 0, 1, len(LINE) + 1)
    start, end = positions.span_to_range(Span.at("f.py", 40, 3), lines)   # stale line: clamped, not an error
    assert (start.line, end.line) == (1, 1)


def _apply(lines: list[str], fix: actions.Fix) -> list[str]:
    e = fix.edit
    out = list(lines)
    text = out[e.line - 1]
    out[e.line - 1] = text[:e.start_col] + e.new_text + text[e.end_col:]
    return out


def test_noqa_appends_or_extends_an_existing_list() -> None:
    lines = ["    offs = tl.arange(0, 48)   "]
    fix = actions.noqa_fix(lines, 1, "KL301")
    assert fix is not None and _apply(lines, fix) == ["    offs = tl.arange(0, 48)  # kernlint: noqa[KL301]"]
    lines = ["    acc = f(x)  # kernlint: noqa[KL201]  # why"]
    fix = actions.noqa_fix(lines, 1, "KL301")
    assert fix is not None and _apply(lines, fix) == ["    acc = f(x)  # kernlint: noqa[KL201, KL301]  # why"]
    assert actions.noqa_fix(["x  # kernlint: noqa[KL301]"], 1, "KL301") is None     # already there
    assert actions.noqa_fix(["x  # kernlint: noqa"], 1, "KL301") is None            # bare noqa covers it
    assert actions.noqa_fix(["x = a + \\", "    b"], 1, "KL301") is None            # would break the continuation
    assert actions.noqa_fix(['s = """start', 'KL inside', '"""'], 2, "KL301") is None  # inside a string
    assert actions.noqa_fix(["x"], 5, "KL301") is None
    colon = ["x = 1  # kernlint: noqa: KL201"]                                       # ruff's spelling
    fix = actions.noqa_fix(colon, 1, "KL301")
    assert fix is not None and _apply(colon, fix) == ["x = 1  # kernlint: noqa: KL201, KL301"]


def test_shared_memory_fix_rewrites_the_launch_literal_and_clears_the_finding() -> None:
    source = launched_matmul("BLOCK_M=256, BLOCK_N=256, BLOCK_K=64, num_warps=8, num_stages=4")
    result = lint_source(source, "mm.py").files[0]
    (d,) = [d for d in result.diagnostics if d.code == "KL101"]
    data = {"kernel": d.kernel, "target": d.target, "config": d.config, "line": d.span.start.line}
    fixes = actions.config_fixes(source, result.kernels, d.code, data)
    assert fixes and fixes[0].title.startswith("Set num_stages=")
    fixed = "\n".join(_apply(source.split("\n"), fixes[0]))
    assert "num_stages=4" not in fixed and fixed.count("num_stages=") == 1
    assert not [x for x in lint_source(fixed, "mm.py").diagnostics if x.code == "KL101"]


def test_no_config_fix_without_a_literal_to_edit() -> None:
    # The same overflow from Triton's default num_stages: there is no literal, so no edit is offered.
    source = launched_matmul("BLOCK_M=256, BLOCK_N=256, BLOCK_K=128, num_warps=8")
    result = lint_source(source, "mm.py").files[0]
    overflows = [d for d in result.diagnostics if d.code == "KL101"]
    assert overflows
    for d in overflows:
        data = {"kernel": d.kernel, "target": d.target, "config": d.config, "line": d.span.start.line}
        assert actions.config_fixes(source, result.kernels, d.code, data) == []


def test_hover_covers_header_lines_and_config_lines() -> None:
    source = launched_matmul("BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, num_warps=4, num_stages=3")
    result = lint_source(source, "mm.py").files[0]
    (k,) = result.kernels
    assert hover.kernel_at_line(result.kernels, k.jit.decorator_line) == (k, None)
    launch_line = k.points[0].line
    assert hover.kernel_at_line(result.kernels, launch_line) == (k, launch_line)
    assert hover.kernel_at_line(result.kernels, 1) is None
    text = hover.hover_markdown(k)
    assert "| BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, num_warps=4, num_stages=3 | h100 |" in text
    assert "registers" in text and "shared memory" in text


def test_a_shared_memory_fix_that_leaves_a_spill_says_so_and_is_not_preferred() -> None:
    # examples/matmul.py's 256x256x64 config at 8 warps: 262,144 B of shared memory at 4 stages (KL401), and
    # 256·256 fp32 accumulators over 256 threads are 256 registers before anything else: it spills at any
    # stage count, which the KL401 hid. 3 stages fit the 232,448 B of an H100 (4 × 64 KiB > that > 3 × 64 KiB).
    source = (ROOT / "examples" / "matmul.py").read_text()
    result = lint_source(source, "examples/matmul.py").files[0]
    (d,) = [d for d in result.diagnostics if d.code == "KL401"]
    data = {"kernel": d.kernel, "target": d.target, "config": d.config, "line": d.span.start.line}
    (fix,) = actions.config_fixes(source, result.kernels, d.code, data)
    assert fix.title.startswith("Set num_stages=3 (est. 196,608 B shared memory; still spills est. ")
    assert not fix.preferred
