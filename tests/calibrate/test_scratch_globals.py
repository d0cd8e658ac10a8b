"""Names real packages bind inside module-level `if`/`try` blocks (kernlint/calibrate/scratch_globals.py).

The package below copies the shapes found in liger-kernel (ops/dyt.py: `tanh` imported in a try/except under
a version check), unsloth (kernels/utils.py: `triton_tanh = libdevice.tanh`, imported by the kernel's file),
fla (gdn2/chunk_intra.py: a dot precision chosen by a device flag) and flash-attn (a constexpr built from a
constant of a sibling module). Before, each was a NameError at compile time. The scratch module must bind
them without running the package: the modules also raise at import.
"""
from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from kernlint.calibrate.scratch import build_scratch, find_kernel, source_tree_for
from kernlint.calibrate.scratch_globals import alias_import

UTILS = """
    import triton
    import triton.language as tl
    from packaging.version import Version
    raise SystemExit("never imported")
    DROPOUT_USE_PYTORCH = False
    if Version(triton.__version__) >= Version("3.0.0"):
        if DEVICE_TYPE == "xpu":
            triton_tanh = tl.extra.intel.libdevice.tanh
        else:
            from triton.language.extra import libdevice
            triton_tanh = libdevice.tanh
    else:
        triton_tanh = tl.math.tanh
"""

KERNELS = """
    import triton
    import triton.language as tl
    from pkg.utils import DROPOUT_USE_PYTORCH, IS_TF32_SUPPORTED, triton_tanh
    raise SystemExit("never imported")
    if compare_version("triton", operator.ge, "3.0.0"):
        try:
            from triton.language.extra.libdevice import tanh
        except ModuleNotFoundError:
            from triton.language.extra.cuda.libdevice import tanh
    else:
        from triton.language.math import tanh
    if IS_TF32_SUPPORTED:
        PRECISION = tl.constexpr('tf32')
    else:
        PRECISION = tl.constexpr('ieee')
    tl_DROPOUT: tl.constexpr = triton.language.constexpr(DROPOUT_USE_PYTORCH)

    @triton.jit
    def k(x_ptr, y_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs)
        y = tanh(x) + triton_tanh(x)
        if tl_DROPOUT:
            y = y * 2
        tl.store(y_ptr + offs, y)

    @triton.jit
    def mm(a_ptr, c_ptr, BLOCK: tl.constexpr):
        r = tl.arange(0, BLOCK)
        a = tl.load(a_ptr + r[:, None] * BLOCK + r[None, :])
        tl.store(c_ptr + r[:, None] * BLOCK + r[None, :], tl.dot(a, a, input_precision=PRECISION))
"""


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "utils.py").write_text(textwrap.dedent(UTILS))
    (tmp_path / "pkg" / "kernels.py").write_text(textwrap.dedent(KERNELS))
    return tmp_path


def _build(kernel: str):  # type: ignore[no-untyped-def]
    tree, pm = source_tree_for("pkg/kernels.py")
    return build_scratch(tree, pm, find_kernel(pm, kernel))


def test_conditional_triton_imports_become_a_fallback_chain(package: Path) -> None:
    s = _build("k")
    ast.parse(s.source)
    assert "SystemExit" not in s.source and "Version(" not in s.source
    # the kernel file's own try/except: every alternative, in source order
    assert ("try:\n    from triton.language.extra.libdevice import tanh\nexcept ImportError:\n"
            "    try:\n        from triton.language.extra.cuda.libdevice import tanh\n    except ImportError:\n"
            "        from triton.language.math import tanh\n") in s.source
    # utils' alias, imported by name: the Intel backend's path goes last
    lines = s.source.splitlines()
    intel = next(i for i, ln in enumerate(lines) if "intel.libdevice import tanh as triton_tanh" in ln)
    generic = next(i for i, ln in enumerate(lines) if "extra.libdevice import tanh as triton_tanh" in ln)
    assert generic < intel
    assert s.missing == () and s.assumed == ()


def test_a_constant_built_from_a_sibling_module_constant_is_written_as_its_value(package: Path) -> None:
    # the source (`triton.language.constexpr(DROPOUT_USE_PYTORCH)`) is never copied: kernlint evaluates it
    # through the import and writes the literal
    src = _build("k").source
    assert "tl_DROPOUT = tl.constexpr(False)" in src and "DROPOUT_USE_PYTORCH" not in src


def test_a_constant_chosen_per_condition_takes_the_first_branch_and_says_so(package: Path) -> None:
    s = _build("mm")
    assert "PRECISION = tl.constexpr('tf32')" in s.source and "'ieee'" not in s.source
    assert s.assumed == ("pkg.kernels.PRECISION = tl.constexpr('tf32') (assumed `IS_TF32_SUPPORTED`)",)
    assert "IS_TF32_SUPPORTED" not in s.source  # the condition is not copied: it is not evaluated


def test_alias_import_forms() -> None:
    assert alias_import("tl2", ["triton.language"]) == "from triton import language as tl2"
    assert alias_import("tanh", ["triton.language.math.tanh"]) == "from triton.language.math import tanh"
    assert alias_import("t", ["triton.language.extra.hip.libdevice.tanh", "triton.language.math.tanh"]) == (
        "try:\n    from triton.language.math import tanh as t\nexcept ImportError:\n"
        "    from triton.language.extra.hip.libdevice import tanh as t")


def test_the_scratch_module_compiles_with_triton(package: Path, tmp_path: Path) -> None:
    """Live: Triton resolves every name of both kernels (skipped without Triton)."""
    pytest.importorskip("triton")
    from kernlint.calibrate import session
    for kernel, args in (("k", {"*": "*fp32"}), ("mm", {"*": "*fp32"})):
        cal = session.run(f"pkg/kernels.py::{kernel}", ("h100",),
                          ({"BLOCK": 32, "num_warps": 4, "num_stages": 1},), args=args, jobs=1, cache_dir=None)
        assert cal.rows and all(r.error is None for r in cal.rows), [r.error for r in cal.rows]


def test_a_kernel_and_a_method_of_the_same_name_can_each_be_picked(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # `two.py::ka` said "several kernels (ka, NS.ka)" and `two.py::NS.ka` clashed with the module-level `ka`
    monkeypatch.chdir(tmp_path)
    body = "(x_ptr, B: tl.constexpr):\n{pad}    tl.store(x_ptr + tl.arange(0, B), tl.zeros([B], tl.float16))\n"
    (tmp_path / "two.py").write_text("import triton\nimport triton.language as tl\n\n@triton.jit\ndef ka"
                                     + body.format(pad="") + "\nclass NS:\n    @triton.jit\n    def ka"
                                     + body.format(pad="    "))
    tree, pm = source_tree_for("two.py")
    assert find_kernel(pm, "ka").qualname == "ka" and find_kernel(pm, "NS.ka").qualname == "NS.ka"
    assert "def ka(" in build_scratch(tree, pm, find_kernel(pm, "NS.ka")).source
