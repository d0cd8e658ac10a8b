"""Autotune lists a package loads from its own data files (`configs=runtime.get_tuned_config("mm")`) are read
from the files, never by running the loader: the target architecture's file where the package ships one,
else the generic one, and the output names the file."""
from __future__ import annotations

from pathlib import Path

import pytest

from kernlint.pipeline.api import Settings, lint_paths
from kernlint.frontend.data_configs import table_configs
from kernlint.frontend.data_files import parse_yaml

GENERIC = """\
# generic NVIDIA list
mm:
  - META:
      BLOCK_M: 64
      BLOCK_N: 64
    num_warps: 4
    num_stages: 3
  - META: {BLOCK_M: 128, BLOCK_N: 64}
    num_warps: 8
    num_stages: 4
softmax:
  - META:
      TILE_N: 256
"""
HOPPER = """\
mm:
  - META:
      BLOCK_M: 128
      BLOCK_N: 128
    num_warps: 8
    num_stages: 3
"""
AMD = """\
mm:
  - META:
      BLOCK_M: 256
      BLOCK_N: 256
    num_warps: 8
    num_stages: 2
"""
KERNEL = """\
import triton
import triton.language as tl

from mypkg import runtime


@triton.autotune(configs=runtime.get_tuned_config("{key}"), key=["N"])
@triton.jit
def k(X, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    offs = tl.arange(0, BLOCK_M)[:, None] * N + tl.arange(0, BLOCK_N)[None, :]
    tl.store(X + offs, tl.load(X + offs) * 2)
"""


def _package(tmp_path: Path, key: str = "mm", hopper: bool = True) -> Path:
    """mypkg/runtime loads `backend/_<vendor>/tune_configs.yaml`, with a hopper/ copy that wins on sm_90."""
    files = {
        "mypkg/__init__.py": "",
        "mypkg/runtime/__init__.py": "def get_tuned_config(op):\n    import yaml\n    return yaml.safe_load(op)\n",
        "mypkg/runtime/backend/_nvidia/tune_configs.yaml": GENERIC,
        "mypkg/runtime/backend/_amd/tune_configs.yaml": AMD,
        "mypkg/ops/__init__.py": "",
        "mypkg/ops/k.py": KERNEL.replace("{key}", key),
    }
    if hopper:
        files["mypkg/runtime/backend/_nvidia/hopper/tune_configs.yaml"] = HOPPER
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return tmp_path / "mypkg/ops/k.py"


def _kernel(path: Path, *targets: str):  # type: ignore[no-untyped-def]
    result = lint_paths([str(path)], Settings(targets=targets))
    return next(k for f in result.files for k in f.kernels if k.jit.name == "k")


def _configs(kernel) -> list[tuple[int, int, int, int]]:  # type: ignore[no-untyped-def]
    return [(p.constexprs["BLOCK_M"], p.constexprs["BLOCK_N"], p.num_warps, p.num_stages) for p in kernel.points]


def test_the_generic_file_on_an_architecture_without_its_own(tmp_path: Path) -> None:
    k = _kernel(_package(tmp_path), "a100")
    assert _configs(k) == [(64, 64, 4, 3), (128, 64, 8, 4)]          # GENERIC's two `mm` entries, not AMD's
    assert all(p.origin == "autotune" for p in k.points)
    note = "autotune configs under `mm` read from mypkg/runtime/backend/_nvidia/tune_configs.yaml"
    assert all(p.source_note is not None and p.source_note.startswith(note) for p in k.points)
    assert all(any(a.startswith(note) for a in e.assumptions) for e in k.estimates)


def test_the_architecture_file_wins_on_its_architecture(tmp_path: Path) -> None:
    k = _kernel(_package(tmp_path), "h200")
    assert _configs(k) == [(128, 128, 8, 3)]                          # HOPPER's one entry
    assert k.points[0].source_note == ("autotune configs under `mm` read from "
                                       "mypkg/runtime/backend/_nvidia/hopper/tune_configs.yaml "
                                       "(its architecture's file)")


def test_targets_reading_different_files_keep_the_generic_list_and_say_why(tmp_path: Path) -> None:
    k = _kernel(_package(tmp_path), "a100", "h200")
    assert _configs(k) == [(64, 64, 4, 3), (128, 64, 8, 4)]
    assert "read different files" in (k.points[0].source_note or "")


def test_a_key_no_data_file_lists_keeps_the_not_read_message(tmp_path: Path) -> None:
    k = _kernel(_package(tmp_path, key="conv"), "h200")
    assert [p.origin for p in k.points] == ["default"]
    note = k.points[0].source_note or ""
    assert note.startswith("autotune configs not read (configs from `runtime.get_tuned_config(\"conv\")`")
    assert "no data file of the package lists configs under `conv`" in note


def test_an_entry_without_launch_options_leaves_them_to_the_defaults(tmp_path: Path) -> None:
    text = KERNEL.replace("{key}", "softmax").replace("BLOCK_M: tl.constexpr, BLOCK_N", "TILE_N: tl.constexpr, BLOCK_M")
    path = _package(tmp_path)
    path.write_text(text.replace("BLOCK_N)", "TILE_N)").replace("tl.arange(0, BLOCK_M)", "tl.arange(0, 1)"))
    result = lint_paths([str(path)], Settings(targets=("h200",)))
    k = next(k for f in result.files for k in f.kernels if k.jit.name == "k")
    (p,) = k.points
    # {META: {TILE_N: 256}}: Triton's defaults for what the entry leaves out
    assert p.constexprs["TILE_N"] == 256 and (p.num_warps, p.num_stages) == (4, 3)
    assert set(p.defaulted) >= {"num_warps", "num_stages"}
    # `softmax` is not in hopper/tune_configs.yaml: the generic file is the one an H200 reads
    assert (p.source_note or "").endswith("_nvidia/tune_configs.yaml (the generic file); 1 of 1 without "
                                          "num_warps, 1 of 1 without num_stages: Triton's default assumed, the "
                                          "loader's may differ")


def test_generated_entries_are_the_cross_product_in_the_loaders_order() -> None:
    table = parse_yaml("""\
op:
  - gen: true
    param_map:
      META:
        BLOCK_M: block_m
      num_warps: warps
      num_stages: 2
    block_m: [32, 64]
    warps:
      - 4
      - 8
""")
    configs = table_configs(table["op"], 7)
    assert configs is not None
    # flag-gems' configloader._gen_impl pushes each step's values in order onto a stack and pops the last
    # first: BLOCK_M 64 before 32, and within each 8 warps before 4
    assert [(c.kwargs["BLOCK_M"], c.options["num_warps"], c.options["num_stages"]) for c in configs] == [
        (64, 8, 2), (64, 4, 2), (32, 8, 2), (32, 4, 2)]


@pytest.mark.parametrize("text, value", [
    ("a: 1\nb:\n  - x\n  - {c: 2, d: [1, 2]}\n", {"a": 1, "b": ["x", {"c": 2, "d": [1, 2]}]}),
    ("k:\n- 1\n- 2.5\n- true\n- ~\n", {"k": [1, 2.5, True, None]}),
    ('"256,7168":\n  "1": [64, 32]  # a comment\n', {"256,7168": {"1": [64, 32]}}),
])
def test_the_yaml_subset(text: str, value: object) -> None:
    assert parse_yaml(text) == value


@pytest.mark.parametrize("text", ["a: &x 1\nb: *x\n", "a: |\n  text\n"])
def test_yaml_outside_the_subset_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        parse_yaml(text)


def test_a_list_only_in_another_architectures_file_is_not_read(tmp_path: Path) -> None:
    path = _package(tmp_path)
    (tmp_path / "mypkg/runtime/backend/_nvidia/tune_configs.yaml").write_text(GENERIC.replace("mm:", "bmm:"))
    k = _kernel(path, "a100")
    assert [p.origin for p in k.points] == ["default"]
    assert "configs under `mm` only in per-architecture data files " \
           "(mypkg/runtime/backend/_nvidia/hopper/tune_configs.yaml)" in (k.points[0].source_note or "")
    assert _configs(_kernel(path, "h200")) == [(128, 128, 8, 3)]
