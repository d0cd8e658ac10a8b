"""kernlint.frontend.cst_reuse: the tree assembled from re-used chunks is libcst's tree of the whole text."""
from __future__ import annotations

import ast
from pathlib import Path

import libcst as cst
import pytest

from kernlint.frontend.cst_reuse import StatementCache

ROOT = Path(__file__).resolve().parents[2]
FILES = sorted([*(ROOT / "examples").glob("*.py"), *(ROOT / "tests" / "truth").glob("*.py")])

ODD = '''# header comment

import triton  # trailing
a = 1; b = 2
@triton.jit
def k(x):
    if x:
        pass
        # indented after the block

    # and another, after a blank line
# column 0, before the next statement

class C:
    def f(self): return 1
x = (1,
     2)  # end
# footer
'''


def _same(text: str, cache: StatementCache) -> None:
    assembled = cache.module(text, ast.parse(text))
    assert assembled is not None
    full = cst.parse_module(text)
    assert assembled.code == text
    assert assembled.deep_equals(full)
    assert assembled.default_indent == full.default_indent


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_assembled_tree_equals_whole_parse(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    cache = StatementCache()
    _same(text, cache)
    lines = text.splitlines(keepends=True)
    last = ast.parse(text).body[-1]
    middle = min([last.lineno, *(d.lineno for d in getattr(last, "decorator_list", ()))]) - 1
    for edited in ("# a new comment\n" + text, text + "\n# last line\n",
                   "".join([*lines[:middle], "\n\ny_added = 3\n", *lines[middle:]])):
        _same(edited, cache)


def test_odd_layouts() -> None:
    cache = StatementCache()
    _same(ODD, cache)
    _same(ODD.replace("pass\n", "pass  # edited\n"), cache)
    _same(ODD.replace("        # indented", "\n        # indented"), cache)


def test_only_changed_chunks_are_parsed() -> None:
    text = (ROOT / "examples" / "matmul.py").read_text(encoding="utf-8")
    cache = StatementCache()
    _same(text, cache)
    chunks = cache.parsed
    assert chunks > 5 and cache.reused == 0
    cache.parsed = 0
    _same(text.replace("tl.program_id(axis=0)", "tl.program_id(axis=0)  # edited", 1)
          if "tl.program_id(axis=0)" in text else text.replace("\n\n", "\n\n# edited\n", 1), cache)
    assert cache.parsed == 1 and cache.reused == chunks - 1


def test_repeated_chunk_is_a_distinct_node() -> None:
    text = "x = 1\n\ny = 2\n\nx = 1\n"
    cache = StatementCache()
    module = cache.module(text, ast.parse(text))
    assert module is not None and module.body[0] is not module.body[2]
    again = cache.module(text, ast.parse(text))
    assert again is not None and again.body[0] is not again.body[2]


def test_unsupported_text_falls_back() -> None:
    assert StatementCache().module("x = 1\r\ny = 2\r\n", ast.parse("x = 1\r\ny = 2\r\n")) is None
    assert StatementCache().module("# only a comment\n", ast.parse("# only a comment\n")) is None


def test_relint_parses_only_the_edited_chunk() -> None:
    from kernlint.pipeline.api import lint_source
    from kernlint.pipeline.incremental import KernelMemo, reusing

    text = (ROOT / "examples" / "softmax.py").read_text(encoding="utf-8")
    edited = text.replace("\n\n", "\n\n# an edit between statements\n", 1)
    memo = KernelMemo()
    with reusing(memo):
        lint_source(text, "softmax.py")
        cache = memo.statements("softmax.py")
        chunks, cache.parsed = cache.parsed, 0
        reused = lint_source(edited, "softmax.py").files[0]
    assert chunks > 2 and cache.parsed == 1
    fresh = lint_source(edited, "softmax.py").files[0]
    assert reused.diagnostics == fresh.diagnostics
    assert [k.estimates for k in reused.kernels] == [k.estimates for k in fresh.kernels]
