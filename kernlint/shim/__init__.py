"""Apply a config store (`kernlint.lock.json`) to Triton kernels at run time, without editing them.

    import kernlint.shim
    kernlint.shim.install("kernlint.lock.json")           # or: with kernlint.shim.install(...): ...
    kernlint.shim.install_from_env()                       # reads KERNLINT_CONFIGS=path (explicit call)

Where it hooks (shared/reference/triton_truth.md §5; the same in Triton 3.4–3.9):
  * `JITFunction.run` at class level — every launch of a plain `@triton.jit` kernel passes through it.
    Launch options (num_warps, num_stages, maxnreg) are always safe to override; constexpr block sizes
    only when `grid` is callable, because Triton evaluates a callable grid after binding, with the new
    values — a fixed grid was computed for the author's block sizes and would now be wrong.
  * `Autotuner.run` — the configs are swapped for the recommended one ("replace": a single config takes
    the no-benchmark path) or the recommendation is put first ("seed").
  * `InterpretedFunction.run` under TRITON_INTERPRET=1, where `JITFunction.run` is not on the path.
Every wrapped attribute is saved and chained; `uninstall()` restores it. A recommendation that fails to
compile (OutOfResources, ptxas errors) or whose kernel source hash changed falls back to the author's
config, logged once. After the first launch of a kernel the lookup is one dict access on `id(fn)`.
This module imports neither libcst nor the analysis, and Triton only inside `install()`.
"""
from __future__ import annotations

import inspect
import logging
import os
import re
import textwrap
import threading
from collections.abc import Callable
from typing import Any

from kernlint.recommend.store import Entry, StoreError, read_store, source_hash, split_id

log = logging.getLogger("kernlint.shim")
ENV_VAR = "KERNLINT_CONFIGS"
LAUNCH_OPTIONS = ("num_warps", "num_stages", "maxnreg")
_NONE = object()          # cache marker: this kernel has no usable entry
_active: Shim | None = None


def detect_target() -> str | None:
    """The kernlint target key of the current GPU ("h200"), or None without one (CPU, interpreter)."""
    env = os.environ.get("KERNLINT_TARGET")
    if env:
        return env.lower()
    try:
        import torch
        if not torch.cuda.is_available():
            return None
        name = torch.cuda.get_device_name().lower()
    except Exception:  # noqa: BLE001 - no torch or no driver: no target, entries are ignored
        return None
    for key in ("h200", "h100", "b200", "a100", "l40s", "4090", "5090"):
        if key in name:
            return {"4090": "rtx4090", "5090": "rtx5090"}.get(key, key)
    return None


def _fn_source(fn: Any) -> str:
    raw = getattr(fn, "fn", fn)
    try:
        src = textwrap.dedent(inspect.getsource(raw))
    except (OSError, TypeError):
        return ""
    m = re.search(r"^def\s", src, re.MULTILINE)     # Triton's JITFunction.src starts at `def` too
    return src[m.start():] if m else src


def _pow2(v: Any) -> Any:
    if isinstance(v, int) and not isinstance(v, bool) and v > 0:
        return 1 << max(0, v - 1).bit_length()
    return v


class _Plan:
    """The entries for one kernel on this GPU, by bucket label; the bucket names are the same for all."""

    def __init__(self, name: str, entries: list[Entry]) -> None:
        self.name = name
        self.by_bucket = {e.bucket: e for e in entries}
        names = [e.bucket for e in entries if e.bucket != "*"]
        self.keys = [kv.split("=", 1)[0] for kv in names[0].split(",")] if names else []
        self.failed: set[str] = set()

    def pick(self, bound: dict[str, Any]) -> Entry | None:
        if self.keys:
            label = ",".join(f"{k}={_pow2(bound.get(k))}" for k in sorted(self.keys))
            e = self.by_bucket.get(label)
            if e is not None and label not in self.failed:
                return e
        e = self.by_bucket.get("*")
        return e if e is not None and "*" not in self.failed else None


class Shim:
    def __init__(self, entries: list[Entry], mode: str = "replace", target: str | None = None,
                 path: str = "<entries>") -> None:
        if mode not in ("replace", "seed"):
            raise ValueError(f"mode must be 'replace' or 'seed', not {mode!r}")
        self.mode = mode
        self.path = path
        self.target = target
        self.entries = entries
        self.log: list[tuple[str, str, str]] = []     # (event, kernel, detail): what was applied
        self._plans: dict[int, Any] = {}
        self._saved: list[tuple[Any, str, Any]] = []
        self._index: dict[str, list[Entry]] = {}
        self._target_known = target is not None
        self._told_target = False
        # Two threads launching the same kernel: without the lock both built the plan (a "stale" line each)
        # and both logged "fallback"/"applied" (check-then-add on plan.failed). Found by test_shim_safety.py.
        self._lock = threading.RLock()

    # ---------------------------------------------------------------- lookup
    def _note(self, event: str, kernel: str, detail: str, level: int = logging.INFO) -> None:
        self.log.append((event, kernel, detail))
        log.log(level, "%s %s: %s", event, kernel, detail)   # the logger's name says kernlint.shim

    def _once(self, plan: _Plan, key: Any) -> bool:
        """True the first time `key` is marked on `plan` (thread-safe): the event is logged once."""
        with self._lock:
            if key in plan.failed:
                return False
            plan.failed.add(key)
            return True

    def _plan_for(self, jf: Any) -> _Plan | None:
        plan = self._plans.get(id(jf))            # the fast path stays one dict access, no lock
        if plan is None:
            with self._lock:                      # double-checked: only one thread builds (and logs "stale")
                plan = self._plans.get(id(jf))
                if plan is None:
                    built = self._build_plan(jf)
                    plan = self._plans[id(jf)] = _NONE if built is None else built
        return None if plan is _NONE else plan

    def _build_plan(self, jf: Any) -> _Plan | None:
        fn = getattr(jf, "fn", jf)
        module, qualname = getattr(fn, "__module__", ""), getattr(fn, "__qualname__", "")
        if not self._target_known:
            self.target, self._target_known = detect_target(), True
        mine: list[Entry] = []
        other = False
        for e in self._index.get(qualname, ()):
            emod, _, digest = split_id(e.kernel)
            if not (emod == module or module.endswith("." + emod) or emod.endswith("." + module)):
                continue
            if e.target != self.target:
                log.debug("%s: entry for %s ignored on %s", qualname, e.target, self.target)
                other = True
                continue
            if digest != source_hash(_fn_source(fn)):
                self._note("stale", qualname, f"source changed since the recommendation in {self.path}; "
                           "keeping the author's config", logging.WARNING)
                return None
            mine.append(e)
        if other and not mine and not self._told_target:
            # each such entry is a debug line (the contract); this says once why nothing changed
            self._told_target = True
            targets = sorted({e.target for e in self.entries})
            self._note("other-gpu", qualname, f"{self.path} has entries for {', '.join(targets)}, not for this GPU "
                       f"({self.target or 'not detected'}): kernels keep their own configs; set KERNLINT_TARGET "
                       "to choose the entries")
        return _Plan(qualname, mine) if mine else None

    # ---------------------------------------------------------------- install
    def install(self) -> Shim:
        global _active
        for e in self.entries:
            self._index.setdefault(split_id(e.kernel)[1], []).append(e)
        from triton.runtime.autotuner import Autotuner
        from triton.runtime.jit import JITFunction

        self._wrap(JITFunction, "run", self._jit_run)
        self._wrap(Autotuner, "run", self._autotune_run)
        try:
            from triton.runtime.interpreter import InterpretedFunction
            self._wrap(InterpretedFunction, "run", self._jit_run)
        except ImportError:
            pass
        _active = self
        return self

    def _wrap(self, cls: Any, attr: str, make: Callable[[Callable[..., Any]], Callable[..., Any]]) -> None:
        orig = cls.__dict__[attr]
        self._saved.append((cls, attr, orig))
        wrapper = make(orig)
        wrapper.__wrapped__ = orig   # type: ignore[attr-defined]
        setattr(cls, attr, wrapper)

    def uninstall(self) -> None:
        global _active
        for cls, attr, orig in reversed(self._saved):
            setattr(cls, attr, orig)
        self._saved.clear()
        if _active is self:
            _active = None

    def __enter__(self) -> Shim:
        return self

    def __exit__(self, *exc: object) -> None:
        self.uninstall()

    # ---------------------------------------------------------------- wrappers
    def _jit_run(self, orig: Callable[..., Any]) -> Callable[..., Any]:
        shim = self

        def run(jf: Any, *args: Any, grid: Any, warmup: bool, **kwargs: Any) -> Any:
            plan = shim._plan_for(jf) if not getattr(jf, "_kernlint_autotuned", False) else None
            if plan is None:
                return orig(jf, *args, grid=grid, warmup=warmup, **kwargs)
            bound = dict(zip(jf.arg_names, args)) | kwargs if plan.keys else {}
            entry = plan.pick(bound)
            if entry is None:
                return orig(jf, *args, grid=grid, warmup=warmup, **kwargs)
            new = dict(kwargs)
            cfg = entry.config
            for opt in LAUNCH_OPTIONS:
                if cfg.get(opt) is not None:
                    new[opt] = cfg[opt]
            cx = {k: v for k, v in (cfg.get("kwargs") or {}).items() if k in jf.arg_names}
            if cx and callable(grid):
                new.update(cx)
            elif cx and shim._once(plan, (entry.bucket, "fixed-grid")):
                shim._note("skip-constexprs", plan.name, "fixed grid: block sizes kept, launch options applied")
            try:
                out = orig(jf, *args, grid=grid, warmup=warmup, **new)
            except Exception as exc:  # noqa: BLE001 - OutOfResources / ptxas / compile errors: fall back
                plan.failed.add(entry.bucket)
                if shim._once(plan, (entry.bucket, "fallback")):   # a concurrent failing launch: one line
                    shim._note("fallback", plan.name, f"{type(exc).__name__}: {str(exc)[:160]}; "
                               "author's config used", logging.WARNING)
                return orig(jf, *args, grid=grid, warmup=warmup, **kwargs)
            if shim._once(plan, (entry.bucket, "applied")):
                shim._note("applied", plan.name, f"bucket {entry.bucket}: {cfg}")
            return out
        return run

    def _autotune_run(self, orig: Callable[..., Any]) -> Callable[..., Any]:
        shim = self

        def run(at: Any, *args: Any, **kwargs: Any) -> Any:
            plan = shim._plan_for(at.fn)
            if plan is None:
                return orig(at, *args, **kwargs)
            at.fn._kernlint_autotuned = True     # the JITFunction wrapper must not override autotune configs
            if not hasattr(at, "_kernlint_configs"):
                at._kernlint_configs = list(at.configs)
            bound = dict(zip(at.arg_names, args)) | kwargs if plan.keys else {}
            entry = plan.pick(bound)
            if entry is None:
                at.configs = at._kernlint_configs
                return orig(at, *args, **kwargs)
            from triton.runtime.autotuner import Config
            cfg = entry.config
            rec = Config(dict(cfg.get("kwargs") or {}), **{o: cfg[o] for o in LAUNCH_OPTIONS if cfg.get(o) is not None})
            at.configs = [rec] if shim.mode == "replace" else [rec] + [c for c in at._kernlint_configs if str(c) != str(rec)]
            try:
                out = orig(at, *args, **kwargs)
            except Exception as exc:  # noqa: BLE001 - the recommendation did not compile: author's configs
                plan.failed.add(entry.bucket)
                at.configs = at._kernlint_configs
                if shim._once(plan, (entry.bucket, "fallback")):
                    shim._note("fallback", plan.name, f"{type(exc).__name__}: {str(exc)[:160]}; "
                               "author's configs used", logging.WARNING)
                return orig(at, *args, **kwargs)
            if shim._once(plan, (entry.bucket, "applied")):
                shim._note("applied", plan.name, f"autotune {shim.mode}, bucket {entry.bucket}: {rec}")
            return out
        return run


def install(path: str, mode: str = "replace", target: str | None = None) -> Shim:
    """Install the store at `path`. A corrupt or foreign store is logged (naming the file and the problem)
    and nothing is changed: the kernels run with their own configs."""
    if _active is not None:
        _active.uninstall()
    try:
        entries = read_store(path)
    except StoreError as exc:
        # As documented, nothing is changed: no Triton attribute is wrapped (before, an empty shim was
        # installed anyway). The returned Shim is inert; its `log` holds the one error line.
        shim = Shim([], mode, target, path)
        shim._note("store-error", os.path.basename(path), f"{exc}; kernels keep their own configs", logging.ERROR)
        return shim
    return Shim(entries, mode, target, path).install()


def install_from_env(mode: str | None = None) -> Shim | None:
    """Install from $KERNLINT_CONFIGS (and $KERNLINT_SHIM_MODE); None when the variable is unset."""
    path = os.environ.get(ENV_VAR)
    if not path:
        return None
    mode = (mode or os.environ.get("KERNLINT_SHIM_MODE") or "replace").strip().lower()
    if mode not in ("replace", "seed"):
        # a launch script's typo must not stop the user's program: nothing is installed, and it says why
        shim = Shim([], "replace", None, path)
        shim._note("settings-error", "KERNLINT_SHIM_MODE", f"{mode!r} is not 'replace' or 'seed'; {path} not "
                   "applied, kernels keep their own configs", logging.ERROR)
        return shim
    return install(path, mode)


def uninstall() -> None:
    if _active is not None:
        _active.uninstall()


__all__ = ["ENV_VAR", "Shim", "detect_target", "install", "install_from_env", "uninstall"]
