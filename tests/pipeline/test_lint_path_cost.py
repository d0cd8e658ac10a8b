"""The lint path pays only for what a file needs (docs/performance.md): a file without kernels never imports
libcst, a kernel file is parsed by CPython once, and the position walk keeps `ast.walk`'s order."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import runpy, sys
sys.argv = ["kernlint", "check", sys.argv[1], "--no-cache", "--output-format", sys.argv[2]]
try:
    runpy.run_module("kernlint", run_name="__main__")
except SystemExit:
    pass
print("LOADED", *sorted(m for m in ("libcst", "triton", "torch", "pygls") if m in sys.modules))
"""


def _loaded(path: Path, fmt: str) -> list[str]:
    out = subprocess.run([sys.executable, "-c", PROBE, str(path), fmt], capture_output=True, text=True,
                         cwd=path.parent, check=True).stdout
    line = next(l for l in out.splitlines() if l.startswith("LOADED"))
    return line.split()[1:]


def test_a_file_without_kernels_is_checked_without_libcst(tmp_path: Path) -> None:
    plain = tmp_path / "util.py"
    plain.write_text("import os\n\n\ndef join(a, b):\n    return os.path.join(a, b)  # noqa: KL101\n")
    for fmt in ("full", "json"):
        assert _loaded(plain, fmt) == []


def test_a_kernel_file_still_loads_libcst_and_never_triton(tmp_path: Path) -> None:
    kernel = tmp_path / "add.py"
    kernel.write_text((ROOT / "examples" / "vector_add.py").read_text())
    assert _loaded(kernel, "json") == ["libcst"]


def test_a_file_without_kernels_gets_the_same_findings_as_with_every_file_parsed() -> None:
    import kernlint.frontend.prescan as prescan
    from kernlint.pipeline.api import lint_sources

    sources = [("kern.py", b"import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
                           b"def k(x_ptr, BLOCK: tl.constexpr):\n    tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)\n"),
               ("host.py", b"from kern import k\n\n\ndef run(x):\n    k[(1,)](x, BLOCK=128)\n"),
               ("util.py", b"def f(x):  # noqa: KL201\n    return x\n"),
               # the launch regex matches the docstring's markdown link and the comment, not a launch
               ("doc.py", b'"""See [the docs](https://x)."""\nx = [1][0]  # a[0](b)\n'),
               ("bad.py", b"def f(:\n    pass\n")]
    fast = lint_sources(sources)
    real = prescan.may_hold_kernels, prescan.launch_syntax_only
    try:
        prescan.may_hold_kernels, prescan.launch_syntax_only = lambda text: True, lambda text: False  # all via libcst
        slow = lint_sources(sources)
    finally:
        prescan.may_hold_kernels, prescan.launch_syntax_only = real
    assert [f.diagnostics for f in fast.files] == [f.diagnostics for f in slow.files]
    assert [len(f.kernels) for f in fast.files] == [len(f.kernels) for f in slow.files] == [1, 0, 0, 0, 0]
    assert [p.origin for p in fast.files[0].kernels[0].points] == ["launch"]
    from kernlint.pipeline.api import parse_sources

    # libcst parsed the kernel and the real launch only
    assert [p.module is not None for p in parse_sources(sources)] == [True, True, False, False, False]


def test_a_kernel_file_is_parsed_by_cpython_once(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from kernlint.pipeline.api import lint_sources

    parsed: list[str] = []
    real = ast.parse

    def counting(source, *args, **kwargs):  # type: ignore[no-untyped-def]
        if isinstance(source, str) and "def matmul_kernel" in source:
            parsed.append(source)
        return real(source, *args, **kwargs)

    monkeypatch.setattr(ast, "parse", counting)
    text = (ROOT / "examples" / "matmul.py").read_bytes()
    result = lint_sources([("matmul.py", text)])
    assert result.kernel_count == 1
    # the syntax check and the node positions share one tree (KL406 reads its own copy of the lines)
    assert len([s for s in parsed if s == text.decode()]) == 1


def test_the_position_walk_keeps_ast_walk_order() -> None:
    from kernlint.frontend.parse import ast_nodes

    for path in [*sorted((ROOT / "examples").glob("*.py")), *sorted((ROOT / "kernlint" / "frontend").glob("*.py"))]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        walked, ours = list(ast.walk(tree)), ast_nodes(tree)
        assert len(walked) == len(ours) and all(a is b for a, b in zip(walked, ours)), path
