"""Dead-code elimination before the liveness sweep (kernlint/analysis/dead_code.py).

Triton erases every op without side effects whose results are unused, loads included, so dead tiles must
cost nothing. Truth (Triton 3.9, `kernlint calibrate` of DEAD at BLOCK=128, 4 warps): 8 / 10 / 10 registers
on sm_80 / sm_90 / sm_100 and 0 B of shared memory, although the dead [128, 128] fp16 tile alone would hold
128 × 128 × 2 B / 128 threads / 4 B = 64 registers and its row sum would need reduction scratch.
"""
from __future__ import annotations

from pathlib import Path

from kernlint.analysis.dead_code import needed_op_ids
from kernlint.analysis.liveness import linearize
from kernlint.pipeline.api import Settings, lint_paths
from kernlint.ir.nodes import OpKind

DEAD = '''
import triton
import triton.language as tl


@triton.jit
def copy_kernel(x_ptr, y_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    big = tl.load(y_ptr + offs[:, None] * BLOCK + offs[None, :])
    s = tl.sum(big.to(tl.float32), axis=1)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, x)
'''

LIVE = '''
import triton
import triton.language as tl


@triton.jit
def copy_kernel(x_ptr, y_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, x)
'''

STEERING = '''
import triton
import triton.language as tl


@triton.jit
def steered_kernel(sizes_ptr, x_ptr, out_ptr, n_groups, BLOCK: tl.constexpr):
    tile = tl.program_id(0)
    for g in range(tl.load(sizes_ptr + n_groups)):
        n = tl.load(sizes_ptr + g)
        while tile < n:
            offs = tile * BLOCK + tl.arange(0, BLOCK)
            tl.store(out_ptr + offs, tl.load(x_ptr + offs))
            tile += 1


@triton.jit
def combine(a, b):
    total = a + b
    unused = a * b
    return total


def run(a, b):
    # launched, so analysed on its own (a returning jit function nothing launches is a device function)
    combine[(1,)](a, b)
'''


def _estimates(tmp_path: Path, source: str, name: str) -> list[tuple[str, int, int]]:
    path = tmp_path / name
    path.write_text(source)
    config = {"BLOCK": 128, "num_warps": 4, "num_stages": 1}
    result = lint_paths([str(path)], Settings(targets=("a100", "h100", "b200"), cli_configs=(config,)))
    [kernel] = result.files[0].kernels
    return [(e.target.key, e.registers.allocated, e.smem.total) for e in kernel.estimates
            if e.config.origin == "cli"]


def test_dead_tiles_cost_nothing(tmp_path: Path) -> None:
    dead = _estimates(tmp_path, DEAD, "dead.py")
    assert dead == _estimates(tmp_path, LIVE, "live.py")
    assert all(regs < 20 and smem == 0 for _, regs, smem in dead)   # truth 8-10 registers, 0 B


def test_loop_bounds_while_conditions_and_returns_stay(tmp_path: Path) -> None:
    path = tmp_path / "steering.py"
    path.write_text(STEERING)
    result = lint_paths([str(path)], Settings(targets=("h100",)))
    kernels = {k.jit.qualname: k for k in result.files[0].kernels}
    steered = kernels["steered_kernel"].ir
    steps = linearize(steered, {"BLOCK": 128})
    kept = needed_op_ids(steps, steered.returned)
    loads = [s.op for s in steps if s.op.kind == OpKind.LOAD and not s.is_end]
    # the loop bound's load, the while bound's load and the copied tile: all steer or feed a store
    assert len(loads) == 3 and all(op.id in kept for op in loads)
    combine = kernels["combine"].ir
    steps = linearize(combine, {})
    kept = needed_op_ids(steps, combine.returned)
    fns = {s.op.fn: s.op.id in kept for s in steps if s.op.kind == OpKind.ELEMENTWISE}
    assert fns == {"+": True, "*": False}   # a helper's return is what it keeps; `unused` goes


CARRIED = '''
import triton
import triton.language as tl


@triton.jit
def carried_kernel(x_ptr, w_ptr, out_ptr, K, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(x_ptr + offs[:, None] * BLOCK + offs[None, :])
    b = tl.load(w_ptr + offs[:, None] * BLOCK + offs[None, :])
    acc = tl.dot(a, b)
    for k in range(0, K, BLOCK):
        acc = acc * 0.5 + 1.0
    tl.store(out_ptr + offs, tl.max(a, axis=1))
'''


def test_a_loop_does_not_keep_what_it_carries_for_nobody(tmp_path: Path) -> None:
    """A dot whose result only enters a loop-carried variable nobody reads after the loop is erased with it:
    the operand tiles cost no staging. (Found by benchmarks/fuzz_truth.py: Triton 3.9 needed 128 B for
    such a kernel, the row max's conversion, where kernlint staged the dot's operands, 49,152 B.)"""
    path = tmp_path / "carried.py"
    path.write_text(CARRIED)
    result = lint_paths([str(path)], Settings(targets=("h100",), arg_types={"*": "*fp16"},
                                               cli_configs=({"BLOCK": 64, "num_warps": 4, "num_stages": 2},)))
    [kernel] = result.files[0].kernels
    [estimate] = [e for e in kernel.estimates if e.config.origin == "cli"]
    assert estimate.dots == ()
    assert not any("dot" in b.label for b in estimate.smem.buffers)
