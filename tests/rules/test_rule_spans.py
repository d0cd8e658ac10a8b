"""Where a finding's span points: the expression its message names, also when that expression spans lines
(`Rule.diagnostic(code=...)`, kernlint/pipeline/rule.py `locate_code`)."""
from __future__ import annotations

from kernlint.pipeline.api import Settings, lint_source
from kernlint.pipeline.rule import locate_code

KERNEL = '''import triton
import triton.language as tl


@triton.jit
def k(x_ptr, row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    off = (row
           * row_stride)
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + off + offs, tl.load(x_ptr + off + offs))
'''


def test_a_multi_line_expression_is_marked_from_its_first_to_its_last_token() -> None:
    # KL303 names `row * row_stride`; the source spells it over lines 8-9 (it marked 8:1-8:15, the whole line 8)
    result = lint_source(KERNEL, "k.py", Settings(select=("KL303",), cli_configs=({"BLOCK": 128},)))
    (d,) = result.diagnostics
    assert (d.span.start.line, d.span.start.col, d.span.end.line, d.span.end.col) == (8, 11, 9, 23)


def test_locate_code_cases() -> None:
    lines = ["a = x * y", "b = (x", "     * y)", "c = x * y + x * y"]
    assert locate_code(lines, 1, "x * y") == (4, 1, 9)          # on the line: as before
    assert locate_code(lines, 2, "x * y") == (5, 3, 8)          # over two lines
    assert locate_code(lines, 4, "x * y") is None               # twice: ambiguous, the caller marks the line
    assert locate_code(lines, 3, "q") is None and locate_code(lines, 9, "x") is None
    # on a later line of the same statement (the IR places it on the statement's first line): from the
    # statement's first token to the end of the expression, so a noqa on either line still applies
    stmt = ["    q = (", "        a + x * y", "    )", "r = x * y"]
    assert locate_code(stmt, 1, "x * y") == (4, 2, 17)
    assert locate_code(["q = 1", "r = x * y"], 1, "x * y") is None     # another statement: not this one


HELPER_WITH = '''import triton
import triton.language as tl


@triton.jit
def _helper(x):
    with open("x") as f:
        pass
    return x * 2


@triton.jit
def k1(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, _helper(tl.load(x_ptr + offs)))


@triton.jit
def k2(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, _helper(tl.load(x_ptr + offs)) + 1)
'''


def test_a_construct_in_a_helper_is_reported_once_naming_its_kernels() -> None:
    # inlined into k1 and k2, the helper's unmodelled `with` was one KL002 per calling kernel at the same line
    result = lint_source(HELPER_WITH, "k.py", Settings(select=("KL002",), cli_configs=({"BLOCK": 128},)))
    (d,) = result.diagnostics
    assert d.span.start.line == 7 and "`k1` and 1 more kernel" in d.message


def test_kl303_says_when_the_value_is_derived_from_a_program_id() -> None:
    text = KERNEL.replace("    off = (row\n           * row_stride)\n", "    off = (row // 2) * row_stride\n")
    result = lint_source(text, "k.py", Settings(select=("KL303",), cli_configs=({"BLOCK": 128},)))
    (d,) = result.diagnostics
    assert "multiplies `" in d.message and "(derived from a program id)" in d.message, d.message
    (direct,) = lint_source(KERNEL, "k.py", Settings(select=("KL303",), cli_configs=({"BLOCK": 128},))).diagnostics
    assert "multiplies a program id" in direct.message
