from __future__ import annotations

import ast
import json
import os
from collections.abc import Iterator

from kernlint.core.diagnostic import Confidence, Diagnostic, Severity
from kernlint.core.module_names import module_name_for
from kernlint.core.config_store import (
    Entry, StoreError, def_text, qualname_key, read_store, same_module, source_hash, split_id,
)
from kernlint.pipeline.rule import Case, FileContext, Rule

_cache: dict[str, tuple[tuple[int, int], list[Entry] | StoreError]] = {}


def _entries(path: str) -> list[Entry] | StoreError | None:
    """The store's entries (re-read when its mtime or size changes); None when there is no store."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    stamp = (st.st_mtime_ns, st.st_size)
    hit = _cache.get(path)
    if hit is None or hit[0] != stamp:
        try:
            got: list[Entry] | StoreError = read_store(path)
        except StoreError as exc:
            got = exc
        hit = _cache[path] = (stamp, got)
    return hit[1]


def def_sources(text: str) -> dict[str, tuple[int, str]]:
    """qualname → (line of the `def`, its source), sliced exactly as `kernlint recommend` and the shim slice it
    (`store.def_text`: the decorators and the def, dedented) so all three compute the same kernel hash. A
    kernel defined inside a function is `outer.kern`, as recommend names it (Python's `outer.<locals>.kern`)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return {}
    lines = text.splitlines()
    out: dict[str, tuple[int, str]] = {}

    def walk(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = prefix + node.name
                out.setdefault(name, (node.lineno, def_text(lines, node)))
                walk(node.body, name + ".")
            elif isinstance(node, ast.ClassDef):
                walk(node.body, prefix + node.name + ".")

    walk(tree.body, "")
    return out


_KERNEL = '''import triton{marker1}
import triton.language as tl


@triton.jit
def scale_rows(x_ptr, y_ptr, n_cols, stride, BLOCK: tl.constexpr):{marker2}
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0)
    tl.store(y_ptr + row * stride + cols, x * 2, mask=mask)
'''
_VALID_SRC = _KERNEL.format(marker1="", marker2="")
_INVALID_SRC = _KERNEL.format(marker1="  # expect: KL406", marker2="  # expect: KL406")


def _store(*kernels: str) -> str:
    entries = [{"kernel": k, "target": t, "bucket": "*", "estimate": {}, "rationale": "example",
                "config": {"kwargs": {"BLOCK": 1024}, "num_warps": 4, "num_stages": 1}}
               for k in kernels for t in ("h100", "h200")]
    return json.dumps({"schema": "kernlint.lock/1", "generator": "example", "entries": entries}, indent=2)


_FRESH = f"case:scale_rows@{source_hash(def_sources(_VALID_SRC)['scale_rows'][1])}"


class StaleConfigStoreEntry(Rule):
    """The config store has entries for a kernel whose source changed, or that no longer exists.

    ## What it does
    Reads the config store (`config-store` in `[tool.kernlint]`, default `kernlint.lock.json` next to
    the pyproject.toml that configures the file, else in the working directory) and compares each entry's
    kernel id (module + qualname + hash of the kernel's decorators and body, as `kernlint recommend` wrote
    it) with the kernels of the linted file. An entry whose hash no longer matches is reported on the kernel's `def` line; an entry
    for a kernel that the module no longer defines is reported on line 1 of the module. One finding per
    kernel, naming the targets its entries cover; entries of a same-named file elsewhere (`a/ops.py`,
    `b/ops.py`) are told apart by their hash. A store that cannot be read is reported on line 1 of each
    file with kernels. Entries whose module file is gone (renamed or deleted) match no linted file and
    are not reported: re-run `kernlint recommend -o` after moving kernels.

    ## Why is this bad?
    The runtime shim (`kernlint.shim`) refuses entries whose source hash changed and runs the author's
    config instead, so the recommendation silently stops applying. The recommendation was also computed
    for the old code: a changed kernel may need different block sizes or fewer stages, and an edited
    `@triton.autotune` list may have dropped the block sizes the recommendation uses.

    ## Hardware
    None: the store is keyed per target; this is about the source.

    ## Recommended fix
    Re-run `kernlint recommend PATH --target ... -o kernlint.lock.json` and review the diff of the store.

    ## Confidence
    Exact: the same hash `kernlint recommend` and the shim compute (whitespace at line ends and
    line-ending style do not count as changes).
    """

    CODE = "KL406"
    SEVERITY = Severity.WARNING
    CONFIDENCE = Confidence.EXACT
    VALID = [Case(_VALID_SRC, files=(("kernlint.lock.json", _store(_FRESH)),)), Case(_VALID_SRC)]
    INVALID = [Case(_INVALID_SRC, files=(("kernlint.lock.json", _store(
        "case:scale_rows@sha256:0123456789abcdef", "case:old_kernel@sha256:0123456789abcdef", _FRESH)),))]

    def check(self, ctx: FileContext) -> Iterator[Diagnostic]:
        if ctx.settings is None or ctx.parse_failure is not None:
            return
        store = ctx.settings.store_path()
        entries = _entries(str(store))
        if entries is None:
            return
        if isinstance(entries, StoreError):
            if ctx.kernels:
                yield self.diagnostic(ctx, 1, f"cannot check the config store for stale entries: {entries}",
                                      severity=Severity.WARNING)
            return
        module = module_name_for(ctx.path)
        defs = def_sources("\n".join(ctx.lines))
        # entries per kernel name (`outer.<locals>.kern` as `outer.kern`), each with its store module and hash
        by_name: dict[str, list[tuple[str, str, Entry]]] = {}
        for e in entries:
            emod, qualname, digest = split_id(e.kernel)
            if same_module(emod, module):   # the shim matches modules the same way
                by_name.setdefault(qualname_key(qualname), []).append((emod, digest, e))
        # Module ids are matched by suffix, so `ops` (linted from inside a/) also matches b/ops.py's `b.ops`
        # entries: a kernel is fresh when any entry for its name has its hash (the shim applies that one), and a
        # kernel missing here is only reported when one store module alone names this file.
        modules = {emod for group in by_name.values() for emod, _, _ in group}
        for qualname, group in by_name.items():
            targets = ", ".join(sorted({e.target for _, _, e in group}))
            n = f"{len(group)} entr{'y' if len(group) == 1 else 'ies'}"
            found = defs.get(qualname)
            if found is None:
                if len(modules) == 1:
                    yield self.diagnostic(
                        ctx, 1, f"{store.name} has {n} ({targets}) for `{qualname}`, which this module no longer "
                        "defines; re-run `kernlint recommend -o` to drop them", kernel=qualname)
                continue
            line, src = found
            now = source_hash(src)
            digests = sorted({digest for _, digest, _ in group})
            if now not in digests:
                yield self.diagnostic(
                    ctx, line, f"{store.name} has {n} ({targets}) for `{qualname}` recorded for source "
                    f"{', '.join(digests)}, but the kernel now hashes {now}: the shim ignores them and runs the "
                    "author's config; re-run `kernlint recommend -o`", kernel=qualname)
