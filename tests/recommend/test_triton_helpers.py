"""kernlint.triton.prune / seed_configs without a GPU and without triton: a fake Autotuner calls the prune
hook the way Triton's `Autotuner.prune_configs` does (`self.early_config_prune(self.configs, self.nargs)`)."""
from __future__ import annotations

import sys
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import kernlint.triton as kt
from kernlint.hardware.specs import SPECS
from kernlint.recommend.core import _evaluate, bucket_env
from kernlint.frontend.host_facts import read_kernel_source

ROOT = Path(__file__).resolve().parents[2]
MATMUL = str(ROOT / "examples" / "matmul.py")
SHAPE = {"M": 4096, "N": 4096, "K": 4096}


@dataclass(eq=False)
class FakeConfig:
    kwargs: dict[str, Any]
    num_warps: int = 4
    num_stages: int = 3
    pre_hook: Any = None


def _stub(name: str, path: str) -> Any:
    """A plain function whose code claims to live in `path`: what inspect.getsourcefile needs."""
    ns: dict[str, Any] = {}
    exec(compile(f"def {name}():\n    pass\n", path, "exec"), ns)
    return ns[name]


@dataclass
class FakeAutotuner:
    fn: Any
    configs: list[FakeConfig]
    early_config_prune: Any
    nargs: dict[str, Any] = field(default_factory=dict)

    @property
    def base_fn(self) -> Any:
        return self.fn

    def prune_configs(self, kwargs: dict[str, Any]) -> list[FakeConfig]:
        return self.early_config_prune(self.configs, self.nargs, **kwargs)


def _cfg(m: int, n: int, k: int, w: int, s: int) -> FakeConfig:
    return FakeConfig({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "GROUP_M": 8}, w, s)


def _model_order(configs: list[FakeConfig]) -> list[FakeConfig]:
    kernel = kt._analysis(MATMUL, "matmul_kernel", "h100")
    src = read_kernel_source(MATMUL, "matmul_kernel")
    env = bucket_env(kernel, src, SHAPE)
    scored = []
    for i, c in enumerate(configs):
        cand = _evaluate(kernel, src, SPECS["h100"], dict(c.kwargs), c.num_warps, c.num_stages, env)
        if cand is not None:
            scored.append((cand.score.time_us, i, c))
    return [c for *_, c in sorted(scored, key=lambda t: (t[0], t[1]))]


def test_prune_drops_infeasible_and_orders_by_model() -> None:
    # 256x256x64 at 4 stages needs 4 x (256*64 + 64*256) x 2 B = 262,144 B of smem (> 232,448 on sm_90)
    too_big = _cfg(256, 256, 64, 8, 4)
    configs = [_cfg(64, 64, 32, 4, 5), too_big, _cfg(128, 256, 64, 8, 3), _cfg(128, 128, 32, 4, 4)]
    at = FakeAutotuner(_stub("matmul_kernel", MATMUL), configs, kt.prune(target="h100"), dict(SHAPE))
    kept = at.prune_configs({})
    assert too_big not in kept
    assert len(kept) == len(configs) - 1
    assert kept == _model_order(configs)          # ordered by the time model, not by the list order


def test_prune_keep_infeasible_appends_them_last() -> None:
    too_big = _cfg(256, 256, 64, 8, 4)
    configs = [too_big, _cfg(64, 64, 32, 4, 5)]
    at = FakeAutotuner(_stub("matmul_kernel", MATMUL), configs, kt.prune(target="h100", keep_infeasible=True),
                       dict(SHAPE))
    kept = at.prune_configs({})
    assert kept[-1] is too_big and len(kept) == 2


def test_prune_never_empties_and_passes_through_unknown_callers() -> None:
    hook = kt.prune(target="h100")
    configs = [_cfg(256, 256, 64, 8, 4)]
    # called outside an Autotuner (no `self` with base_fn in the caller): unchanged
    assert hook(configs, dict(SHAPE)) == configs
    # nothing fits: the configs come back unchanged rather than an empty list
    at = FakeAutotuner(_stub("matmul_kernel", MATMUL), configs, hook, dict(SHAPE))
    assert at.prune_configs({}) == configs


def test_seed_configs_returns_top_k_feasible_configs(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_triton = types.ModuleType("triton")
    fake_triton.Config = FakeConfig  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "triton", fake_triton)
    seeds = kt.seed_configs(_stub("matmul_kernel", MATMUL), k=3, target="h100", shape=SHAPE)
    assert 1 <= len(seeds) <= 3
    assert len({(tuple(sorted(s.kwargs.items())), s.num_warps, s.num_stages) for s in seeds}) == len(seeds)
    for s in seeds:
        assert "M" not in s.kwargs                 # shape names are launch arguments, not constexprs
        assert _model_order([FakeConfig(dict(s.kwargs, **SHAPE), s.num_warps, s.num_stages)])  # feasible
    # the first seed is the model's favourite among the seeds, or the author's config (examples/matmul.py's
    # autotune list), kept first when the model's gain over it is within its error (ranking.MODEL_ERROR)
    author = [(128, 256, 64, 8, 3), (256, 128, 64, 8, 3), (128, 128, 64, 8, 4), (128, 128, 32, 4, 4),
              (128, 64, 64, 4, 4), (64, 128, 32, 4, 4), (64, 64, 32, 4, 5)]
    first = seeds[0]
    key = (first.kwargs["BLOCK_M"], first.kwargs["BLOCK_N"], first.kwargs["BLOCK_K"], first.num_warps,
           first.num_stages)
    assert _model_order(seeds)[0] is first or key in author
    assert _model_order(seeds[1:]) == seeds[1:]
