"""Helion kernels written like Helion's examples (no asserts tying sizes together): their reduction dimensions,
and Helion's default config (`autotune_effort="none"`) as kernlint models it, against Helion itself where
helion and torch import (in a subprocess: the lint path never imports them)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from kernlint.recommend.helion import load_kernel

# an interpreter with helion and torch: this one unless KERNLINT_HELION_PYTHON names another
HELION_PYTHON = os.environ.get("KERNLINT_HELION_PYTHON", sys.executable)

KERNELS = '''import helion
import helion.language as hl
import torch


@helion.kernel(autotune_effort="none")
def matmul(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    m, k = x.size()
    k2, n = y.size()
    out = torch.empty([m, n], dtype=torch.promote_types(x.dtype, y.dtype), device=x.device)
    for tile_m, tile_n in hl.tile([m, n]):
        acc = hl.zeros([tile_m, tile_n], dtype=torch.float32)
        for tile_k in hl.tile(k):
            acc = torch.addmm(acc, x[tile_m, tile_k], y[tile_k, tile_n])
        out[tile_m, tile_n] = acc
    return out


@helion.kernel(autotune_effort="none")
def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    m, n = x.size()
    out = torch.empty_like(x)
    inv_rms = torch.empty([m], dtype=x.dtype, device=x.device)
    for tile_m in hl.tile(m):
        x_tile = x[tile_m, :].to(torch.float32)
        mean_x_squared = torch.mean(x_tile * x_tile, dim=-1)
        inv_rms_tile = torch.rsqrt(mean_x_squared + eps)
        normalized = x_tile * inv_rms_tile[:, None]
        out[tile_m, :] = (normalized * weight[:].to(torch.float32)).to(out.dtype)
        inv_rms[tile_m] = inv_rms_tile.to(out.dtype)
    return out


@helion.kernel(autotune_effort="none")
def softmax(x: torch.Tensor) -> torch.Tensor:
    n, _m = x.size()
    out = torch.empty_like(x)
    for tile_n in hl.tile(n):
        out[tile_n, :] = torch.nn.functional.softmax(x[tile_n, :], dim=1)
    return out


@helion.kernel(autotune_effort="none")
def softmax_sizes_read_late(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile_n in hl.tile(x.size(0)):
        values = x[tile_n, :]
        amax = torch.amax(values, dim=1, keepdim=True)
        exp = torch.exp(values - amax)
        out[tile_n, :] = exp / torch.sum(exp, dim=1, keepdim=True)
    return out


@helion.kernel(autotune_effort="none")
def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    m, n = x.size()
    out = torch.empty_like(x)
    for tile_m, tile_n in hl.tile([m, n]):
        out[tile_m, tile_n] = x[tile_m, tile_n] + y[tile_m, tile_n]
    return out


@helion.kernel(autotune_effort="none")
def add_1d(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    (n,) = x.size()
    out = torch.empty_like(x)
    for tile in hl.tile(n):
        out[tile] = x[tile] + y[tile]
    return out
'''


@pytest.fixture(scope="module")
def kernels_path(tmp_path_factory) -> str:  # type: ignore[no-untyped-def]
    path = tmp_path_factory.mktemp("helion_defaults") / "helion_idioms.py"
    path.write_text(KERNELS)
    return str(path)


def test_sizes_of_outputs_and_weights_join_the_one_reduction_dimension(kernels_path) -> None:  # type: ignore[no-untyped-def]
    """`weight[:]` beside `x[tile, :]`, and `empty_like(x)` allocated before `x.size(1)` is read, are one
    reduction dimension, as Helion makes them (one `reduction_loops` entry): before, rms_norm had two (`n` and
    `weight.size(0)`) and softmax_sizes_read_late two (`x.size(1)` and the output's size)."""
    rms = load_kernel(kernels_path, "rms_norm")
    assert [r.extent_text for r in rms.ir.rdims] == ["n"]
    late = load_kernel(kernels_path, "softmax_sizes_read_late")
    assert [r.extent_text for r in late.ir.rdims] == ["x.size(1)"]
    soft = load_kernel(kernels_path, "softmax")
    assert [r.extent_text for r in soft.ir.rdims] == ["_m"]


# kernel → (argument shapes, kernlint extents) pairs; every tile at least 16 wide where a dot consumes it, where
# Helion on the CPU (minimum dot tile 16 x 16 x 16) and on NVIDIA GPUs (Triton's 1 x 1 x 16) agree
CASES: list[tuple[str, list[list[int]], dict[str, int]]] = [
    ("matmul", [[512, 256], [256, 1024]], {"m": 512, "k": 256, "n": 1024}),
    ("matmul", [[64, 8], [8, 32]], {"m": 64, "k": 8, "n": 32}),
    ("rms_norm", [[512, 3000], [3000]], {"m": 512, "n": 3000}),
    ("rms_norm", [[64, 200], [200]], {"m": 64, "n": 200}),
    ("rms_norm", [[4, 100], [100]], {"m": 4, "n": 100}),
    ("softmax", [[512, 1000]], {"n": 512, "_m": 1000}),
    ("softmax", [[3, 100]], {"n": 3, "_m": 100}),
    ("softmax_sizes_read_late", [[256, 64]], {"x.size(1)": 64}),
    ("add", [[512, 1000], [512, 1000]], {"m": 512, "n": 1000}),
    ("add", [[3, 5], [3, 5]], {"m": 3, "n": 5}),
    ("add_1d", [[10], [10]], {"n": 10}),
    ("add_1d", [[100000], [100000]], {"n": 100000}),
]


def _modelled(path: str, name: str, extents: dict[str, int]) -> dict:  # type: ignore[type-arg]
    from kernlint.recommend.helion import default_config
    cfg = default_config(load_kernel(path, name), extents)
    assert not isinstance(cfg, str), cfg
    return cfg


def test_modelled_default_follows_helions_block_size_rule(kernels_path) -> None:  # type: ignore[no-untyped-def]
    """The rule of BlockSizeSpec._fragment, worked by hand: matmul has 3 tiles and no reduction (16 each);
    rms_norm at n=3000 reduces next_power_of_2(3000) = 4096 > 256 elements (1), at n=200 256 (16), at n=100
    128 with one tile (32, clamped to next_power_of_2(4) = 4 rows); add has 2 tiles (32, clamped to 4 x 8 at
    3 x 5); K = 8 still gets a 16-wide K tile, the dot's minimum for fp16 operands."""
    got = {(n, tuple(sorted(e.items()))): _modelled(kernels_path, n, e)["block_sizes"] for n, _, e in CASES}
    want = {"matmul": [[16, 16, 16], [16, 16, 16]], "rms_norm": [[1], [16], [4]], "softmax": [[1], [4]],
            "softmax_sizes_read_late": [[32]], "add": [[32, 32], [4, 8]], "add_1d": [[16], [32]]}
    for name, blocks in want.items():
        assert [b for (n, _), b in got.items() if n == name] == blocks, name
    rms = _modelled(kernels_path, "rms_norm", {"m": 512, "n": 3000})
    assert (rms["reduction_loops"], rms["num_warps"], rms["num_stages"]) == ([None], 4, 1)


def _helion_available() -> bool:
    if not os.path.exists(HELION_PYTHON):
        return False
    return subprocess.run([HELION_PYTHON, "-c", "import helion, torch"], check=False,
                          capture_output=True).returncode == 0


@pytest.fixture(scope="module")
def helion_defaults(kernels_path) -> list[dict]:  # type: ignore[no-untyped-def,type-arg]
    """`kernel.bind(args).config_spec.default_config()` from Helion itself, per case, on CPU tensors."""
    script = textwrap.dedent(f"""
        import importlib.util, json, torch
        spec = importlib.util.spec_from_file_location("helion_idioms", {kernels_path!r})
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        out = []
        for name, shapes, _ in {[(n, s, {}) for n, s, _ in CASES]!r}:
            args = [torch.randn(*s, dtype=torch.float16) for s in shapes]
            out.append(dict(getattr(mod, name).bind(tuple(args)).config_spec.default_config()))
        print(json.dumps(out))
    """)
    p = subprocess.run([HELION_PYTHON, "-c", script], check=False, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


@pytest.mark.slow
@pytest.mark.skipif(not _helion_available(), reason=f"helion not importable by {HELION_PYTHON}")
def test_modelled_default_equals_helions_default_config(kernels_path, helion_defaults) -> None:  # type: ignore[no-untyped-def]
    """kernlint's modelled default is Helion's own, field by field, including the number of reduction_loops
    (rms_norm and softmax without asserts: one, where kernlint read two before)."""
    for (name, shapes, extents), theirs in zip(CASES, helion_defaults):
        ours = _modelled(kernels_path, name, extents)
        where = f"{name} {shapes}"
        assert ours["block_sizes"] == theirs["block_sizes"], where
        assert ours.get("reduction_loops") == theirs.get("reduction_loops"), where
        assert (ours["num_warps"], ours["num_stages"]) == (theirs["num_warps"], theirs["num_stages"]), where
        # what the lowering assumes: pointer indexing for every memory access, one program per tile
        assert set(theirs["indexing"]) == {"pointer"} and theirs["pid_type"] == "flat", where


def test_default_is_the_incumbent_where_helion_runs_it(kernels_path) -> None:  # type: ignore[no-untyped-def]
    """A100 (sm_80): no device heuristic is promoted, so Helion's default is the incumbent, and the keep policy
    of authors' configs applies to it: the [16, 16, 16] matmul default is replaced, its modelled time being
    several times the best's (far above the 7 % dot error)."""
    from kernlint.hardware.specs import resolve_target
    from kernlint.recommend.helion import recommend
    from kernlint.recommend.ranking import MODEL_ERROR
    bucket = {"m": 4096, "n": 4096, "k": 4096}
    rec = recommend(load_kernel(kernels_path, "matmul"), resolve_target("a100"), bucket, top_k=3)
    assert rec.author is not None and rec.author_note == "Helion's default config"
    assert (rec.author.constexprs, rec.author.num_warps, rec.author.num_stages) == ({"block_sizes": [16, 16, 16]}, 4, 1)
    assert 1 - rec.ranked[0].score.time_us / rec.author.score.time_us > MODEL_ERROR["dot"]
    assert rec.kept_author is None
    # rms_norm's default is persistent (reduction_loops [None], left out like the search's persistent configs)
    rms = recommend(load_kernel(kernels_path, "rms_norm"), resolve_target("a100"), {"m": 512, "n": 3000}, top_k=3)
    assert rms.author is not None and rms.author.constexprs == {"block_sizes": [1]}


def test_on_sm90_and_sm100_the_default_is_not_known_and_nothing_is_applied(kernels_path, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """There Helion promotes a device heuristic's seed to the default, which kernlint does not model: no gain
    over it can be predicted, so the store records that nothing is applied."""
    from kernlint.core.config_store import read_store
    store = str(tmp_path / "kernlint.lock.json")
    out = subprocess.run([sys.executable, "-m", "kernlint", "recommend", kernels_path, "--kernel", "rms_norm",
                          "--target", "h100", "--shape", "m=512,n=3000", "-o", store],
                         check=False, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "author: not known (on sm_90 Helion's default is a device heuristic's seed" in out.stdout
    assert "reduction_loops=[None]" in out.stdout   # the default elsewhere, for the reader
    (e,) = read_store(store)
    assert e.keep and "not known" in e.keep


def test_without_autotune_effort_none_helion_autotunes_from_the_default(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "tuned.py"
    path.write_text(KERNELS.replace('@helion.kernel(autotune_effort="none")', "@helion.kernel()"))
    from kernlint.hardware.specs import resolve_target
    from kernlint.recommend.helion import recommend
    rec = recommend(load_kernel(str(path), "add"), resolve_target("a100"), {"m": 4096, "n": 4096})
    assert rec.author is not None and rec.author.constexprs == {"block_sizes": [32, 32]}
    assert rec.author_note is not None and "autotunes from it at the first call" in rec.author_note
