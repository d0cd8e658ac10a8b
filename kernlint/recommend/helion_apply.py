"""Helion recommendations, second half: the config store entries and the unsafe codemod that pins a config in
the decorator. Applying a stored `helion.Config` to a live kernel is the shim's (kernlint.shim.helion)."""
from __future__ import annotations

from typing import Any

from kernlint.recommend.helion import (
    HelionTarget, config_text, load_kernel, recommend,
)


# ------------------------------------------------------------------------------------------------ store
def kernel_id_for(target: HelionTarget) -> str:
    from kernlint.core.config_store import kernel_id
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
    from kernlint.core.config_store import read_store, write_store
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
            note = f"{rec.author_note}; " if rec.author_note else ""
            out.write(f"    author: {config_text(rec.author)}  ({note}{rec.author.score.rationale()})\n")
        elif rec.author_note:
            out.write(f"    author: not known ({rec.author_note})\n")
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
