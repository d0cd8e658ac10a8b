"""Helion recommendations, second half: the config store entries, applying a stored `helion.Config` to a
live Helion kernel (imports helion lazily), and the unsafe codemod that pins a config in the decorator."""
from __future__ import annotations

import logging
from typing import Any

from kernlint.recommend.helion import (
    HelionTarget, config_text, load_kernel, recommend,
)
from kernlint.config_store import qualname_key

log = logging.getLogger("kernlint.recommend.helion")


# ------------------------------------------------------------------------------------------------ store
def kernel_id_for(target: HelionTarget) -> str:
    from kernlint.config_store import kernel_id
    return kernel_id(target.kernel.module, target.kernel.qualname, target.source)


def entry(target: HelionTarget, rec: Any, bucket_label: str | None = None) -> Any:
    """The top candidate as a store Entry (same schema as Triton entries; `kwargs` holds the Helion fields)."""
    from kernlint.recommend.cli import _entry
    from kernlint.recommend.core import bucket_label as label
    if not rec.ranked:
        raise ValueError(f"no recommendation for {rec.kernel}: {rec.reason}")
    e = _entry(kernel_id_for(target), rec.target, bucket_label or label(rec.bucket), rec.ranked[0])
    e.config["frontend"] = "helion"
    e.rationale = f"{config_text(rec.ranked[0])}: {e.rationale}"
    return e


def write_entries(path: str, entries: list[Any], merge: bool = True) -> None:
    """Write entries to the store at `path`, keeping other kernels' entries when the file exists."""
    import os

    from kernlint import __version__
    from kernlint.config_store import read_store, write_store
    old = read_store(path) if merge and os.path.exists(path) else []
    keys = {(e.kernel, e.target, e.bucket) for e in entries}
    write_store(path, [e for e in old if (e.kernel, e.target, e.bucket) not in keys] + list(entries),
                f"kernlint {__version__}")


def cli_entries(ka: Any, path: str, spec: Any, shapes: list[dict[str, Any]], top_k: int, out: Any,
                arg_types: dict[str, str] | None = None) -> list[Any]:
    """`kernlint recommend` for one Helion kernel (KernelAnalysis `ka`) and target: print, return store entries.
    Without --shape the extents are DEFAULT_SHAPE (bucket "*"); `arg_types` are `--arg`'s (they were ignored:
    every Helion kernel was modelled as fp16)."""
    from kernlint.recommend.core import bucket_label
    t = load_kernel(path, ka.jit.qualname, arg_types)
    entries = []
    for b in shapes or [{}]:
        label = bucket_label(b) if b else "*"
        rec = recommend(t, spec, b, top_k=top_k)
        if not rec.ranked:
            out.write(f"  {label}: no recommendation: {rec.reason}\n")
            continue
        out.write(f"  {label}: searched {rec.searched} helion.Configs ({sum(rec.rejected.values())} infeasible)\n")
        for i, c in enumerate(rec.ranked[:top_k], 1):
            out.write(f"    {i}. {config_text(c)}\n       {c.score.rationale()}\n")
            if c.stages_note():
                out.write(f"       {c.stages_note()}\n")
        if rec.author:
            out.write(f"    author: {config_text(rec.author)}  ({rec.author.score.rationale()})\n")
        if rec.kept_author:   # the incumbent stays: an entry that applies nothing
            from kernlint.recommend.cli import _keep
            out.write(f"    kept the author's config: {rec.kept_author}\n")
            e = _keep(kernel_id_for(t), rec.target, label, rec, rec.kept_author)
            e.config = {"kwargs": {k: v for k, v in rec.author.constexprs.items()}, "num_warps": rec.author.num_warps,
                        "num_stages": rec.author.num_stages, "frontend": "helion"} if rec.author else \
                {"frontend": "helion"}
            entries.append(e)
            continue
        entries.append(entry(t, rec, label))
    return entries


# ------------------------------------------------------------------------------------------------ apply
def _matches(e: Any, fn: Any) -> str | None:
    """'ok', 'stale' or None (not this kernel): module/qualname like the Triton shim, then the source hash."""
    from kernlint.config_store import same_module, source_hash, split_id
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
    from kernlint.config_store import read_store
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


# ------------------------------------------------------------------------------------------------ codemod
def fix_source(text: str, qualname: str, config: str) -> str:
    """Unsafe fix: pin `config=<config>` in the `@helion.kernel(...)` decorator of `qualname` (a `configs=`
    list or an existing `config=` is replaced; other keywords stay). Returns the new module text; the kernel
    id's source hash changes with it, so store entries for this kernel become stale (as they should)."""
    import libcst as cst

    new_arg = cst.Arg(keyword=cst.Name("config"), value=cst.parse_expression(config),
                      equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                            whitespace_after=cst.SimpleWhitespace("")))
    done: list[bool] = []

    class _Fix(cst.CSTTransformer):
        def __init__(self) -> None:
            self.scope: list[str] = []

        def visit_ClassDef(self, node: cst.ClassDef) -> None:
            self.scope.append(node.name.value)

        def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
            self.scope.pop()
            return updated

        def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
            self.scope.append(node.name.value)

        def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
            name = ".".join(self.scope)
            self.scope.pop()
            if name != qualname:
                return updated
            decs = list(updated.decorators)
            for i, d in enumerate(decs):
                expr = d.decorator
                func = expr.func if isinstance(expr, cst.Call) else expr
                code = cst.Module([]).code_for_node(func)
                if not (code.endswith("kernel") or code.split(".")[-1] in ("kernel",)):
                    continue
                args = [a for a in (expr.args if isinstance(expr, cst.Call) else ())
                        if not (a.keyword and a.keyword.value in ("config", "configs"))]
                if args:
                    args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
                decs[i] = d.with_changes(decorator=cst.Call(func=func, args=[*args, new_arg]))
                done.append(True)
                break
            return updated.with_changes(decorators=decs)

    out = cst.parse_module(text).visit(_Fix())
    if not done:
        raise LookupError(f"no @helion.kernel decorator on {qualname!r}")
    return out.code
