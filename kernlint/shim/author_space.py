"""Is a store entry still inside the author's autotune configs, as they are at run time?

`kernlint recommend` keeps a recommendation inside the author's space (recommend.core.outside_author_space:
every block size one the author's configs use, and every `a >= b` / `a == b` relation all of them satisfy,
such as causal attention's BLOCK_N >= BLOCK_M), or marks it `"space": {"in_author_space": false}` after
checking it. The kernel hash (store.def_text) covers the decorators, but not a config list defined elsewhere
(`@triton.autotune(configs=MATMUL_CONFIGS)`): an author who drops the configs that compute wrong results
there leaves the entry "fresh". The shim sees the list the autotuner really holds, so it checks the entry
against that before putting the recommendation in it.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def _ints(configs: Sequence[Mapping[str, Any]], name: str) -> list[int] | None:
    values = [c.get(name) for c in configs]
    if any(not isinstance(v, int) or isinstance(v, bool) for v in values):
        return None
    return values  # type: ignore[return-value]


def outside_authors(rec: Mapping[str, Any], author: Sequence[Any]) -> str | None:
    """Why the recommended constexprs `rec` are outside the author's `triton.Config`s (None: inside, or the
    author gave no configs to compare with). Only constexprs every author config sets are compared."""
    kwargs = [dict(getattr(c, "kwargs", None) or {}) for c in author]
    if not kwargs:
        return None
    shared = [n for n in rec if all(n in k for k in kwargs)]
    for name in shared:
        allowed = {k[name] for k in kwargs}
        if rec[name] not in allowed:
            try:
                ordered = sorted(allowed)
            except TypeError:               # mixed types (an int and a string): any stable order
                ordered = sorted(allowed, key=str)
            values = "/".join(map(str, ordered))
            return f"{name}={rec[name]} is not among the autotuner's values ({values})"
    for a in shared:
        for b in shared:
            xs, ys = _ints(kwargs, a), _ints(kwargs, b)
            va, vb = rec[a], rec[b]
            if a == b or xs is None or ys is None or not isinstance(va, int) or not isinstance(vb, int):
                continue
            if all(x == y for x, y in zip(xs, ys)) and va != vb:
                return f"every autotuner config has {a} == {b}, the entry {a}={va}, {b}={vb}"
            if all(x >= y for x, y in zip(xs, ys)) and va < vb:
                return f"every autotuner config has {a} >= {b}, the entry {a}={va}, {b}={vb}"
    return None
