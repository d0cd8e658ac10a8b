"""Apply a config store (`kernlint.lock.json`) to Triton kernels at run time, without editing them.

    import kernlint.shim
    kernlint.shim.install("kernlint.lock.json")           # or: with kernlint.shim.install(...): ...
    kernlint.shim.install_from_env()                       # reads KERNLINT_CONFIGS=path (explicit call)

Where it hooks (docs/design.md, "Ground truth"; the same in Triton 3.4–3.9):
  * `JITFunction.run` at class level — every launch of a plain `@triton.jit` kernel passes through it.
    Launch options (num_warps, num_stages, maxnreg) are applied together with the recommended constexpr
    block sizes, which change only when `grid` is callable (Triton evaluates it after binding, with the new
    values). A fixed grid was computed for the author's block sizes: when the recommendation needs other
    ones, the entry is skipped whole (its options were ranked for its own block sizes, never the author's).
  * `Autotuner.run` — the configs are swapped for the recommended one ("replace": a single config takes
    the no-benchmark path) or the recommendation is put first ("seed"). The autotuner owns the kernel: the
    JIT-level wrapper leaves every kernel under an Autotuner alone (found by walking `.fn`; `Autotuner.warmup`
    marks it too).
  * `Heuristics.run` — only marks the kernel: heuristics compute values from the constexprs before
    `JITFunction.run`, so no constexpr of such a kernel changes there; the entry applies (options only)
    when its block sizes are the launch's.
  * `InterpretedFunction.run` under TRITON_INTERPRET=1, where `JITFunction.run` is not on the path.
Every wrapped attribute is saved and chained; `uninstall()` restores it, and the autotuners' own configs.
A recommendation that fails to compile (OutOfResources, ptxas errors) or whose kernel source hash changed
falls back to the author's config, logged once. Kernels match entries by module (a kernel of the script run
as `__main__` by its file's path), qualname (`outer.<locals>.k` as `outer.k`) and the source hash that
`kernlint recommend` computes. After the first launch of a kernel the lookup is two dict accesses on `id(fn)`.
This package imports neither libcst nor the analysis, and Triton only inside `install()`.
"""
from __future__ import annotations

import logging
import os

from kernlint.hardware.specs import UnknownTarget
from kernlint.core.config_store import StoreError, read_store
from kernlint.shim import runtime
from kernlint.shim.identity import kernel_source
from kernlint.shim.runtime import LAUNCH_OPTIONS, Shim
from kernlint.shim.target import ENV_TARGET, detect_target, env_target

ENV_VAR = "KERNLINT_CONFIGS"
ENV_MODE = "KERNLINT_SHIM_MODE"
_fn_source = kernel_source    # the name scripts and the Helion applier used before the split


def _inert(path: str, event: str, kernel: str, detail: str) -> Shim:
    """A Shim that wraps nothing; its `log` holds the one error line (also logged)."""
    shim = Shim([], "replace", None, path)
    shim._note(event, kernel, detail, logging.ERROR)
    return shim


def install(path: str, mode: str = "replace", target: str | None = None) -> Shim:
    """Install the store at `path`. A corrupt or foreign store, or an unknown $KERNLINT_TARGET, is logged
    (naming the file or variable and the problem) and nothing is changed: the kernels run with their own
    configs. `target` ("h100", "sm_90", ...; default $KERNLINT_TARGET, else the current GPU) chooses the
    entries; an unknown `target` argument raises UnknownTarget."""
    if runtime._active:
        runtime._active[0].uninstall()
    if target is None:
        try:
            target = env_target()
        except UnknownTarget as exc:   # a launch script's typo must not stop the user's program
            return _inert(path, "settings-error", ENV_TARGET, f"{exc}; {path} not applied, kernels keep "
                          "their own configs")
    try:
        entries = read_store(path)
    except StoreError as exc:
        # As documented, nothing is changed: no Triton attribute is wrapped (before, an empty shim was
        # installed anyway). The returned Shim is inert; its `log` holds the one error line.
        return _inert(path, "store-error", os.path.basename(path), f"{exc}; kernels keep their own configs")
    # Helion entries are applied by kernlint.shim.helion, never to a Triton launch
    entries = [e for e in entries if e.config.get("frontend") != "helion"]
    return Shim(entries, mode, target, path).install()


def install_from_env(mode: str | None = None) -> Shim | None:
    """Install from $KERNLINT_CONFIGS (and $KERNLINT_SHIM_MODE, $KERNLINT_TARGET); None when unset."""
    path = os.environ.get(ENV_VAR)
    if not path:
        return None
    mode = (mode or os.environ.get(ENV_MODE) or "replace").strip().lower()
    if mode not in ("replace", "seed"):
        # a launch script's typo must not stop the user's program: nothing is installed, and it says why
        return _inert(path, "settings-error", ENV_MODE, f"{mode!r} is not 'replace' or 'seed'; {path} not "
                      "applied, kernels keep their own configs")
    return install(path, mode)


def uninstall() -> None:
    if runtime._active:
        runtime._active[0].uninstall()


__all__ = [
    "ENV_MODE",
    "ENV_TARGET",
    "ENV_VAR",
    "LAUNCH_OPTIONS",
    "Shim",
    "detect_target",
    "install",
    "install_from_env",
    "uninstall",
]
