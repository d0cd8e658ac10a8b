"""The language server's re-lint reuses unchanged kernels' analyses (kernlint/pipeline/incremental.py): after every
kind of edit its diagnostics and estimates are those of a fresh lint of the same text."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kernlint.pipeline.incremental import KernelMemo, ModuleInputs, reusing
from kernlint.lsp.server import KernlintServer

DOC = '''import torch
import triton
import triton.language as tl

BLOCK = 1024
SCALE = 2.0


@triton.jit
def _scaled(x, s):
    return x * s


@triton.jit
def scale_kernel(out_ptr, in_ptr, n, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n
    x = tl.load(in_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, _scaled(x, 2.0), mask=mask)


@triton.autotune(configs=[triton.Config({"BLOCK_M": 64, "BLOCK_N": 64}, num_warps=4, num_stages=3),
                          triton.Config({"BLOCK_M": 128, "BLOCK_N": 128}, num_warps=8, num_stages=4)],
                 key=["M", "N"])
@triton.jit
def copy_kernel(out_ptr, in_ptr, M, N, stride, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    ptrs = rm[:, None] * stride + rn[None, :]
    x = tl.load(in_ptr + ptrs)
    tl.store(out_ptr + ptrs, x)


@triton.jit
def row_sum_kernel(out_ptr, in_ptr, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    x = tl.load(in_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
    tl.store(out_ptr + row, tl.sum(x, axis=0))


def scale(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    n = x.numel()
    scale_kernel[(triton.cdiv(n, BLOCK),)](out, x, n, BLOCK_SIZE=BLOCK, num_warps=4)
    return out


def row_sum(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty(x.shape[0], device=x.device, dtype=torch.float32)
    row_sum_kernel[(x.shape[0],)](out, x, x.shape[1], BLOCK_SIZE=4096, num_warps=16)
    return out
'''

# (what the edit does, old text, new text, kernels the re-lint must analyse again: None = any number)
EDITS: list[tuple[str, str, str, int | None]] = [
    ("a comment between statements", "\n\n@triton.jit\ndef _scaled", "\n# a note\n@triton.jit\ndef _scaled", 0),
    ("a kernel's body", "tl.store(out_ptr + row, tl.sum(x, axis=0))",
     "tl.store(out_ptr + row, tl.max(x, axis=0))", 1),
    ("a launch's num_warps", "BLOCK_SIZE=4096, num_warps=16", "BLOCK_SIZE=4096, num_warps=2", 1),
    ("a module constant a launch reads", "BLOCK = 1024", "BLOCK = 128", 1),
    ("a helper a kernel calls", "return x * s", "return x * s + 1.0", 1),
    ("an autotune config", '"BLOCK_N": 128}, num_warps=8', '"BLOCK_N": 256}, num_warps=8', 1),
    ("a noqa comment in a kernel", "    x = tl.load(in_ptr + ptrs)\n", "    x = tl.load(in_ptr + ptrs)  # noqa: KL999\n", 1),
    ("an unknown tl attribute in a helper (Triton API rules)", "return x * s + 1.0", "return tl.cidv(x, s)", 1),
    ("an unknown keyword in a kernel", "x = tl.load(in_ptr + offs, mask=mask)", "x = tl.load(in_ptr + offs, msk=mask)", 1),
    ("the keyword fixed", "x = tl.load(in_ptr + offs, msk=mask)", "x = tl.load(in_ptr + offs, mask=mask)", 1),
    ("a line inserted at the top (every kernel moves)", "import torch\n", "import torch\nimport math\n", 3),
    ("a syntax error", "def row_sum(x", "def row_sum(x,,", None),
    ("the syntax error fixed", "def row_sum(x,,", "def row_sum(x", None),
    ("an unused constant", "SCALE = 2.0", "SCALE = 3.0", 0),
]


def _summary(linted: Any) -> tuple[Any, ...]:
    r = linted.result
    return (r.diagnostics, [(k.jit.qualname, k.jit.line, k.points, k.estimates) for k in r.kernels],
            r.internal_error)


@pytest.mark.parametrize("uri", ["untitled:Untitled-1", "file:///tmp/kernlint_incremental_doc.py"])
def test_every_edit_lints_as_a_fresh_lint_and_reuses_the_unchanged_kernels(uri: str) -> None:
    server = KernlintServer(debounce_s=0)
    text = DOC
    first = server.lint_text(uri, text, 0)
    assert len(first.result.kernels) == 3 and first.result.internal_error is None
    memo = server.memo(uri)
    for n, (what, old, new, analysed) in enumerate(EDITS, 1):
        assert old in text, what
        text = text.replace(old, new, 1)
        misses = memo.misses
        incremental = server.lint_text(uri, text, n)
        fresh = KernlintServer(debounce_s=0).lint_text(uri, text, n)
        assert _summary(incremental) == _summary(fresh), what
        if "tl attribute" in what:
            assert any(d.code == "KL310" for d in incremental.result.diagnostics), what
        if analysed is not None:
            assert memo.misses - misses == analysed, what
    assert memo.hits > 0


def test_a_helper_file_changed_on_disk_is_an_input(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a kernel calling a jit helper of another module: the helper's file is part of every key, so editing
    # it on disk re-analyses the kernel even though the document did not change
    (tmp_path / "helpers.py").write_text("import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
                                         "def widen(x):\n    return x.to(tl.float32)\n", encoding="utf-8")
    doc = ("import triton\nimport triton.language as tl\nfrom helpers import widen\n\n\n@triton.jit\n"
           "def k(out_ptr, in_ptr, BLOCK: tl.constexpr):\n    offs = tl.arange(0, BLOCK)\n"
           "    tl.store(out_ptr + offs, widen(tl.load(in_ptr + offs)))\n\n\n"
           "def run(x, y):\n    k[(1,)](y, x, BLOCK=1024)\n")
    (tmp_path / "main.py").write_text(doc, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    uri = (tmp_path / "main.py").as_uri()
    server = KernlintServer(debounce_s=0)
    server.lint_text(uri, doc, 0)
    memo = server.memo(uri)
    server.lint_text(uri, doc, 1)
    assert (memo.hits, memo.misses) == (1, 1)
    (tmp_path / "helpers.py").write_text("import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
                                         "def widen(x):\n    return x.to(tl.float64)\n", encoding="utf-8")
    again = server.lint_text(uri, doc, 2)
    assert memo.misses == 2
    assert _summary(again) == _summary(KernlintServer(debounce_s=0).lint_text(uri, doc, 2))


def test_the_digest_follows_names_to_their_definitions() -> None:
    import ast

    text = ("import triton.language as tl\nfrom x import *\nA = 1\nB = A + 1\nC = 3\n\n"
            "def k():\n    return B\n\n\nclass K:\n    def m(self):\n        global D\n        D = 1\n")
    inputs = ModuleInputs(text, ast.parse(text))
    k = inputs.statement_at(7)
    assert k == 5
    # k reads B, which reads A; the star import may define anything; C and the class are not read
    assert inputs.closure(k) == [1, 2, 3, 5]
    assert inputs.digest(1000, "") is None
    assert inputs.defines["D"] == [6] and inputs.defines["tl"] == [0]


def test_a_memo_is_only_used_inside_reusing() -> None:
    from kernlint.pipeline.api import lint_source
    from kernlint.pipeline.incremental import current

    memo = KernelMemo()
    assert current() is None
    with reusing(memo):
        assert current() is memo
        lint_source(DOC, "doc.py")
        lint_source(DOC, "doc.py")
    assert current() is None
    assert (memo.hits, memo.misses) == (3, 3)
    lint_source(DOC, "doc.py")
    assert (memo.hits, memo.misses) == (3, 3)


def test_a_data_file_the_autotune_list_comes_from_is_an_input(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # `configs=tables.get("scale")` read from the package's tune.yaml (frontend.data_configs): a changed table
    # re-analyses the kernel though the document did not change
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("", encoding="utf-8")
    (pkg / "tables.py").write_text("def get(op):\n    return op\n", encoding="utf-8")
    (pkg / "tune.yaml").write_text("scale:\n  - META: {BLOCK: 64}\n    num_warps: 2\n", encoding="utf-8")
    doc = ("import triton\nimport triton.language as tl\nfrom pkg import tables\n\n\n"
           "@triton.autotune(configs=tables.get(\"scale\"), key=[])\n@triton.jit\n"
           "def k(out_ptr, in_ptr, BLOCK: tl.constexpr):\n    offs = tl.arange(0, BLOCK)\n"
           "    tl.store(out_ptr + offs, tl.load(in_ptr + offs))\n")
    (pkg / "main.py").write_text(doc, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    uri = (pkg / "main.py").as_uri()
    server = KernlintServer(debounce_s=0)
    first = server.lint_text(uri, doc, 0)
    assert [(p.constexprs["BLOCK"], p.num_warps) for p in first.result.kernels[0].points] == [(64, 2)]
    memo = server.memo(uri)
    (pkg / "tune.yaml").write_text("scale:\n  - META: {BLOCK: 256}\n    num_warps: 8\n", encoding="utf-8")
    again = server.lint_text(uri, doc, 1)
    assert memo.misses == 2
    assert [(p.constexprs["BLOCK"], p.num_warps) for p in again.result.kernels[0].points] == [(256, 8)]


def test_statement_names_are_kept_per_statement_not_per_line() -> None:
    # ModuleInputs keeps each statement's names by its source and columns: two statements on one line differ
    import ast

    from kernlint.pipeline.incremental import ModuleInputs

    text = "a = 1; b = 2\nc = a\n"
    for _ in range(2):   # the second time from the kept names
        inputs = ModuleInputs(text, ast.parse(text))
        assert inputs.defines == {"a": [0], "b": [1], "c": [2]}
