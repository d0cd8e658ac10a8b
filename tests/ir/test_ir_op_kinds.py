"""Op kinds are an enum (kernlint.ir.nodes.OpKind): every op of every graph has one, the enum lists only kinds
the lowering emits, and the lowering refuses a kind the enum does not list (a typo is an internal error, not a
new kind no analysis knows)."""
from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import pytest

from kernlint.pipeline.api import Settings, lint_paths
from kernlint.ir.nodes import OpKind
from kernlint.lowering import tl_calls
from kernlint.lowering.lower import Lowerer

ROOT = Path(__file__).resolve().parents[2]

# Kinds the lowering emits that no kernel of examples/ or tests/truth/ uses, each with the construct that
# makes it; RARE below lowers each of them, so none is a kind nothing emits.
ALLOWED_UNSEEN = {
    OpKind.JOIN: "tl.join, tl.interleave",
    OpKind.SPLIT: "tl.split",
    OpKind.GATHER: "tl.gather",
    OpKind.MAKE_BLOCK_PTR: "tl.make_block_ptr",
    OpKind.ADVANCE: "tl.advance",
}

RARE = '''
import triton
import triton.language as tl


@triton.jit
def rare_kernel(x_ptr, i_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    pairs = tl.interleave(x, x)
    lo, hi = tl.split(tl.join(x, x))
    picked = tl.gather(x, tl.load(i_ptr + offs), 0)
    block = tl.make_block_ptr(out_ptr, (BLOCK,), (1,), (0,), (BLOCK,), (0,))
    tl.store(tl.advance(block, (BLOCK,)), lo + hi + picked)
    tl.store(out_ptr + offs, tl.sum(pairs, 0) + offs)
'''


def _kinds(paths: list[str]) -> Counter[OpKind]:
    result = lint_paths(paths, Settings(targets=("h100",)))
    seen: Counter[OpKind] = Counter()
    kernels = [k for f in result.files for k in f.kernels]
    assert kernels
    for kernel in kernels:
        for op, _ in kernel.ir.walk():
            assert isinstance(op.kind, OpKind), (kernel.jit.qualname, op.line, op.kind)
            seen[op.kind] += 1
    return seen


@pytest.fixture(scope="module")
def corpus_kinds() -> Counter[OpKind]:
    return _kinds([str(ROOT / "examples"), str(ROOT / "tests" / "truth")])


def test_every_op_of_the_examples_and_truth_kernels_has_an_op_kind(corpus_kinds: Counter[OpKind]) -> None:
    # the common kinds are all there (a lowering that stopped emitting one would show here)
    assert {OpKind.LOAD, OpKind.STORE, OpKind.DOT, OpKind.REDUCE, OpKind.FOR, OpKind.IF} <= set(corpus_kinds)


def test_op_kind_lists_only_kinds_the_lowering_emits(corpus_kinds: Counter[OpKind], tmp_path: Path) -> None:
    unseen = set(OpKind) - set(corpus_kinds)
    assert unseen <= set(ALLOWED_UNSEEN), f"OpKind members nothing emits: {sorted(unseen - set(ALLOWED_UNSEEN))}"
    path = tmp_path / "rare.py"
    path.write_text(RARE)
    rare = _kinds([str(path)])
    assert set(ALLOWED_UNSEEN) <= set(rare), sorted(set(ALLOWED_UNSEEN) - set(rare))


def test_emit_converts_a_kind_name_and_rejects_an_unknown_one() -> None:
    lowerer = SimpleNamespace(next_id=0, call_site=None, blocks=[[]])
    Lowerer.emit(lowerer, "load", (), 3)   # type: ignore[arg-type]
    [op] = lowerer.blocks[-1]
    assert op.kind is OpKind.LOAD and f"{op.kind}" == "load" and op.line == 3
    with pytest.raises(ValueError, match="unknown op kind 'lod'"):
        Lowerer.emit(lowerer, "lod", (), 4)   # type: ignore[arg-type]
    assert len(lowerer.blocks[-1]) == 1      # nothing was added


def test_an_unknown_kind_in_the_lowering_is_an_internal_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a handler with a typo in its kind: the file gets a KL000 naming the kind, no graph with a new kind
    monkeypatch.setitem(tl_calls.HANDLERS, "program_id",
                        lambda lo, a, k, line: tl_calls.tile(lo, "programid", (), line, (), "i32"))  # type: ignore[arg-type]
    path = tmp_path / "typo.py"
    path.write_text("import triton\nimport triton.language as tl\n\n\n@triton.jit\ndef k(x_ptr):\n"
                    "    tl.store(x_ptr + tl.program_id(0), 1.0)\n")
    result = lint_paths([str(path)], Settings(targets=("h100",)))
    internal = [d for f in result.files for d in f.diagnostics if d.code == "KL000"]
    assert internal and "unknown op kind 'programid'" in internal[0].message


def _string_kind_comparisons(path: Path) -> list[str]:
    """`x.kind == "load"`, `x.kind in ("view", "cast")`: an `.kind` compared with an op kind's name spelt out;
    and, outside the lowering (where `tl.load` and `desc.store` are names of Triton functions), sets of op kinds
    by name (`_PURE = frozenset({"view", "cast"})`, compared later)."""
    names = {k.value for k in OpKind}
    sets = "lowering" not in path.parts
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if sets and isinstance(node, (ast.Tuple, ast.List, ast.Set)) and len(node.elts) > 1 and all(
                isinstance(i, ast.Constant) and i.value in names for i in node.elts):
            out.append(f"{path.relative_to(ROOT)}:{node.lineno}")
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        if not any(isinstance(e, ast.Attribute) and e.attr == "kind" for e in sides):
            continue
        for e in sides:
            items = e.elts if isinstance(e, (ast.Tuple, ast.List, ast.Set)) else [e]
            if any(isinstance(i, ast.Constant) and i.value in names for i in items):
                out.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return out


def test_op_kinds_are_compared_by_member_not_by_name() -> None:
    # the other `.kind`s of the package (Triton API members, calibrate arguments, codemod edits) never take
    # an op kind's name, so any such comparison is an op's kind spelt as a string
    files = sorted([*(ROOT / "kernlint").rglob("*.py"), *(ROOT / "rules").glob("*.py")])
    found = [hit for f in files for hit in _string_kind_comparisons(f)]
    assert not found, f"compare op kinds with OpKind members: {found}"
