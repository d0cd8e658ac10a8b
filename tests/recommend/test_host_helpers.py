"""Launch values computed by the project's own host helpers (`BLOCK, warps = calculate_settings(n)` imported
from a sibling module) are read from the helper's body in order, never executed."""
from __future__ import annotations

from pathlib import Path

from kernlint.frontend.host_facts import read_kernel_source, trip_count

UTILS = '''
import triton

def is_other_vendor():
    return False

def calculate_settings(n):
    MAX = 65536
    BLOCK = triton.next_power_of_2(n)
    if BLOCK > MAX:
        raise RuntimeError("too wide")
    num_warps = 4
    if BLOCK >= 32768:
        num_warps = 32 if not is_other_vendor() else 16
    elif BLOCK >= 8192:
        num_warps = 16
    elif BLOCK >= 2048:
        num_warps = 8
    return BLOCK, num_warps
'''

OPS = '''
import triton
import triton.language as tl
from pkg.utils import calculate_settings
from .utils import calculate_settings as settings_again


def _wide(n):
    return n > 10**9


@triton.jit
def row_kernel(x_ptr, n_cols, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n_cols), mask=offs < n_cols)


def forward(x):
    n_rows, n_cols = x.shape
    if _unknown_device():
        return x
    BLOCK, num_warps = calculate_settings(n_cols)
    row_kernel[(n_rows,)](x, n_cols, BLOCK=BLOCK, num_warps=num_warps)
    return x
'''


def _tree(tmp_path: Path) -> Path:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("", encoding="utf-8")
    (pkg / "utils.py").write_text(UTILS, encoding="utf-8")
    (pkg / "ops.py").write_text(OPS, encoding="utf-8")
    return pkg / "ops.py"


def test_block_and_warps_come_from_the_imported_helper(tmp_path: Path) -> None:
    src = read_kernel_source(str(_tree(tmp_path)), "row_kernel")
    assert {"calculate_settings", "settings_again", "_wide", "forward"} <= set(src.helpers)
    # next_power_of_2(5000) = 8192 -> 16 warps; 3000 -> 4096 -> 8 warps; 1000 -> 1024 -> 4 warps
    for n, block, warps in ((5000, 8192, 16), (3000, 4096, 8), (1000, 1024, 4)):
        env = {"n_cols": n, "n_rows": 64}
        assert src.launch_value("BLOCK", env) == block
        assert src.launch_value_in_order("num_warps", env) == warps


def test_an_unknown_branch_leaves_the_value_unknown_never_guessed(tmp_path: Path) -> None:
    src = read_kernel_source(str(_tree(tmp_path)), "row_kernel")
    # 40000 -> 65536: the warp count depends on is_other_vendor(), a function of utils.py that ops.py does not
    # import, through `x if c else y`: the test is unknown, so the value stays unknown; the block does not
    # depend on it
    env = {"n_cols": 40000, "n_rows": 64}
    assert src.launch_value("BLOCK", env) == 65536
    assert src.launch_value_in_order("num_warps", env) is None
    # past MAX the helper raises: no value
    assert src.launch_value("BLOCK", {"n_cols": 70000, "n_rows": 64}) is None


GEGLU = '''
import triton
import triton.language as tl
import torch
from .utils import device_guard

LIMIT = 2**31
BLOCK_SIZE = 1024
SAFETY = LIMIT - BLOCK_SIZE * 4
for _name in ("unused",):
    SHADOWED = 1


@triton.jit
def fwd(e, h, n_elements, BLOCK_SIZE: tl.constexpr, LONG_INDEXING: tl.constexpr):
    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    tl.store(h + offs, tl.load(e + offs, mask=offs < n_elements), mask=offs < n_elements)


def launch(gate, SAFETY=None):
    n_elements = gate.numel()
    out = torch.empty_like(gate)
    with device_guard(gate.device):
        wide = n_elements > 1000
        fwd[(triton.cdiv(n_elements, BLOCK_SIZE),)](gate, out, n_elements, BLOCK_SIZE=BLOCK_SIZE,
                                                    LONG_INDEXING=0 if n_elements <= LIMIT - 4096 else 1,
                                                    num_warps=8 if wide else 4)
    return out


def other(gate):
    fwd[(1,)](gate, gate, 1, BLOCK_SIZE=BLOCK_SIZE, LONG_INDEXING=SAFETY)
'''


def test_module_constants_conditional_expressions_and_with_blocks_reach_the_launch(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("", encoding="utf-8")
    (pkg / "geglu.py").write_text(GEGLU, encoding="utf-8")
    src = read_kernel_source(str(pkg / "geglu.py"), "fwd")
    # module constants in order: SAFETY = 2**31 - 1024 * 4; a name bound in a `for` is not a constant
    assert src.constants == {"LIMIT": 2**31, "BLOCK_SIZE": 1024, "SAFETY": 2**31 - 4096}
    assert src.launch_value_in_order("BLOCK_SIZE", {}) == 1024
    # `0 if n_elements <= 2**31 - 4096 else 1`: known once the size is; unknown without it
    assert src.launch_value_in_order("LONG_INDEXING", {"n_elements": 4096 * 14336}) == 0
    assert src.launch_value_in_order("LONG_INDEXING", {"n_elements": 2**31}) == 1
    # without it launch() says nothing, and the next launch, other()'s, passes the module's SAFETY
    assert src.launch_value("LONG_INDEXING", {}) == 2**31 - 4096
    # `wide` is assigned inside the `with` block before the launch: 8 warps past 1000 elements
    assert src.launch_value_in_order("num_warps", {"n_elements": 4096}) == 8
    assert src.launch_value_in_order("num_warps", {"n_elements": 512}) == 4
    # a launching function's parameter shadows the module constant of the same name (`launch(gate, SAFETY)`);
    # other() reads the module's SAFETY
    assert [fn.name for fn, _ in src.launch_fns] == ["launch", "other"]
    assert src._host_scope(src.launch_fns[0][0], {}).get("SAFETY") is None
    assert src._host_scope(src.launch_fns[1][0], {})["SAFETY"] == 2**31 - 4096


SOFTMAX = '''
import triton
import triton.language as tl
from .utils import cdiv_times


@triton.jit
def prev_multiple_of(a, b):
    # the largest x < a with x % b == 0
    return tl.cdiv(a, b) * b - b


@triton.jit
def softmax_inner(out_ptr, in_ptr, N, TILE_N: tl.constexpr):
    z = tl.zeros([TILE_N], dtype=tl.float32)
    previous_multiple = prev_multiple_of(N, TILE_N)
    for start in range(0, previous_multiple, TILE_N):
        z += tl.load(in_ptr + start + tl.arange(0, TILE_N))
    for start in range(previous_multiple, N, TILE_N):
        offs = start + tl.arange(0, TILE_N)
        z += tl.load(in_ptr + offs, mask=offs < N, other=0.0)
    for start in range(0, cdiv_times(N, TILE_N), TILE_N):
        tl.store(out_ptr + start + tl.arange(0, TILE_N), z)
'''
SOFTMAX_UTILS = '''
import triton
import triton.language as tl


@triton.jit
def cdiv_times(a, b):
    n = tl.cdiv(a, b)
    return n * b
'''


def test_loop_bounds_through_jit_helpers_of_the_file_and_of_a_sibling_module(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("", encoding="utf-8")
    (pkg / "utils.py").write_text(SOFTMAX_UTILS, encoding="utf-8")
    (pkg / "softmax.py").write_text(SOFTMAX, encoding="utf-8")
    src = read_kernel_source(str(pkg / "softmax.py"), "softmax_inner")
    assert set(src.device_helpers) == {"prev_multiple_of", "cdiv_times", "softmax_inner"}
    first, tail, out = sorted(src.loops)
    # N = 5000, TILE_N = 1024: prev_multiple_of = cdiv(5000, 1024) * 1024 - 1024 = 4096, so 4096 / 1024 = 4
    # full tiles, range(4096, 5000, 1024) is 1 masked tile, and range(0, 5 * 1024, 1024) is 5
    env = {"N": 5000, "TILE_N": 1024}
    assert (trip_count(src, first, env), trip_count(src, tail, env), trip_count(src, out, env)) == (4, 1, 5)
    # a size filled in under the helper's name (the recommender gives every name a loop bound reads one) does
    # not hide the function
    assert trip_count(src, first, {**env, "prev_multiple_of": 4096}) == 4
