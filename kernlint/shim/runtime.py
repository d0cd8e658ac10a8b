"""The Shim object: Triton's launch paths wrapped so that a config store's entries apply (see __init__.py for
where it hooks and why). Imports Triton only inside `Shim.install()`."""
from __future__ import annotations

import inspect
import logging
import threading
from collections.abc import Callable
from typing import Any

from kernlint.hardware.specs import resolve_target
from kernlint.core.config_store import Entry, qualname_key, same_module, source_hash, split_id
from kernlint.shim.author_space import outside_authors
from kernlint.shim.identity import kernel_source, module_ids, qualname_of, unwrap
from kernlint.shim.target import describe_target

log = logging.getLogger("kernlint.shim")
LAUNCH_OPTIONS = ("num_warps", "num_stages", "maxnreg")
AUTOTUNE, HEURISTICS = "autotune", "heuristics"   # who owns a JIT function's constexprs (see _layer)
_NONE = object()          # cache marker: this kernel has no usable entry
_UNSET = object()         # a constexpr the launch does not pass and that has no default
_active: list[Shim] = []  # the installed shim (at most one)


def _pow2(v: Any) -> Any:
    if isinstance(v, int) and not isinstance(v, bool) and v > 0:
        return 1 << max(0, v - 1).bit_length()
    return v


def _differs(a: Any, b: Any) -> bool:
    try:
        return bool(a != b)
    except Exception:  # noqa: BLE001 - an array-like or odd value: not provably the same, so it differs
        return True


def _defaults(fn: Any) -> dict[str, Any]:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return {}
    return {n: p.default for n, p in params.items() if p.default is not inspect.Parameter.empty}


class _Plan:
    """The entries for one kernel on this GPU, by bucket label; the bucket names are the same for all."""

    def __init__(self, name: str, entries: list[Entry], fn: Any = None) -> None:
        self.name = name
        self.by_bucket = {e.bucket: e for e in entries}
        names = [e.bucket for e in entries if e.bucket != "*"]
        self.keys = [kv.split("=", 1)[0] for kv in names[0].split(",")] if names else []
        self.failed: set[Any] = set()       # failed bucket labels, and (bucket, event) keys already logged
        self.defaults = _defaults(fn) if fn is not None else {}   # what a launch that omits a constexpr uses

    def pick(self, bound: dict[str, Any]) -> Entry | None:
        if self.keys:
            label = ",".join(f"{k}={_pow2(bound.get(k))}" for k in sorted(self.keys))
            e = self.by_bucket.get(label)
            if e is not None and e.keep is not None:   # `recommend` kept the author's config for this bucket
                return None
            if e is not None and label not in self.failed:
                return e
        e = self.by_bucket.get("*")
        return e if e is not None and e.keep is None and "*" not in self.failed else None


class _Tuned:
    """An autotuner whose `configs` the shim swaps per launch. The lists are built once per bucket, so the
    same Config objects come back on every launch and `restore` can find them in the autotuner's cache."""

    def __init__(self, at: Any) -> None:
        self.at = at
        self.author = at.configs              # the author's own list object: restored as it was
        self.by_bucket: dict[str, list[Any]] = {}
        self.ours: list[Any] = []

    def configs_for(self, entry: Entry, mode: str) -> list[Any]:
        got = self.by_bucket.get(entry.bucket)
        if got is None:
            from triton.runtime.autotuner import Config
            cfg = entry.config
            rec = Config(dict(cfg.get("kwargs") or {}),
                         **{o: cfg[o] for o in LAUNCH_OPTIONS if cfg.get(o) is not None})
            self.ours.append(rec)
            got = [rec] if mode == "replace" else [rec, *(c for c in self.author if str(c) != str(rec))]
            self.by_bucket[entry.bucket] = got
        return got

    def restore(self) -> None:
        # Leaving the shim used to leave `configs` replaced, and the tuning cache pointing at the shim's
        # Config: the author's kernel kept running the recommendation after uninstall().
        self.at.configs = self.author
        ours = {id(c) for c in self.ours}
        cache = getattr(self.at, "cache", None)
        if isinstance(cache, dict):
            for key in [k for k, c in cache.items() if id(c) in ours]:
                del cache[key]                # the next launch tunes the author's configs, as before install


class Shim:
    def __init__(self, entries: list[Entry], mode: str = "replace", target: str | None = None,
                 path: str = "<entries>") -> None:
        if mode not in ("replace", "seed"):
            raise ValueError(f"mode must be 'replace' or 'seed', not {mode!r}")
        self.mode = mode
        self.path = path
        # "sm_90", "H200" → the key entries carry, as `--target` resolves it; unknown raises UnknownTarget
        self.target = resolve_target(target).key if target is not None else None
        self.entries = entries
        self.log: list[tuple[str, str, str]] = []     # (event, kernel, detail): what was applied
        self._plans: dict[int, Any] = {}
        self._saved: list[tuple[Any, str, Any]] = []
        self._index: dict[str, list[Entry]] = {}
        self._target_known = target is not None
        self._target_why = "given to install()"
        self._told: set[str] = set()                  # once-per-shim notes ("other-gpu", "no-target")
        self._keep: list[Any] = []                    # kernels keyed by id() below stay alive: no id reuse
        self._owner: dict[int, str] = {}              # id(JIT function) → AUTOTUNE | HEURISTICS
        self._layer_jit: dict[int, Any] = {}          # id(Autotuner / Heuristics) → its JIT function
        self._tuned: dict[int, _Tuned] = {}           # id(Autotuner) → its saved configs
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

    def _note_once(self, key: str, event: str, kernel: str, detail: str, level: int = logging.INFO) -> None:
        with self._lock:
            if key in self._told:
                return
            self._told.add(key)
        self._note(event, kernel, detail, level)

    def _plan_for(self, jf: Any) -> _Plan | None:
        plan = self._plans.get(id(jf))            # the fast path stays one dict access, no lock
        if plan is None:
            with self._lock:                      # double-checked: only one thread builds (and logs "stale")
                plan = self._plans.get(id(jf))
                if plan is None:
                    built = self._build_plan(jf)
                    self._keep.append(jf)
                    plan = self._plans[id(jf)] = _NONE if built is None else built
        return None if plan is _NONE else plan

    def _build_plan(self, jf: Any) -> _Plan | None:
        fn = unwrap(jf)[1]
        qualname = qualname_of(fn)                # `make.<locals>.k5` → `make.k5`, as recommend names it
        candidates = self._index.get(qualname, ())
        if not candidates:
            return None
        mods = module_ids(fn)
        if not mods:
            self._note_once("main:" + qualname, "no-module", qualname, "defined in __main__ without a source "
                            f"file, so it cannot be matched to {self.path}'s entries; keeping the author's config")
            return None
        if not self._target_known:
            (self.target, self._target_why), self._target_known = describe_target(), True
        mine: list[Entry] = []
        stale: list[str] = []
        other = False
        digest_now: str | None = None
        for e in candidates:
            emod, _, digest = split_id(e.kernel)
            if not any(same_module(emod, m) for m in mods):
                log.debug("%s: entry for module %s ignored: the kernel is in %s", qualname, emod, " / ".join(mods))
                continue
            if e.target != self.target:
                log.debug("%s: entry for %s ignored on %s", qualname, e.target, self.target)
                other = True
                continue
            if digest_now is None:                # hashed as recommend hashes it (store.def_text)
                digest_now = source_hash(kernel_source(fn))
            if digest != digest_now:
                # stale, or the entry of a same-named kernel in another directory (`a/ops.py`, `b/ops.py`: module
                # ids are matched by suffix); decided after all entries are seen
                stale.append(emod)
                continue
            mine.append(e)
        if stale and not mine:
            self._note("stale", qualname, f"source changed since the recommendation in {self.path}; "
                       "keeping the author's config", logging.WARNING)
            return None
        if stale:
            log.debug("%s: entries of module(s) %s hash differently: another file's kernel of the same name",
                      qualname, ", ".join(sorted(set(stale))))
        if other and not mine:
            # each such entry is a debug line (the contract); this says once why nothing changed
            targets = ", ".join(sorted({e.target for e in self.entries}))
            if self.target is None:
                level = logging.ERROR if self._target_why.startswith("KERNLINT_TARGET") else logging.INFO
                self._note_once("target", "no-target", qualname, f"{self.path} has entries for {targets}, but no "
                                f"target is known ({self._target_why}): kernels keep their own configs", level)
            else:
                self._note_once("target", "other-gpu", qualname, f"{self.path} has entries for {targets}, not for "
                                f"this GPU ({self.target}): kernels keep their own configs; set KERNLINT_TARGET "
                                "to choose the entries")
        return _Plan(qualname, mine, fn) if mine else None

    def _layer(self, layer: Any, kind: str) -> Any:
        """The JIT function under an Autotuner / Heuristics `layer`, marked as owned by it. Heuristics compute
        constexprs before JITFunction.run and the autotuner benchmarks its own configs there, so the JIT-level
        wrapper must not change the block sizes of such a kernel (it did: heap corruption, see tests)."""
        jit = self._layer_jit.get(id(layer))
        if jit is None:
            with self._lock:
                self._keep.append(layer)
                jit = self._layer_jit[id(layer)] = unwrap(layer)[0]
        if kind == AUTOTUNE or id(jit) not in self._owner:   # an autotuner anywhere in the chain owns it
            self._owner[id(jit)] = kind
        return jit

    # ---------------------------------------------------------------- install
    def install(self) -> Shim:
        for e in self.entries:
            self._index.setdefault(qualname_key(split_id(e.kernel)[1]), []).append(e)
        from triton.runtime.autotuner import Autotuner, Heuristics
        from triton.runtime.jit import JITFunction

        self._wrap(JITFunction, "run", self._jit_run)
        self._wrap(Autotuner, "run", self._autotune_run)
        self._wrap(Autotuner, "warmup", self._mark(AUTOTUNE))      # warmup compiles through JITFunction.run
        self._wrap(Heuristics, "run", self._mark(HEURISTICS))
        try:
            from triton.runtime.interpreter import InterpretedFunction
            self._wrap(InterpretedFunction, "run", self._jit_run)
        except ImportError:
            pass
        _active[:] = [self]
        return self

    def _wrap(self, cls: Any, attr: str, make: Callable[[Callable[..., Any]], Callable[..., Any]]) -> None:
        orig = cls.__dict__.get(attr)
        if orig is None:                          # not defined by this Triton version: nothing to wrap
            return
        self._saved.append((cls, attr, orig))
        wrapper = make(orig)
        wrapper.__wrapped__ = orig   # type: ignore[attr-defined]
        setattr(cls, attr, wrapper)

    def uninstall(self) -> None:
        for cls, attr, orig in reversed(self._saved):
            setattr(cls, attr, orig)
        self._saved.clear()
        with self._lock:
            tuned = list(self._tuned.values())
            self._tuned.clear()
        for t in tuned:
            t.restore()
        if _active and _active[0] is self:
            _active.clear()

    def __enter__(self) -> Shim:
        return self

    def __exit__(self, *exc: object) -> None:
        self.uninstall()

    # ---------------------------------------------------------------- wrappers
    def _mark(self, kind: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        def make(orig: Callable[..., Any]) -> Callable[..., Any]:
            def run(layer: Any, *args: Any, **kwargs: Any) -> Any:
                self._layer(layer, kind)
                return orig(layer, *args, **kwargs)
            return run
        return make

    def _skip(self, plan: _Plan, entry: Entry, want: dict[str, Any], have: dict[str, Any], owner: str | None) -> None:
        if not self._once(plan, (entry.bucket, "skip")):
            return
        rec = ", ".join(f"{k}={v}" for k, v in want.items())
        got = ", ".join(f"{k}={'(none)' if have[k] is _UNSET else have[k]}" for k in want)
        why = ("@triton.heuristics computed values from the launch's constexprs before JITFunction.run"
               if owner == HEURISTICS else "the grid is fixed, computed for the launch's block sizes")
        self._note("skip", plan.name, f"bucket {entry.bucket}: the recommendation needs {rec}, the launch has {got} "
                   f"and {why}; its num_warps/num_stages were never evaluated with these block sizes, so the "
                   "author's config is kept")

    def _jit_run(self, orig: Callable[..., Any]) -> Callable[..., Any]:
        shim = self

        def run(jf: Any, *args: Any, grid: Any, warmup: bool, **kwargs: Any) -> Any:
            owner = shim._owner.get(id(jf))
            if owner == AUTOTUNE:                 # Autotuner.run applies the entry to its configs
                return orig(jf, *args, grid=grid, warmup=warmup, **kwargs)
            plan = shim._plan_for(jf)
            if plan is None:
                return orig(jf, *args, grid=grid, warmup=warmup, **kwargs)
            bound = dict(zip(jf.arg_names, args)) | kwargs
            entry = plan.pick(bound)
            if entry is None:
                return orig(jf, *args, grid=grid, warmup=warmup, **kwargs)
            cfg = entry.config
            cx = {k: v for k, v in (cfg.get("kwargs") or {}).items() if k in jf.arg_names}
            have = {k: bound.get(k, plan.defaults.get(k, _UNSET)) for k in cx}
            changes = {k: v for k, v in cx.items() if _differs(have[k], v)}
            # Block sizes change only with a callable grid (Triton evaluates it after binding, with the new
            # values) and no heuristics. Otherwise the entry is skipped whole: its options alone were a
            # pairing the model never ranked (cross_entropy: BLOCK_SIZE=8192 with num_warps=1 spills).
            if changes and (owner == HEURISTICS or not callable(grid)):
                shim._skip(plan, entry, changes, have, owner)
                return orig(jf, *args, grid=grid, warmup=warmup, **kwargs)
            new = dict(kwargs)
            for opt in LAUNCH_OPTIONS:
                if cfg.get(opt) is not None:
                    new[opt] = cfg[opt]
            new.update(changes)
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

    def _tuned_for(self, at: Any) -> _Tuned:
        tuned = self._tuned.get(id(at))
        if tuned is None:
            with self._lock:
                tuned = self._tuned.get(id(at))
                if tuned is None:
                    self._keep.append(at)
                    tuned = self._tuned[id(at)] = _Tuned(at)
        return tuned

    def _autotune_run(self, orig: Callable[..., Any]) -> Callable[..., Any]:
        shim = self

        def run(at: Any, *args: Any, **kwargs: Any) -> Any:
            jit = shim._layer(at, AUTOTUNE)       # the plan is the JIT function's: one "applied" line for both
            plan = shim._plan_for(jit)
            if plan is None:
                return orig(at, *args, **kwargs)
            tuned = shim._tuned_for(at)
            bound = dict(zip(at.arg_names, args)) | kwargs if plan.keys else {}
            entry = plan.pick(bound)
            if entry is not None and entry.space is None:   # claimed inside the author's configs: still so?
                why = outside_authors(entry.config.get("kwargs") or {}, tuned.author)
                if why is not None:
                    plan.failed.add(entry.bucket)
                    shim._note("stale", plan.name, f"bucket {entry.bucket}: {why} (the author's configs "
                               "changed since `kernlint recommend`); author's configs used", logging.WARNING)
                    entry = None
            if entry is None:
                at.configs = tuned.author
                return orig(at, *args, **kwargs)
            at.configs = tuned.configs_for(entry, shim.mode)
            try:
                out = orig(at, *args, **kwargs)
            except Exception as exc:  # noqa: BLE001 - the recommendation did not compile: author's configs
                plan.failed.add(entry.bucket)
                at.configs = tuned.author
                if shim._once(plan, (entry.bucket, "fallback")):
                    shim._note("fallback", plan.name, f"{type(exc).__name__}: {str(exc)[:160]}; "
                               "author's configs used", logging.WARNING)
                return orig(at, *args, **kwargs)
            if shim._once(plan, (entry.bucket, "applied")):
                shim._note("applied", plan.name, f"autotune {shim.mode}, bucket {entry.bucket}: "
                           f"{at.configs[0]}")
            return out
        return run
