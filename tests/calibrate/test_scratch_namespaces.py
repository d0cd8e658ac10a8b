"""Project modules read as namespaces and Triton modules re-exported by a package (kernlint/calibrate/scratch.py).

The package copies shapes found in flag-gems: a module of jit device functions imported as a namespace
(`from pkg.utils import extension as tle` ... `tle.program_id(0)`), a name bound to a Triton math module in a
`try` block of one module and re-exported by the package's `__init__` (`from pkg.utils import shim`), and a
module constant that is an attribute of that alias (`exp = shim.exp`). Before, each was a NameError at compile
time (62 and 26 of flag-gems' NVIDIA files use the first two). Nothing of the package runs: its modules raise
at import.
"""
from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from kernlint.calibrate.scratch import build_scratch, find_kernel, source_tree_for

EXTENSION = """
    import triton
    from triton import language as tl
    raise SystemExit("never imported")

    @triton.jit
    def program_id(axis: int) -> tl.tensor:
        return tl.program_id(axis).to(tl.int64)

    @triton.jit
    def num_programs(axis: int) -> tl.tensor:
        return tl.num_programs(axis).to(tl.int64)
"""

HELPER = """
    raise SystemExit("never imported")
    try:
        shim = backend.get_extra_module()
    except ImportError:
        import triton
        try:
            shim = triton.language.extra.libdevice
        except AttributeError:
            shim = triton.language.math
"""

KERNELS = """
    import triton
    import triton.language as tl
    from pkg.utils import extension as tle
    from pkg.utils import shim
    raise SystemExit("never imported")
    exp = shim.exp
    door = shim.__class__

    @triton.jit
    def k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tle.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n).to(tl.float32)
        tl.store(y_ptr + offs, exp(x) + shim.tan(x), mask=offs < n)

    @triton.jit
    def first_helper(x_ptr):
        tl.store(x_ptr, tle.program_id(0).to(tl.float32))

    @triton.jit
    def two_readers(x_ptr):
        first_helper(x_ptr)
        tl.store(x_ptr + 1, tle.num_programs(0).to(tl.float32))

    @triton.jit
    def unknown_attribute(x_ptr):
        tl.store(x_ptr, tle.not_there(0))
"""


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pkg" / "utils").mkdir(parents=True)
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "utils" / "__init__.py").write_text("from pkg.utils.helper import shim\n")
    (tmp_path / "pkg" / "utils" / "extension.py").write_text(textwrap.dedent(EXTENSION))
    (tmp_path / "pkg" / "utils" / "helper.py").write_text(textwrap.dedent(HELPER))
    (tmp_path / "pkg" / "kernels.py").write_text(textwrap.dedent(KERNELS))
    return tmp_path


def _build(kernel: str):  # type: ignore[no-untyped-def]
    tree, pm = source_tree_for("pkg/kernels.py")
    return build_scratch(tree, pm, find_kernel(pm, kernel))


def test_namespace_reexported_alias_and_attribute_of_it_are_bound(package: Path) -> None:
    s = _build("k")
    ast.parse(s.source)
    assert s.missing == () and s.refused == ()
    assert "SystemExit" not in s.source and "get_extra_module" not in s.source
    # the namespace: a module object holding the device function, after the functions
    assert "tle = _kernlint_types.ModuleType('pkg.utils.extension')\ntle.program_id = program_id\n" in s.source
    assert s.source.index("def program_id(") < s.source.index("tle.program_id = program_id")
    # the re-exported alias: the except-branch Triton modules, in order; the call in the try is not copied
    assert "from triton.language.extra import libdevice as shim" in s.source
    assert "from triton.language import math as shim" in s.source
    # `exp = shim.exp`: the Triton function itself, never the module-level assignment
    assert "from triton.language.extra.libdevice import exp" in s.source
    assert "exp = shim.exp" not in s.source and "__class__" not in s.source


def test_an_attribute_the_namespace_lacks_is_missing_not_guessed(package: Path) -> None:
    s = _build("unknown_attribute")
    assert "pkg.utils.extension" in s.missing
    assert "ModuleType" not in s.source


def test_the_namespaced_kernel_compiles_with_triton(package: Path) -> None:
    """Live: Triton resolves `tle.program_id`, `shim.tan` and `exp` (skipped without Triton)."""
    pytest.importorskip("triton")
    from kernlint.calibrate import session
    cal = session.run("pkg/kernels.py::k", ("h100",), ({"BLOCK": 128, "num_warps": 4, "num_stages": 1},),
                      args={"*": "*fp32"}, jobs=1, cache_dir=None)
    assert cal.rows and all(r.error is None for r in cal.rows), [r.error for r in cal.rows]
    assert all(r.truth and r.truth["regs"] > 0 for r in cal.rows)


def test_a_namespace_read_by_two_functions_holds_what_both_read(package: Path) -> None:
    # flag-gems' scan kernels read `tle.program_id` in one function and pass `tle.maximum_with_...` in
    # another: the module object must hold both (it held only the first function's)
    s = _build("two_readers")
    assert s.missing == ()
    assert "tle.num_programs = num_programs\n" in s.source and "tle.program_id = program_id\n" in s.source
