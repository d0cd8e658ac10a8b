"""Which GPU's entries apply: device names matched by exact model token, compute capability and SM count;
$KERNLINT_TARGET resolved like `--target`; no target → nothing applied (Triton shim and Helion apply), and
an unknown one never crashes the user's program (`kernlint.triton.prune` runs inside Triton's autotuner).
Also: prune / seed_configs say once why a kernel could not be analysed. No GPU, torch or triton needed."""
from __future__ import annotations

import logging
import sys
import types
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import kernlint.triton as kt
from kernlint.recommend.cli import kernel_source as recommend_source
from kernlint.core.config_store import Entry, kernel_id, write_store

ROOT = Path(__file__).resolve().parents[2]
MATMUL = str(ROOT / "examples" / "matmul.py")


class _Props:
    def __init__(self, name: str, cap: tuple[int, int], sms: int) -> None:
        self.name, (self.major, self.minor), self.multi_processor_count = name, cap, sms


def _torch(monkeypatch: pytest.MonkeyPatch, name: str | None, cap: tuple[int, int] = (0, 0), sms: int = 0) -> None:
    """A torch whose CUDA device is `name` (None: no GPU)."""
    cuda = types.SimpleNamespace(
        is_available=lambda: name is not None, current_device=lambda: 0,
        get_device_name=lambda *a: name, get_device_capability=lambda *a: cap,
        get_device_properties=lambda *a: _Props(name or "", cap, sms))
    torch = types.ModuleType("torch")
    torch.cuda = cuda  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "torch", torch)
    monkeypatch.delenv("KERNLINT_TARGET", raising=False)


@pytest.mark.parametrize("name, cap, sms, want", [
    ("NVIDIA H100 80GB HBM3", (9, 0), 132, "h100"),
    ("NVIDIA H200", (9, 0), 132, "h200"),                 # what PyTorch reports on this workplace's H200
    ("NVIDIA B200", (10, 0), 148, "b200"),
    ("NVIDIA A100-SXM4-80GB", (8, 0), 108, "a100"),
    ("NVIDIA L40S", (8, 9), 142, "l40s"),
    ("NVIDIA GeForce RTX 4090", (8, 9), 128, "rtx4090"),
    ("NVIDIA GeForce RTX 5090", (12, 0), 170, "rtx5090"),
    ("NVIDIA RTX A1000 Laptop GPU", (8, 6), 20, None),     # was a100 ("a100" in "rtx a1000")
    ("NVIDIA GH200 480GB", (9, 0), 132, None),             # was h200: not a kernlint target, say so
    ("NVIDIA H100 PCIe", (9, 0), 114, None),               # 114 SMs: the h100 target's waves are wrong
    ("NVIDIA H100 80GB HBM3 MIG 1g.10gb", (9, 0), 16, None),
    ("NVIDIA A10", (8, 6), 72, None),
    ("NVIDIA GB200", (10, 0), 152, None),
])
def test_detect_target_uses_exact_model_tokens(monkeypatch: pytest.MonkeyPatch, name: str, cap: tuple[int, int],
                                               sms: int, want: str | None) -> None:
    from kernlint.shim import detect_target
    _torch(monkeypatch, name, cap, sms)
    assert detect_target() == want


def test_no_gpu_is_no_target(monkeypatch: pytest.MonkeyPatch) -> None:
    from kernlint.shim import detect_target
    _torch(monkeypatch, None)
    assert detect_target() is None


@pytest.mark.parametrize("value, want", [("sm_90", "h100"), (" H200 ", "h200"), ("hopper", "h100"),
                                         ("sm_100", "b200"), ("4090", "rtx4090")])
def test_kernlint_target_is_resolved_like_the_cli(monkeypatch: pytest.MonkeyPatch, value: str, want: str) -> None:
    from kernlint.shim import detect_target
    _torch(monkeypatch, "NVIDIA A100-SXM4-80GB", (8, 0), 108)      # the variable wins over the device
    monkeypatch.setenv("KERNLINT_TARGET", value)
    assert detect_target() == want


def test_unknown_kernlint_target_is_an_error_not_a_target(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    import kernlint.shim as shim
    _torch(monkeypatch, None)
    monkeypatch.setenv("KERNLINT_TARGET", "bogus")
    with caplog.at_level(logging.ERROR, logger="kernlint.shim"):
        assert shim.detect_target() is None
    assert any("bogus" in r.getMessage() for r in caplog.records if r.levelno == logging.ERROR)
    store = tmp_path / "lock.json"
    write_store(str(store), [], "test")
    inert = shim.install(str(store))          # wraps nothing (no triton is even imported), says why
    assert [e[0] for e in inert.log] == ["settings-error"] and "bogus" in inert.log[0][2]


def test_install_normalises_an_explicit_target() -> None:
    from kernlint.shim import Shim
    assert Shim([], target="sm_90").target == "h100" and Shim([], target="H200").target == "h200"


def test_no_target_says_why_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from kernlint.shim import Shim

    def k(x):  # type: ignore[no-untyped-def]
        return x
    _torch(monkeypatch, "NVIDIA GH200 480GB", (9, 0), 132)
    e = Entry(kernel_id(__name__, "test_no_target_says_why_once.k", "def k(x):\n    return x"), "h200", "*",
              {"kwargs": {}}, {}, "")
    shim = Shim([e], path="lock.json")
    shim._index = {"test_no_target_says_why_once.k": [e]}
    assert shim._build_plan(k) is None and shim._build_plan(k) is None
    assert [x[0] for x in shim.log] == ["no-target"], shim.log
    assert "GH200" in shim.log[0][2] and "KERNLINT_TARGET" in shim.log[0][2]


# ------------------------------------------------------------------ Helion apply
HELION_SRC = '''import helion


@helion.kernel(config=helion.Config(block_sizes=[64], num_warps=4, num_stages=1))
def hk(x):
    return x
'''


def _fake_helion(monkeypatch: pytest.MonkeyPatch) -> None:
    class Config(dict):
        def __init__(self, **kw: Any) -> None:
            super().__init__(**kw)

    class Kernel:
        def __init__(self, fn: Any, configs: list[Any]) -> None:
            self.fn, self.configs = fn, list(configs)

        def reset(self) -> None:
            pass

    def kernel(fn: Any = None, *, config: Any = None, configs: Any = None) -> Any:
        def wrap(f: Any) -> Kernel:
            return Kernel(f, configs or ([config] if config else []))
        return wrap(fn) if fn else wrap
    helion = types.ModuleType("helion")
    helion.Config, helion.kernel = Config, kernel  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "helion", helion)


def _helion_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, str]:
    _fake_helion(monkeypatch)
    path = tmp_path / "hmod.py"
    path.write_text(HELION_SRC)
    ns: dict[str, Any] = {"__name__": "hmod"}
    exec(compile(HELION_SRC, str(path), "exec"), ns)
    kid = kernel_id("hmod", "hk", recommend_source(str(path), 5))
    entries = [Entry(kid, t, "*", {"kwargs": {"block_sizes": [b]}, "num_warps": w, "num_stages": 2,
                                   "frontend": "helion"}, {}, "") for t, b, w in (("b200", 256, 8), ("h100", 128, 4))]
    store = str(tmp_path / "lock.json")
    write_store(store, entries, "test")
    return ns["hk"], store


def test_helion_apply_without_a_target_applies_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       caplog: pytest.LogCaptureFixture) -> None:
    from kernlint.shim.helion import apply
    kernel, store = _helion_store(tmp_path, monkeypatch)
    _torch(monkeypatch, None)
    author = list(kernel.configs)
    with caplog.at_level(logging.WARNING, logger="kernlint.shim.helion"):
        assert apply(kernel, store) is None                  # was the b200 entry: it sorts first
    assert kernel.configs == author
    assert any("no target" in r.getMessage() and "lock.json" in r.getMessage() for r in caplog.records)
    got = apply(kernel, store, target="sm_90")               # aliases as for --target
    assert got is not None and got["block_sizes"] == [128] and kernel.configs == [got]


# ------------------------------------------------------------------ kernlint.triton helpers
@dataclass(eq=False)
class FakeConfig:
    kwargs: dict[str, Any]
    num_warps: int = 4
    num_stages: int = 3
    pre_hook: Any = None


@dataclass
class FakeAutotuner:
    """Calls the prune hook as Triton's `Autotuner.prune_configs` does (the hook finds `self` in the caller)."""
    fn: Any
    configs: list[FakeConfig]
    early_config_prune: Any
    nargs: dict[str, Any] = field(default_factory=dict)

    @property
    def base_fn(self) -> Any:
        return self.fn

    def prune_configs(self, kwargs: dict[str, Any]) -> list[FakeConfig]:
        return self.early_config_prune(self.configs, self.nargs, **kwargs)


def _stub(name: str, path: str) -> Any:
    ns: dict[str, Any] = {}
    exec(compile(f"def {name}():\n    pass\n", path, "exec"), ns)
    return ns[name]


def _configs() -> list[FakeConfig]:
    return [FakeConfig({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8}, 4, 3),
            FakeConfig({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "GROUP_M": 8}, 8, 3)]


@pytest.fixture(autouse=True)
def _fresh_helpers() -> Iterator[None]:
    # getattr: the same tests run against the helpers as they were before the fix (fail-before check).
    # Cleared after each test too: the planted failure below would stay cached for later test files
    # (tests/recommend/test_triton_helpers.py failed when run after this one).
    cache = getattr(kt, "_analysis_or_reason", kt._analysis)
    cache.cache_clear()
    getattr(kt, "_told", set()).clear()
    yield
    cache.cache_clear()
    getattr(kt, "_told", set()).clear()


def _records(caplog: pytest.LogCaptureFixture, level: int) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "kernlint.triton" and r.levelno == level]


def test_prune_with_an_unknown_kernlint_target_keeps_the_configs(monkeypatch: pytest.MonkeyPatch,
                                                                 caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setenv("KERNLINT_TARGET", "bogus")
    configs = _configs()
    at = FakeAutotuner(_stub("matmul_kernel", MATMUL), configs, kt.prune(), {"M": 4096, "N": 4096, "K": 4096})
    with caplog.at_level(logging.DEBUG, logger="kernlint.triton"):
        assert at.prune_configs({}) == configs               # raised UnknownTarget inside Triton's autotuner
        assert at.prune_configs({}) == configs
    (msg,) = _records(caplog, logging.ERROR)                 # once, naming the value
    assert "bogus" in msg and "matmul_kernel" in msg


def test_prune_with_an_unknown_explicit_target_fails_at_decoration() -> None:
    from kernlint.hardware.specs import UnknownTarget
    with pytest.raises(UnknownTarget):
        kt.prune(target="bogus")


def test_prune_and_seed_say_once_why_a_kernel_was_not_analysed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               caplog: pytest.LogCaptureFixture) -> None:
    fake_triton = types.ModuleType("triton")
    fake_triton.Config = FakeConfig  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "triton", fake_triton)
    broken = tmp_path / "broken.py"
    broken.write_text("import triton\n\n@triton.jit\ndef k(x_ptr:\n    pass\n")      # does not parse: KL001
    configs = _configs()
    at = FakeAutotuner(_stub("k", str(broken)), configs, kt.prune(target="h100"), {})
    with caplog.at_level(logging.DEBUG, logger="kernlint.triton"):
        assert at.prune_configs({}) == configs and at.prune_configs({}) == configs
        assert kt.seed_configs(_stub("k", str(broken)), target="h100") == []
    warnings = _records(caplog, logging.WARNING)
    assert len(warnings) == 2, warnings                      # one for prune, one for seed_configs
    assert all("KL001" in w and "author's configs are used unchanged" in w for w in warnings), warnings


def test_prune_says_why_on_an_internal_error(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    import kernlint.pipeline.api

    def boom(*a: Any, **k: Any) -> Any:
        raise RuntimeError("planted")
    monkeypatch.setattr(kernlint.pipeline.api, "_lint_one", boom)     # lint_paths turns it into a KL000 result
    configs = _configs()
    at = FakeAutotuner(_stub("matmul_kernel", MATMUL), configs, kt.prune(target="h100"), {})
    with caplog.at_level(logging.DEBUG, logger="kernlint.triton"):
        assert at.prune_configs({}) == configs
    (msg,) = _records(caplog, logging.WARNING)
    assert "KL000" in msg and "planted" in msg
