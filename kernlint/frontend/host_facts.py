"""Host-side facts the estimate model does not carry, read from the kernel's file with `ast` (never executed).

`kernlint recommend` (and calibrate's sweep, for the asserts) needs three things the IR leaves symbolic: the
launch grid (to count waves over the SMs), loop trip counts (to turn per-iteration work into per-CTA work) and
`tl.static_assert` conditions (to stay inside the block sizes the kernel accepts). All three are plain Python expressions over kernel parameters,
constexprs and host variables; `SafeEval` evaluates the small subset they use (arithmetic, comparisons,
`cdiv`/`min`/`max`/`next_power_of_2`, `META["X"]`) and answers None for anything else.
"""
from __future__ import annotations

import ast
import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

_FUNCS = {
    "cdiv": lambda a, b: -(-a // b), "min": min, "max": max, "minimum": min, "maximum": max,
    "next_power_of_2": lambda a: 1 << max(0, int(a) - 1).bit_length(), "abs": abs,
}
_BIN = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
        ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b, ast.Div: lambda a, b: a / b,
        ast.Pow: lambda a, b: a ** b, ast.LShift: lambda a, b: a << b, ast.RShift: lambda a, b: a >> b,
        ast.BitAnd: lambda a, b: a & b, ast.BitOr: lambda a, b: a | b}
_CMP = {ast.Lt: lambda a, b: a < b, ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b,
        ast.GtE: lambda a, b: a >= b, ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b}


class _Unknown(Exception):
    pass


def callable_shadow(value: Any) -> bool:
    """Whether an environment value under a called name may be what is called (anything but a number)."""
    return value is not None and not isinstance(value, (int, float))


class SafeEval:
    """Evaluate an expression over `env`; names bound by `locals_` (name → expression) are followed once."""

    def __init__(self, env: Mapping[str, Any], locals_: Mapping[str, list[ast.expr]] | None = None,
                 funcs: Mapping[str, ast.FunctionDef] | None = None, calls: int = 0) -> None:
        self.env = env
        self.locals = locals_ or {}
        self.funcs = funcs or {}   # the project's own host helpers a launch reads (`calculate_settings(n)`)
        self.calls = calls         # helper calls already on the stack: bounded by MAX_HELPER_DEPTH
        self._depth = 0

    def __call__(self, node: ast.expr | None) -> Any:
        if node is None:
            return None
        try:
            return self._ev(node)
        except (_Unknown, ZeroDivisionError, TypeError, ValueError, OverflowError):
            return None

    def _ev(self, n: ast.AST) -> Any:
        if isinstance(n, ast.Constant) and isinstance(n.value, (int, float, bool)):
            return n.value
        if isinstance(n, ast.Name):
            if n.id in self.env:
                return self.env[n.id]
            if n.id in self.locals and self._depth < 4:
                # a local bound on several paths (causal `hi` vs `N_CTX`): the largest is the worst case
                self._depth += 1
                try:
                    vals = [v for v in (self(e) for e in self.locals[n.id]) if isinstance(v, (int, float))]
                finally:
                    self._depth -= 1
                if vals:
                    return max(vals)
            raise _Unknown(n.id)
        if isinstance(n, ast.BinOp) and type(n.op) in _BIN:
            return _BIN[type(n.op)](self._ev(n.left), self._ev(n.right))
        if isinstance(n, ast.UnaryOp):
            v = self._ev(n.operand)
            if isinstance(n.op, ast.USub):
                return -v
            if isinstance(n.op, ast.Not):
                return not v
            if isinstance(n.op, ast.UAdd):
                return v
        if isinstance(n, ast.BoolOp):
            vals = [self._ev(v) for v in n.values]
            return all(vals) if isinstance(n.op, ast.And) else any(vals)
        if isinstance(n, ast.Compare):
            left = self._ev(n.left)
            for op, comp in zip(n.ops, n.comparators):
                right = self._ev(comp)
                if type(op) not in _CMP or not _CMP[type(op)](left, right):
                    return False
                left = right
            return True
        if isinstance(n, ast.IfExp):   # `0 if n <= LIMIT else 1`: only the branch the known test picks
            return self._ev(n.body) if self._ev(n.test) else self._ev(n.orelse)
        if isinstance(n, ast.Tuple):
            return tuple(self._ev(e) for e in n.elts)
        if isinstance(n, ast.Subscript) and isinstance(n.slice, ast.Constant) and isinstance(n.value, ast.Name):
            key = n.slice.value  # META["BLOCK_M"]
            if isinstance(key, str) and key in self.env:
                return self.env[key]
        # a called name is a function: a number the environment holds under it (a size filled in for every
        # name a loop bound reads, `prev_multiple_of` included) does not hide the helper
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in self.funcs \
                and not callable_shadow(self.env.get(n.func.id)) and self.calls < MAX_HELPER_DEPTH:
            args = [self._ev(a) for a in n.args if not isinstance(a, ast.Starred)]
            if len(args) != len(n.args):
                raise _Unknown("*args")
            kwargs = {kw.arg: self._ev(kw.value) for kw in n.keywords if kw.arg}
            if len(kwargs) != len(n.keywords):
                raise _Unknown("**kwargs")
            val = call_helper(self.funcs[n.func.id], args, kwargs, self.funcs, self.calls + 1)
            if val is None:
                raise _Unknown(n.func.id)
            return val
        if isinstance(n, ast.Call) and not n.keywords:
            name = n.func.attr if isinstance(n.func, ast.Attribute) else getattr(n.func, "id", None)
            if name in _FUNCS:
                return _FUNCS[name](*(self._ev(a) for a in n.args))
            if name in ("multiple_of", "max_contiguous", "int", "to") and n.args:
                return self._ev(n.args[0])
        raise _Unknown(ast.dump(n)[:40])


@dataclass
class LoopFacts:
    start: ast.expr | None
    stop: ast.expr | None
    step: ast.expr | None
    locals: dict[str, list[ast.expr]]


@dataclass
class KernelSource:
    """What the recommender reads from the file around one kernel."""

    static_asserts: list[str] = field(default_factory=list)       # source text of each condition
    assert_nodes: list[ast.expr] = field(default_factory=list)
    loops: dict[int, LoopFacts] = field(default_factory=dict)     # line of `for` → bounds (kernel and helpers)
    grids: list[tuple[ast.expr, dict[str, list[ast.expr]]]] = field(default_factory=list)
    # `@triton.jit(do_not_specialize=[...])` parameters: Triton gives them no divisibility-16 hint, so a
    # mask `cols < n` over one of them cannot be proven 16-aligned and its loads are not vectorised
    unspecialized: frozenset[str] = frozenset()
    params: list[str] = field(default_factory=list)                # the kernel's parameters, in order
    # each launch `kernel[grid](...)`: parameter → argument expression, the host function's locals, and
    # its parameters' defaults (`eps: float = 1e-6`), for the author's launch-site constexprs and `--verify`
    launches: list[tuple[dict[str, ast.expr], dict[str, list[ast.expr]], dict[str, ast.expr]]] = \
        field(default_factory=list)
    # `assert` statements of the host functions that launch the kernel, each with the host names that are
    # passed straight to a kernel parameter (`BLOCK_SIZE=block` → {"block": "BLOCK_SIZE"})
    launch_asserts: list[tuple[ast.expr, dict[str, str]]] = field(default_factory=list)
    # per launch: the launching function and the line of the launch, for `launch_value_in_order`
    launch_fns: list[tuple[ast.FunctionDef, int]] = field(default_factory=list)
    # host helpers the launching functions may call: the file's own top-level functions and the functions it
    # imports from the project's other modules (found as Python would, from the package structure)
    helpers: dict[str, ast.FunctionDef] = field(default_factory=dict)
    # the file's module-level names with a value SafeEval finds (`BLOCK_SIZE = 1024`, `LIMIT = 2**31 - 4 *
    # BLOCK_SIZE`), in order: a launch passes them (`BLOCK_SIZE=BLOCK_SIZE`) or tests them
    constants: dict[str, Any] = field(default_factory=dict)
    # the file's `@triton.jit` helpers (its own and those it imports from the project) that a loop bound calls
    # (`range(0, prev_multiple_of(N, TILE_N), TILE_N)`): their `return` expression is read like a host helper's
    device_helpers: dict[str, ast.FunctionDef] = field(default_factory=dict)

    def _host_scope(self, fn: ast.FunctionDef | None, env: Mapping[str, Any]) -> dict[str, Any]:
        """The module constants a launching function sees (not those its parameters shadow), under `env`."""
        shadowed = {a.arg for a in (fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs)} if fn else set()
        return {**{k: v for k, v in self.constants.items() if k not in shadowed}, **env}

    def launch_value_in_order(self, name: str, env: Mapping[str, Any]) -> Any:
        """Like `launch_value`, but the launching function's statements before the launch are evaluated in
        order, `if`s included: `num_warps = 4; if BLOCK >= 2048: num_warps = 8` is 8 at BLOCK 4096, where
        following every binding of a local gives the largest, 16. A value the bucket gives stays when the
        function computes it from something unknown (`n_rows, n_cols = x.shape`)."""
        for (args, _, _), (fn, line) in zip(self.launches, self.launch_fns):
            if name not in args:
                continue
            scope = self._host_scope(fn, env)
            _run_in_order(fn.body, scope, env, line, self.helpers)
            val = SafeEval(scope, funcs=self.helpers)(args[name])
            if val is not None:
                return val
        return None

    def launch_names(self, name: str) -> list[str]:
        """The host names the launch's expression for `name` reads, through the launching function's locals
        (`BLOCK = next_power_of_2(N)`, `N = x.shape[1]` → N), for a message asking for them."""
        out: list[str] = []
        for args, loc, _ in self.launches:
            todo, seen = [args[name]] if name in args else [], set()
            while todo:
                expr = todo.pop()
                # `x.shape[1]`, `triton.next_power_of_2`: a tensor or module, not a size to give
                owners = {id(a.value) for a in ast.walk(expr) if isinstance(a, ast.Attribute)}
                for n in ast.walk(expr):
                    if isinstance(n, ast.Name) and n.id not in seen and id(n) not in owners \
                            and n.id not in ("min", "max"):
                        seen.add(n.id)
                        if n.id != name:
                            out.append(n.id)
                        todo += loc.get(n.id, [])
        return list(dict.fromkeys(out))

    def launch_value(self, name: str, env: Mapping[str, Any]) -> Any:
        """The value the first launch that evaluates passes for `name` under `env` (None if none does): the
        launching function run in order first (it follows the project's own helpers, `calculate_settings(n)`),
        then every binding of each local."""
        val = self.launch_value_in_order(name, env)
        if val is not None:
            return val
        for (args, loc, _), (fn, _line) in zip(self.launches, self.launch_fns):
            if name in args:
                val = SafeEval(self._host_scope(fn, env), loc, self.helpers)(args[name])
                if val is not None:
                    return val
        return None


def _run_in_order(body: list[ast.stmt], scope: dict[str, Any], given: Mapping[str, Any], stop: int,
                  funcs: Mapping[str, ast.FunctionDef] | None = None, calls: int = 0) -> bool:
    """Evaluate simple assignments and `if`s of `body` into `scope` until the statement at line `stop`;
    False once it is reached. A name whose value does not evaluate is dropped (unless `given` has it).
    A `return` (in a helper run by `call_helper`) stores its value under RETURN and stops, as does a `raise`
    (under RETURN as None): the path ends there."""
    def ev(node: ast.expr) -> Any:
        return SafeEval(scope, funcs=funcs, calls=calls)(node)

    def bind(target: ast.expr, value: Any) -> None:
        if isinstance(target, ast.Name):
            if value is not None:
                scope[target.id] = value
            elif target.id in given:
                scope[target.id] = given[target.id]
            else:
                scope.pop(target.id, None)
        elif isinstance(target, ast.Tuple):
            vals = value if isinstance(value, tuple) and len(value) == len(target.elts) else [None] * len(target.elts)
            for t, v in zip(target.elts, vals):
                bind(t, v)

    for st in body:
        if isinstance(st, ast.With) and st.lineno <= stop <= (st.end_lineno or st.lineno):
            return _run_in_order(st.body, scope, given, stop, funcs, calls)   # `with device(x): kernel[grid](...)`
        if st.lineno <= stop <= (st.end_lineno or st.lineno) and not isinstance(st, ast.If):
            return False
        if isinstance(st, ast.Assign):
            for t in st.targets:
                bind(t, ev(st.value))
        elif isinstance(st, (ast.AnnAssign, ast.AugAssign)) and isinstance(st.target, ast.Name) and st.value:
            node = st.value if isinstance(st, ast.AnnAssign) else ast.BinOp(st.target, st.op, st.value)
            bind(st.target, ev(node))
        elif isinstance(st, (ast.Return, ast.Raise)):
            value = st.value if isinstance(st, ast.Return) else None
            # `return BLOCK, num_warps`: each element on its own, so a known block survives an unknown warp count
            scope[RETURN] = tuple(ev(e) for e in value.elts) if isinstance(value, ast.Tuple) else \
                ev(value) if value is not None else None
            return False
        elif isinstance(st, ast.If):
            cond = ev(st.test)
            branches = [st.body] if cond is True else [st.orelse] if cond is False else [st.body, st.orelse]
            for b in branches:
                if cond is None:   # either branch may run: what they assign is unknown after it
                    ends = bool(b) and isinstance(b[-1], (ast.Return, ast.Raise))
                    if ends and stop >= 0:
                        continue   # the launch below is reached only on paths where this branch did not run
                    for n in ast.walk(ast.Module(b, [])):
                        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                            bind(n, None)
                        elif isinstance(n, (ast.Return, ast.Raise)) and stop < 0:
                            scope[RETURN] = None   # a helper's path may end in either branch: result unknown
                            return False
                elif not _run_in_order(b, scope, given, stop, funcs, calls):
                    return False
    return True


RETURN = "<return>"   # the scope key a helper's `return` value is kept under (not a Python name)
# helpers calling helpers: calculate_settings-style functions are one level deep; a bound keeps recursion finite
MAX_HELPER_DEPTH = 4


def call_helper(fn: ast.FunctionDef, args: list[Any], kwargs: Mapping[str, Any],
                funcs: Mapping[str, ast.FunctionDef], calls: int) -> Any:
    """The value a host helper returns for these arguments, read from its body in order (assignments, `if`s,
    `return`), or None when any step on the way is unknown. Never executed: only SafeEval's subset."""
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
    if len(args) > len(params) or fn.args.vararg or fn.args.kwarg:
        return None
    scope: dict[str, Any] = dict(zip(params, args))
    scope.update(kwargs)
    for name, default in _defaults(fn).items():
        if name not in scope:
            val = SafeEval({}, funcs=funcs, calls=calls)(default)
            if val is not None:
                scope[name] = val
    if any(p not in scope for p in params):
        return None
    _run_in_order(fn.body, scope, {}, -1, funcs, calls)
    return scope.get(RETURN)


def _locals(fn: ast.FunctionDef) -> dict[str, list[ast.expr]]:
    out: dict[str, list[ast.expr]] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name):
                out.setdefault(target.id, []).append(node.value)
            elif isinstance(target, ast.Tuple):
                # `bos, eos = tl.load(p), tl.load(p + 1)`: each name is bound to its own element; a name left
                # out here would fall back to a default shape (fla's `T = eos - bos` became 0 trips)
                pairs = node.value.elts if isinstance(node.value, ast.Tuple) and \
                    len(node.value.elts) == len(target.elts) else [node.value] * len(target.elts)
                for name, value in zip(target.elts, pairs):
                    if isinstance(name, ast.Name):
                        out.setdefault(name.id, []).append(value)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            out.setdefault(node.target.id, []).append(node.value)
    return out


def _range_args(it: ast.expr) -> tuple[ast.expr | None, ast.expr | None, ast.expr | None] | None:
    if not isinstance(it, ast.Call):
        return None
    name = it.func.attr if isinstance(it.func, ast.Attribute) else getattr(it.func, "id", None)
    if name not in ("range", "static_range"):
        return None
    a = list(it.args)
    if len(a) == 1:
        return ast.Constant(0), a[0], ast.Constant(1)
    if len(a) >= 2:
        return a[0], a[1], a[2] if len(a) > 2 else ast.Constant(1)
    return None


@functools.lru_cache(maxsize=64)
def _parse(path: str, mtime: float) -> ast.Module | None:
    try:
        with open(path, "rb") as fh:
            return ast.parse(fh.read())
    except (OSError, SyntaxError, ValueError):
        return None


def read_kernel_source(path: str, kernel_name: str) -> KernelSource:
    import os

    try:
        tree = _parse(path, os.path.getmtime(path))
    except OSError:
        tree = None
    out = KernelSource()
    if tree is None:
        return out
    out.helpers = _host_helpers(path, tree)
    out.device_helpers = _host_helpers(path, tree, jit=True)
    out.constants = _module_constants(tree)
    kernel_fn = next((f for f in ast.walk(tree) if isinstance(f, ast.FunctionDef) and f.name == kernel_name), None)
    kernel_params = [a.arg for a in kernel_fn.args.args] if kernel_fn else []
    out.params = kernel_params
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef):
            continue
        if fn.name == kernel_name:
            out.unspecialized = _do_not_specialize(fn)
        loc = _locals(fn)
        for node in ast.walk(fn):
            if isinstance(node, ast.For):
                args = _range_args(node.iter)
                if args:
                    out.loops[node.lineno] = LoopFacts(*args, loc)
            if fn.name == kernel_name and isinstance(node, ast.Call) and node.args:
                f = node.func
                if isinstance(f, ast.Attribute) and f.attr == "static_assert":
                    out.static_asserts.append(ast.unparse(node.args[0]))
                    out.assert_nodes.append(node.args[0])
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript):
                callee = node.func.value
                name = callee.attr if isinstance(callee, ast.Attribute) else getattr(callee, "id", None)
                if name == kernel_name:
                    out.grids.append((node.func.slice, loc))
                    args = _launch_args(node, kernel_params)
                    out.launches.append((args, loc, _defaults(fn)))
                    out.launch_fns.append((fn, node.lineno))
                    passed = {e.id: p for p, e in args.items() if isinstance(e, ast.Name)}
                    out.launch_asserts += [(a.test, passed) for a in ast.walk(fn) if isinstance(a, ast.Assert)]
    return out


def _is_jit(fn: ast.FunctionDef) -> bool:
    """`@triton.jit`, `@jit`, `@triton.jit(...)` as its only decorator."""
    if len(fn.decorator_list) != 1:
        return False
    dec = fn.decorator_list[0]
    dec = dec.func if isinstance(dec, ast.Call) else dec
    return (dec.attr if isinstance(dec, ast.Attribute) else getattr(dec, "id", None)) == "jit"


def _host_helpers(path: str, tree: ast.Module, jit: bool = False) -> dict[str, ast.FunctionDef]:
    """Top-level functions of the file, and those its top-level `from X import f` lines bring in from files
    of the same project (relative imports, or absolute ones under the directory above the top package):
    undecorated ones, or (`jit`) `@triton.jit` ones."""
    import os

    def wanted(f: ast.FunctionDef) -> bool:
        return _is_jit(f) if jit else not f.decorator_list

    out = {st.name: st for st in tree.body if isinstance(st, ast.FunctionDef) and wanted(st)}
    here = os.path.dirname(os.path.abspath(path))
    top = here
    while os.path.isfile(os.path.join(top, "__init__.py")):
        top = os.path.dirname(top)
    for st in tree.body:
        if not isinstance(st, ast.ImportFrom) or (not st.module and not st.level):
            continue
        if st.level:
            base = here
            for _ in range(st.level - 1):
                base = os.path.dirname(base)
        else:
            base = top
        stem = os.path.join(base, *(st.module or "").split(".")) if st.module else base
        for cand in (stem + ".py", os.path.join(stem, "__init__.py")):
            if not os.path.isfile(cand) or os.path.abspath(cand) == os.path.abspath(path):
                continue
            try:
                other = _parse(cand, os.path.getmtime(cand))
            except OSError:
                other = None
            if other is None:
                break
            defs = {f.name: f for f in other.body if isinstance(f, ast.FunctionDef) and wanted(f)}
            for alias in st.names:
                if alias.name in defs and (alias.asname or alias.name) not in out:
                    out[alias.asname or alias.name] = defs[alias.name]
            break
    return out


def _module_constants(tree: ast.Module) -> dict[str, Any]:
    """Module-level `NAME = <expr>` in order, each evaluated over the names before it; a name assigned again
    with something unknown is dropped, and one bound anywhere else at module level (`for`, `if`, `import`,
    a second target) is left out."""
    out: dict[str, Any] = {}
    for st in tree.body:
        if isinstance(st, (ast.Assign, ast.AnnAssign)) and st.value is not None:
            targets = st.targets if isinstance(st, ast.Assign) else [st.target]
            value = SafeEval(out)(st.value) if len(targets) == 1 and isinstance(targets[0], ast.Name) else None
            for t in targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        out.pop(n.id, None)
            if value is not None and isinstance(targets[0], ast.Name):
                out[targets[0].id] = value
        elif not isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Expr)):
            for n in ast.walk(st):
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                    out.pop(n.id, None)
                elif isinstance(n, ast.alias):
                    out.pop((n.asname or n.name).split(".")[0], None)
        elif isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.pop(st.name, None)
    return out


def _launch_args(call: ast.Call, params: list[str]) -> dict[str, ast.expr]:
    args = {p: a for p, a in zip(params, call.args) if not isinstance(a, ast.Starred)}
    args.update({kw.arg: kw.value for kw in call.keywords if kw.arg})
    return args


def _defaults(fn: ast.FunctionDef) -> dict[str, ast.expr]:
    pos = fn.args.posonlyargs + fn.args.args
    out = {a.arg: d for a, d in zip(pos[len(pos) - len(fn.args.defaults):], fn.args.defaults)}
    out.update({a.arg: d for a, d in zip(fn.args.kwonlyargs, fn.args.kw_defaults) if d is not None})
    return out


def _do_not_specialize(fn: ast.FunctionDef) -> frozenset[str]:
    params = [a.arg for a in fn.args.args]
    names: set[str] = set()
    for dec in fn.decorator_list:
        if not isinstance(dec, ast.Call):
            continue
        for kw in dec.keywords:
            if kw.arg in ("do_not_specialize", "do_not_specialize_on_alignment") and \
                    isinstance(kw.value, (ast.List, ast.Tuple)):
                for e in kw.value.elts:
                    if isinstance(e, ast.Constant) and isinstance(e.value, str):
                        names.add(e.value)
                    elif isinstance(e, ast.Constant) and isinstance(e.value, int) and e.value < len(params):
                        names.add(params[e.value])
    return frozenset(names)


def evaluate_grid(src: KernelSource, env: Mapping[str, Any]) -> int | None:
    """Number of CTAs of the first launch whose grid evaluates (a lambda is applied to META = env)."""
    dims = grid_dims(src, env)
    return None if dims is None else max(1, math.prod(dims))


def grid_dims(src: KernelSource, env: Mapping[str, Any]) -> list[int] | None:
    """The grid of the first launch whose grid evaluates under `env`, one int per dimension."""
    for expr, loc in src.grids:
        node: ast.expr | None = expr
        if isinstance(node, ast.Name) and node.id in loc:
            node = loc[node.id][-1]
        if isinstance(node, ast.Lambda):
            node = node.body
        val = SafeEval(env, loc)(node)
        if isinstance(val, (int, float)):
            val = (val,)
        if isinstance(val, tuple) and val and all(isinstance(v, (int, float)) for v in val):
            return [int(v) for v in val]
    return None


def _bounds(src: KernelSource, line: int, env: Mapping[str, Any]) -> tuple[int, int, int] | None:
    loop = src.loops.get(line)
    if loop is None:
        return None
    ev = SafeEval(env, loop.locals, src.device_helpers)
    start, stop, step = ev(loop.start), ev(loop.stop), ev(loop.step)
    if not all(isinstance(v, (int, float)) for v in (start, stop, step)) or step <= 0:
        return None
    return int(start), int(stop), int(step)


def trip_count(src: KernelSource, line: int, env: Mapping[str, Any]) -> int | None:
    b = _bounds(src, line, env)
    return None if b is None else max(0, -(-(b[1] - b[0]) // b[2]))


def trip_span(src: KernelSource, line: int, env: Mapping[str, Any]) -> float | None:
    """(stop − start) / step, unrounded: the iterations' worth of data a loop over a row really covers.
    `for off in range(0, 11008, 4096)` runs 3 times, but its masked loads read 11008 columns, 2.69 tiles."""
    b = _bounds(src, line, env)
    return None if b is None else max(0.0, (b[1] - b[0]) / b[2])


def check_asserts(src: KernelSource, env: Mapping[str, Any]) -> str | None:
    """The first `tl.static_assert` or launch-site `assert` that evaluates to False under `env` (kernel names),
    as text, else None; one that does not evaluate (shapes, dtypes) counts as passing."""
    for text, node in zip(src.static_asserts, src.assert_nodes):
        if SafeEval(env)(node) is False:
            return f"static_assert({text})"
    for node, passed in src.launch_asserts:
        host = {h: env[p] for h, p in passed.items() if p in env}
        if SafeEval({**env, **host})(node) is False:
            return f"launch-site assert {ast.unparse(node)}"
    return None
