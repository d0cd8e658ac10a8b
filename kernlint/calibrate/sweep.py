"""`kernlint calibrate --sweep`: the grid of configs added around the author's, and what it must leave alone.

The grid varies the block sizes (constexprs that shape a tile) by powers of two, num_warps and num_stages.
A value the sweep invents has to compile, or the table fills with failed rows that say nothing about the
estimate: a review found softmax's host-computed BLOCK_SIZE (no value anywhere) turned into eight extra
"no value" rows, and a `tl.arange(0, ROW // 3)` tile with ROW=192 into fifteen CompilationErrors. So:

* a sweep needs a base config in which every constexpr has a value; without one it adds nothing;
* a block size is varied only when its base value is a power of two and it was not fixed with --arg;
* a value is kept only while every tile shape it feeds stays a positive power of two and the kernel's
  `tl.static_assert`s and the launch's `assert`s still hold (checks the base itself fails are not trusted).

What was held or left out is said in one line (`Sweep.note`), so a short sweep is never a silent one.
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kernlint.analysis.configs import ConfigPoint
from kernlint.ir.nodes import KernelIR, OpKind
from kernlint.ir.symbolic import Expr, Unknown, as_int

SWEEP_WARPS = (2, 4, 8)
SWEEP_STAGES = (2, 3, 4)

# A check on one swept config (constexprs + num_warps/num_stages): why it cannot compile, or None.
Reject = Callable[[Mapping[str, Any]], "str | None"]


@dataclass
class Sweep:
    configs: list[dict[str, Any]] = field(default_factory=list)
    held: dict[str, str] = field(default_factory=dict)      # block constexpr → why it keeps the base value
    # (constexpr, why) → the values left out; grouped so the note stays one line
    dropped: dict[tuple[str, str], list[int]] = field(default_factory=dict)
    combos_dropped: tuple[int, str] | None = None           # combinations of kept values that fail together
    nothing: str | None = None                              # why the sweep added no config at all

    def note(self) -> str | None:
        """One line for the output: what the sweep did not vary and why (None when it varied everything)."""
        if self.nothing:
            return f"--sweep added no configs: {self.nothing}"
        parts = [f"held {n} ({why})" for n, why in self.held.items()]
        parts += [f"left out {n}={', '.join(map(str, vs))} ({why})" for (n, why), vs in self.dropped.items()]
        if self.combos_dropped:
            parts.append(f"left out {self.combos_dropped[0]} combinations ({self.combos_dropped[1]})")
        return ("--sweep " + "; ".join(parts)) if parts else None


def _is_pow2(v: int) -> bool:
    return v > 0 and v & (v - 1) == 0


def sweep_configs(jit_constexprs: tuple[str, ...], block_names: set[str], base: ConfigPoint, has_loop: bool,
                  cap: int = 48, reject: Reject | None = None,
                  held: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """The configs of `grid` (kept for callers that only want the list)."""
    return grid(jit_constexprs, block_names, base, has_loop, cap, reject, held).configs


def grid(jit_constexprs: tuple[str, ...], block_names: set[str], base: ConfigPoint, has_loop: bool,
         cap: int = 48, reject: Reject | None = None, held: Mapping[str, str] | None = None) -> Sweep:
    """Powers of two around the base config's block sizes × num_warps {2,4,8} × num_stages {2,3,4} (stages
    only when the kernel has a loop to pipeline), nearest to the base first, at most ``cap``. ``held``: block
    constexprs to keep at the base value, with the reason; ``reject`` drops values that cannot compile."""
    out = Sweep()
    base_cfg: dict[str, Any] = {**base.constexprs, "num_warps": base.num_warps, "num_stages": base.num_stages}
    blocks: list[str] = []
    for n in jit_constexprs:
        v = base.constexprs.get(n)
        if n not in block_names or not isinstance(v, int) or isinstance(v, bool) or v <= 0:
            continue   # not a tile size (GROUP_M, CAUSAL, a dtype): always the author's value, as before
        if held and n in held:
            out.held[n] = held[n]
        elif not _is_pow2(v):   # `ROW // 3` with ROW=192: its powers-of-two neighbours are not tiles
            out.held[n] = f"{v} is not a power of two"
        else:
            blocks.append(n)
    reach = 2 if len(blocks) <= 1 else 1          # ×/÷4 for one block size, ×/÷2 when there are several
    axes: list[list[tuple[str, int]]] = []
    for n in list(blocks):
        v = base.constexprs[n]
        values: list[int] = []
        reasons: list[tuple[str, int]] = []
        for s in range(-reach, reach + 1):
            w = v << s if s >= 0 else max(1, v >> -s)
            why = reject({**base_cfg, n: w}) if reject and w != v else None
            if why:
                reasons.append((why, w))
            elif w not in values:
                values.append(w)
        if values == [v] and reasons:   # no other value compiles: say it is held, not which values failed
            out.held[n] = reasons[0][0]
            blocks.remove(n)
            continue
        for why, w in reasons:
            out.dropped.setdefault((n, why), []).append(w)
        axes.append([(n, w) for w in values])
    axes.append([("num_warps", w) for w in SWEEP_WARPS])
    axes.append([("num_stages", s) for s in (SWEEP_STAGES if has_loop else (base.num_stages,))])

    def distance(cfg: dict[str, int]) -> float:
        d = sum(abs(math.log2(cfg[n] / base.constexprs[n])) for n in blocks)
        return d + abs(math.log2(cfg["num_warps"] / base.num_warps)) + abs(cfg["num_stages"] - base.num_stages)

    fixed = {k: v for k, v in base.constexprs.items() if k not in blocks}
    combos = sorted(dict.fromkeys(tuple(sorted(g)) for g in itertools.product(*axes)),
                    key=lambda t: (distance(dict(t)), t))
    kept: list[dict[str, Any]] = []
    n_bad, first_bad = 0, ""
    for t in combos:
        if len(kept) >= cap:   # the cap cut the rest anyway: they are not "left out" by a check
            break
        cfg = {**fixed, **dict(t)}
        why = reject(cfg) if reject else None   # values that pass alone can fail together (BLOCK_M * BLOCK_N)
        if why:
            n_bad, first_bad = n_bad + 1, first_bad or why
        else:
            kept.append(cfg)
    out.configs = kept
    if n_bad:
        out.combos_dropped = (n_bad, first_bad)
    return out


def tile_check(ir: KernelIR, base_env: Mapping[str, Any]) -> Reject:
    """Every tile dimension that is a power of two under the base config must stay one (Triton refuses
    `tl.arange(0, 21)`). Dimensions kernlint cannot evaluate, or that are not powers of two at the base
    (kernlint's shape model may disagree with Triton there), are not used: they would reject good configs."""
    dims: dict[Expr, None] = {}
    for op, _ in ir.walk():
        for v in op.all_results():
            for d in v.shape:
                if isinstance(d, Expr) and d.free_symbols():
                    at_base = as_int(d.evaluate(base_env))
                    if at_base is not None and _is_pow2(at_base):
                        dims[d] = None

    def reject(cfg: Mapping[str, Any]) -> str | None:
        for d in dims:
            value = d.evaluate(cfg)
            if isinstance(value, Unknown):
                continue
            iv = as_int(value)
            if iv is None or not _is_pow2(iv):
                return f"tile {d} would be {value}, not a power of two"
        return None
    return reject


def assert_check(path: str, kernel_name: str, base_env: Mapping[str, Any]) -> Reject | None:
    """The kernel's `tl.static_assert`s and its launch's `assert`s (as `recommend` evaluates them); None when
    the base config already fails one, i.e. kernlint misreads it and it would reject every config."""
    from kernlint.frontend.host_facts import check_asserts, read_kernel_source

    src = read_kernel_source(path, kernel_name)
    if not (src.static_asserts or src.launch_asserts) or check_asserts(src, base_env) is not None:
        return None
    return lambda cfg: check_asserts(src, cfg)


def _uncompilable(p: ConfigPoint, names: Sequence[str]) -> list[str]:
    """The constexprs Triton would get no usable value for in ``p`` (the rows prepare marks 'not compiled')."""
    return [n for n in names if n not in p.constexprs
            or not isinstance(p.constexprs[n], (int, float, bool, str, type(None)))]


def plan(ir: KernelIR, constexpr_names: tuple[str, ...], points: list[ConfigPoint], given: Mapping[str, Any],
         path: str, kernel_name: str, cap: int) -> Sweep:
    """The sweep for one kernel: its base is the author's config (the middle autotune one), among those in
    which every constexpr has a value; ``given``: constexprs fixed with --arg (held, never varied)."""
    from kernlint.analysis.estimate import shape_symbols

    complete = [p for p in points if not _uncompilable(p, constexpr_names)]
    if not complete:
        missing = list(dict.fromkeys(n for p in points for n in _uncompilable(p, constexpr_names)))
        # every swept config would need a value nobody gives: say so once instead of one failed row each
        return Sweep(nothing=f"no config gives {', '.join(missing)} a value "
                             f"(use --config {missing[0]}=... or --arg {missing[0]}=...)")
    base = complete[len(complete) // 2] if complete[0].origin == "autotune" else complete[0]
    has_loop = any(op.kind == OpKind.FOR for op, _ in ir.walk())
    base_env = {**base.constexprs, "num_warps": base.num_warps, "num_stages": base.num_stages}
    checks = [c for c in (tile_check(ir, base_env), assert_check(path, kernel_name, base_env)) if c is not None]

    def reject(cfg: Mapping[str, Any]) -> str | None:
        return next((why for why in (c(cfg) for c in checks) if why), None)

    held = {n: "fixed with --arg" for n in given}
    return grid(constexpr_names, set(shape_symbols(ir)), base, has_loop, cap, reject, held)
