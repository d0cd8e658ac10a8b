"""Code for other vendors' Triton backends is recognised by layout and imports and not judged against NVIDIA
targets, unless `vendor-backends = "check"`; the report says how many kernels were skipped."""
from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from kernlint.cli import main
from kernlint.frontend.vendor import vendor_backend

# BLOCK=1000 is not a power of two: KL301 (error) on any NVIDIA target
BAD_BLOCK = '''{head}import triton
import triton.language as tl


@triton.jit
def add(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


def launch(x, y, n):
    add[(n // 1000,)](x, y, n, BLOCK=1000)
'''


def run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    return main(list(argv), out), out.getvalue()


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def _write(path: str, head: str = "") -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(BAD_BLOCK.format(head=head))


@pytest.mark.parametrize("path, head, skipped", [
    ("gems/runtime/backend/_ascend/ops/add.py", "", True),
    ("gems/runtime/backend/_kunlunxin/add.py", "", True),
    ("gems/runtime/backend/_amd/add.py", "", True),
    ("gems/backends/npu/add.py", "", True),
    ("fla/modules/activations/triton_ascend.py", "", True),
    ("flash_attn/flash_attn_triton_amd/fwd.py", "", True),
    ("gems/ops/add.py", "import torch_npu  # noqa: F401\n", True),
    ("gems/ops/add.py", "import triton.backends.mlu.driver as driver\n", True),
    # NVIDIA's own backend directory, a plain `amd` directory, a dispatching import inside a function
    ("gems/runtime/backend/_nvidia/add.py", "", False),
    ("gems/amd/add.py", "", False),
    ("gems/ops/amd.py", "", False),
    ("gems/ops/add.py", "def device():\n    import torch_npu\n\n\n", False),
])
def test_recognised_vendor_code_is_skipped(path: str, head: str, skipped: bool) -> None:
    _write(path, head)
    code, out = run("check", ".", "--output-format", "json")
    doc = json.loads(out)
    assert [d["code"] for d in doc["diagnostics"]] == ([] if skipped else ["KL301"])
    assert code == (0 if skipped else 1)
    assert doc["vendor_backends"]["skipped_kernels"] == (1 if skipped else 0)


def test_check_opts_back_in_and_terminal_says_what_was_skipped() -> None:
    _write("gems/runtime/backend/_cambricon/add.py")
    code, out = run("check", ".")
    assert code == 0 and "1 kernel(s) in 1 file(s) of other vendors' backends not checked" in out
    Path("pyproject.toml").write_text('[tool.kernlint]\nvendor-backends = "check"\n')
    code, out = run("check", ".", "--output-format", "json")
    assert code == 1 and [d["code"] for d in json.loads(out)["diagnostics"]] == ["KL301"]


def test_bad_mode_is_a_settings_error() -> None:
    _write("k/add.py")
    Path("pyproject.toml").write_text('[tool.kernlint]\nvendor-backends = "maybe"\n')
    assert run("check", ".")[0] == 2


def test_directories_above_the_project_root_do_not_count(tmp_path: Path) -> None:
    root = tmp_path / "ascend" / "proj"
    assert vendor_backend(str(root / "k.py"), "", str(root)) is None
    assert vendor_backend(str(root / "_ascend" / "k.py"), "", str(root)) == "in `_ascend`, named for another vendor's backend"


def test_a_cached_result_still_counts_the_skipped_kernels() -> None:
    _write("gems/runtime/backend/_metax/add.py")
    first, second = run("check", "."), run("check", ".")
    assert first == second and "1 kernel(s) in 1 file(s) of other vendors' backends" in second[1]
    assert Path(".kernlint_cache").exists()
