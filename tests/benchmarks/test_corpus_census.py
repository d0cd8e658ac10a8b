"""The independent census benchmarks/corpus.py holds kernel discovery against (benchmarks/census.py)."""
from __future__ import annotations

from pathlib import Path

from benchmarks.census import Census, module_name

FILES = {
    "proj/__init__.py": "",
    "proj/_tr.py": "try:\n    import triton\n    import triton.language as tl\nexcept ImportError:\n    triton = None\n",
    "proj/ops/__init__.py": "",
    "proj/ops/a.py": """
from .._tr import triton, tl
from triton import jit as J

@triton.jit
def launched(x):
    pass

@triton.jit
def helper_only(x):
    pass

@J
def aliased(x):
    pass

@triton.autotune(configs=[], key=[])
@triton.jit
def tuned(x):
    pass

def host(x):
    launched[(1,)](x)
    aliased[(1,)](x)
    tuned[lambda m: (1,)](x)
""",
    "proj/ops/b.py": """
import helion

@helion.kernel(static_shapes=True)
def hk(x):
    return x

@helion.kernel
def hk2(x):
    return x
""",
    "proj/ops/c.py": "import numba\n\n@numba.jit\ndef launched(x):\n    pass\n",
}


def test_census_counts_launched_triton_kernels_and_helion_kernels(tmp_path: Path) -> None:
    for rel, text in FILES.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    files = sorted(tmp_path.rglob("*.py"))
    kernels = Census(tmp_path, files).kernels()
    a = tmp_path / "proj/ops/a.py"
    lines = (tmp_path / "proj/ops/a.py").read_text().splitlines()
    names = {lines[n - 1].split("(")[0].removeprefix("def ") for n in kernels[a]}
    # helper_only is never launched; numba's `launched` in c.py is not Triton
    assert names == {"launched", "aliased", "tuned"}
    assert len(kernels[tmp_path / "proj/ops/b.py"]) == 2
    assert tmp_path / "proj/ops/c.py" not in kernels
    assert module_name(a, tmp_path) == "proj.ops.a"
    assert module_name(tmp_path / "proj/__init__.py", tmp_path) == "proj"
