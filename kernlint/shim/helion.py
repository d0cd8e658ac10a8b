"""Apply a stored `helion.Config` to a live Helion kernel (imports helion lazily), in the program that runs
it: the Helion half of the shim. Entries match a kernel by module, qualname and source hash like Triton ones
(kernlint.shim.runtime); `kernlint recommend` writes them (kernlint.recommend.helion_apply).

    from kernlint.shim.helion import apply
    apply(helion_matmul, "kernlint.lock.json", target="h100")
"""
from __future__ import annotations

import logging
from typing import Any

from kernlint.core.config_store import qualname_key

log = logging.getLogger("kernlint.shim.helion")


def _matches(e: Any, fn: Any) -> str | None:
    """'ok', 'stale' or None (not this kernel): module/qualname like the Triton shim, then the source hash."""
    from kernlint.core.config_store import same_module, source_hash, split_id
    from kernlint.shim.identity import kernel_source, module_ids, qualname_of
    emod, qual, digest = split_id(e.kernel)
    if qualname_key(qual) != qualname_of(fn) or not any(same_module(emod, m) for m in module_ids(fn)):
        return None
    return "ok" if digest == source_hash(kernel_source(fn)) else "stale"


def find_entry(kernel: Any, entries: list[Any], target: str | None, bucket: str | None = None) -> Any:
    """The entry of `kernel` for `target` and `bucket`, else its "*" entry, else None (the author's config
    stays); an entry that keeps the author's config is None too. No target, no entry: with None it used to
    take whichever GPU's entry sorted first."""
    if target is None:
        return None
    fn = getattr(kernel, "fn", kernel)
    mine = []
    for e in entries:
        if e.config.get("frontend") != "helion" or e.target != target:
            continue
        m = _matches(e, fn)
        if m == "stale":
            log.warning("kernlint: %s: source changed since the recommendation; keeping the author's config",
                        getattr(fn, "__qualname__", fn))
            return None
        if m == "ok":
            mine.append(e)
    if not mine:
        return None
    hit = next((e for e in mine if e.bucket == bucket), None) if bucket is not None else None
    if hit is None:
        # never another shape's bucket: one applied to every shape silently was the alphabetically first
        hit = next((e for e in mine if e.bucket == "*"), None)
    return hit if hit is not None and hit.keep is None else None


def bucket_of(entries: list[Any], sizes: dict[str, Any]) -> str | None:
    """The bucket label of `entries` that `sizes` (a call's extents, by the names the store uses) fall in,
    rounded up to a power of two as `recommend` stores them; None when no entry's names are all known."""
    def pow2(v: Any) -> Any:
        return 1 << max(0, v - 1).bit_length() if isinstance(v, int) and not isinstance(v, bool) and v > 0 else v

    for e in entries:
        if e.bucket == "*":
            continue
        names = sorted(kv.split("=", 1)[0] for kv in e.bucket.split(","))
        if all(n in sizes for n in names):
            return ",".join(f"{n}={pow2(sizes[n])}" for n in names)
    return None


def apply(kernel: Any, store_path: str, target: str | None = None, mode: str = "replace",
          args: tuple[Any, ...] | None = None, bucket: str | None = None,
          sizes: dict[str, Any] | None = None) -> Any:
    """Apply the store's recommendation to a `helion.Kernel` without editing it; returns the helion.Config
    applied, or None (no entry for this kernel/target, or a stale one: the author's configs stay).

    target: kernlint target key or alias ("h100", "sm_90"); default KERNLINT_TARGET or the current GPU
    (kernlint.shim.target). With none of them (no GPU, a GPU that is not a kernlint target) nothing is
    applied, and that is logged: as in the Triton shim, another GPU's entry is never used.
    mode: "replace" (the only config: Helion skips autotuning) or "seed" (first, before the author's configs).
    args: pin for this binding only (`kernel.bind(args).set_config(cfg)`), leaving kernel.configs alone.
    bucket / sizes: the store bucket to apply ("m=4096,n=4096"), or the call's sizes by the `--shape` names
    ({"m": 4000, "n": 4096}) to find it; without either only a "*" entry applies (never another shape's)."""
    import helion

    from kernlint.hardware.specs import resolve_target
    from kernlint.core.config_store import read_store
    from kernlint.shim.target import describe_target
    if mode not in ("replace", "seed"):
        raise ValueError(f"mode must be 'replace' or 'seed', not {mode!r}")
    why = "given to apply()"
    if target is not None:
        target = resolve_target(target).key   # an unknown target is the caller's error: UnknownTarget
    else:
        target, why = describe_target()
    if target is None:
        log.warning("kernlint: %s: no target known (%s); %s not applied, the author's configs stay",
                    getattr(getattr(kernel, "fn", kernel), "__qualname__", kernel), why, store_path)
        return None
    entries = read_store(store_path)
    if bucket is None and sizes:
        bucket = bucket_of([e for e in entries if e.target == target], sizes)
    e = find_entry(kernel, entries, target, bucket)
    if e is None:
        return None
    cfg = helion.Config(**{k: v for k, v in (e.config.get("kwargs") or {}).items()},
                        num_warps=e.config.get("num_warps", 4), num_stages=e.config.get("num_stages", 1))
    if args is not None:
        kernel.bind(tuple(args)).set_config(cfg)
        return cfg
    if mode == "replace":
        kernel.configs[:] = [cfg]
    else:
        kernel.configs[:] = [cfg, *[c for c in kernel.configs if dict(c) != dict(cfg)]]
    kernel.reset()
    return cfg
