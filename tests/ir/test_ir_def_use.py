"""KernelIR.producers / users / producer: the graph's def-use index, built in one walk and shared."""
from __future__ import annotations

from pathlib import Path

from kernlint.pipeline.api import Settings, lint_paths
from kernlint.ir.nodes import OpKind

SOURCE = '''
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for i in range(0, n, BLOCK):
        x = tl.load(x_ptr + i + offs, mask=offs < n)
        acc += x * x
    tl.store(out_ptr + offs, acc)
'''


def test_producers_and_users_cover_the_whole_graph_once(tmp_path: Path) -> None:
    path = tmp_path / "k.py"
    path.write_text(SOURCE)
    [kernel] = lint_paths([str(path)], Settings(targets=("h100",))).files[0].kernels
    ir = kernel.ir
    ops = [op for op, _ in ir.walk()]
    # every result's producer, the loop body's ops included
    for op in ops:
        for r in op.all_results():
            if op.kind != OpKind.FOR:   # a loop's results are its body's yielded values, made in the body
                assert ir.producer(r) is op
    assert set(ir.producers()) == {r.id for op in ops for r in op.all_results()}
    # `x * x` reads x twice and is one user of it; users come in program order
    load = next(op for op in ops if op.kind == OpKind.LOAD)
    assert load.result is not None
    [square] = ir.users()[load.result.id]
    assert square.kind == OpKind.ELEMENTWISE and square.fn == "*"
    order = {op.id: i for i, op in enumerate(ops)}
    assert all([order[u.id] for u in us] == sorted(order[u.id] for u in us) for us in ir.users().values())
    # a loop's block argument has no producer; the index is built once
    loop = next(op for op in ops if op.kind == OpKind.FOR)
    assert all(ir.producer(c.arg) is None for c in loop.carried)
    assert ir.producers() is ir.producers() and ir.users() is ir.users()
