"""The frontend's fast paths give the results of the slow ones they replaced.

frontend.walk: the cheap walks visit the same nodes, in the same order, as libcst's own machinery.

The module-facts collector used to be a libcst visitor; kernels and launch sites are kept in the order
it found them (launch order becomes config order in the output), so `iter_visit` must follow libcst's
visitor order exactly. `CSTNode.children` is libcst's own listing of a node's children in that order.
Files that cannot hold a kernel or launch skip the walk (and libcst's parse) but keep their launches,
syntax errors and nesting limits.
"""
from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest

from kernlint.frontend import walk
from kernlint.frontend.kernels import may_define_or_launch

ROOT = Path(__file__).resolve().parents[2]
# Constructs where libcst's visitor order differs from dataclass field order (see walk._VISIT_FIELDS).
ODD_ORDER = '''
import triton

def host(a, b=g(), /, c=h(), *args, d=k(), **kw):
    try:
        run[grid](a)
    except pick(errors) as err:
        other[grid](err)
    match a:
        case [x] if check(x):
            fun[grid](x)
    label = f"{a(1):{width(2)}}"
    value = f1() if cond() else f2()
    return call(key=one(), *two())

@dec(1)
class C(Base, metaclass=meta()):
    @triton.jit
    def kern(x, BLOCK: tl.constexpr = size()):
        pass
'''


def _sources() -> list[str]:
    files = sorted((ROOT / "examples").glob("*.py")) + sorted((ROOT / "tests/truth/suite_kernels").glob("*.py"))
    return [ODD_ORDER, *(f.read_text() for f in files)]


def _libcst_children(node: cst.CSTNode) -> list[cst.CSTNode]:
    # `async` markers are never read by kernlint; the walks skip them like whitespace.
    return [c for c in node.children
            if walk._kind(type(c)) == walk._NODE and not isinstance(c, cst.Asynchronous)]


@pytest.mark.parametrize("index", range(len(_sources())))
def test_visit_order_is_libcst_order(index: int) -> None:
    module = cst.parse_module(_sources()[index])
    for node in walk.iter_nodes(module):
        assert [id(c) for c in walk._child_nodes(node, visit_order=True)] == \
            [id(c) for c in _libcst_children(node)], type(node).__name__


class _Recorder(cst.CSTVisitor):
    def __init__(self) -> None:
        self.events: list[tuple[int, bool]] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, (cst.Call, cst.FunctionDef, cst.ClassDef)):
            self.events.append((id(node), True))
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        if isinstance(original_node, (cst.FunctionDef, cst.ClassDef)):
            self.events.append((id(original_node), False))


def test_iter_visit_matches_a_libcst_visitor() -> None:
    scopes = frozenset((cst.FunctionDef, cst.ClassDef))
    for source in _sources():
        module = cst.parse_module(source)
        recorder = _Recorder()
        module.visit(recorder)
        ours = [(id(n), entering) for n, entering in walk.iter_visit(module, scopes)
                if isinstance(n, (cst.Call, cst.FunctionDef, cst.ClassDef))]
        assert ours == recorder.events


@pytest.mark.parametrize("source", [
    "k[grid](x)", "k[grid] (x)", "f(k[grid]  # why\n  (x))", "k[grid]\\\n(x)", "f(k[g]\r\n  # c\r\n  (x))",
    "from triton import jit as J", "import triton\n@triton.jit\ndef f(): pass",
])
def test_precheck_keeps_files_that_may_define_or_launch(source: str) -> None:
    assert may_define_or_launch(source)


@pytest.mark.parametrize("source", ["x = a[1] + f(2)", "y = b[0]  # (not a call)\n", "z = '#' * 80 + ']' + '#' * 4000"])
def test_precheck_skips_files_without_kernels_or_launches(source: str) -> None:
    assert not may_define_or_launch(source)


KERNEL_FILE = b'''import triton
import triton.language as tl


@triton.jit
def add(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs))
'''
# Never says the three letters of the decorator; only its launch syntax keeps it on the full path.
HOST_FILE = b'''from kern import add


def run(x):
    add[(1,)](  # grid
        x, BLOCK=128)
'''


def test_a_launch_in_a_file_without_kernels_still_configures_the_kernel() -> None:
    from kernlint.pipeline.api import lint_sources

    result = lint_sources([("kern.py", KERNEL_FILE), ("host.py", HOST_FILE)])
    (kernel,) = result.files[0].kernels
    assert [(p.origin, dict(p.constexprs)) for p in kernel.points] == [("launch", {"BLOCK": 128})]


def test_files_without_kernels_report_syntax_errors_like_before() -> None:
    from kernlint.pipeline.api import _parse
    from kernlint.frontend.parse import ParseFailure, parse_text

    # a syntax error, brackets past CPython's tokenizer limit (200), a tree deeper than CPython accepts
    for source, message in (("def f(:\n    pass\n", "syntax error: invalid syntax"),
                            ("x = " + "(" * 201 + ")" * 201, "brackets nested 201 deep"),
                            ("x = " + "+".join(["1"] * 5000) + "\n", "CPython rejects it too")):
        parsed = _parse("bad.py", source.encode())
        assert parsed.failure is not None and parsed.failure == parse_text(source)
        assert message in parsed.failure.message
    # nesting CPython accepts is linted on both paths now (it was refused past depth 100 before)
    for source in ("x = " + "+".join(["1"] * 300) + "\n", "x = " + "(" * 200 + ")" * 200):
        parsed = _parse("deep.py", source.encode())
        assert parsed.failure is None and parsed.facts is not None and parsed.facts.jit_functions == ()
        assert not isinstance(parse_text(source), ParseFailure)
    clean = _parse("clean.py", b"x = [1][0]\n")
    assert clean.failure is None and clean.facts is not None and clean.facts.jit_functions == ()
