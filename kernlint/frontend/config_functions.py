"""Calls to a module's own functions inside static values: `configs=get_autotune_config()`,
`CONFIGS = [...] + get_configs_io_bound()`, where the function builds its list with loops, comprehensions,
`itertools.product`, `.append`/`.extend` and returns it.

The function body is read, never run: assignments, `for` over a static iterable, `if`, `break`/`continue`,
`.append`/`.extend` of a local list and `return` are followed by the static evaluator, inside its step budget
(static_eval.MAX_STEPS), so a function that loops long is refused, not waited for. Anything else (a call it
cannot evaluate, I/O, attribute stores) gives up with the reason. A function that reads a file (`open`,
`json.load`, `yaml.safe_load`, ...) is named as the source of the configs: they come from a data file that
kernlint does not read. A module-level `get_configs = nvidia_configs` is followed to the function; a name bound
to one of several functions under module-level conditions (chosen at import time) is refused, naming them.
"""
from __future__ import annotations

from typing import Any

import libcst as cst

from kernlint.frontend.static_eval import StaticEvaluator, _give
from kernlint.frontend.walk import iter_nodes

MAX_CALL_DEPTH = 4   # helper calling helper: deeper than any config builder seen in the corpus
# Calls that read data files: configs built from them are per-GPU tables kernlint does not read
_FILE_READERS = frozenset(("open", "load", "loads", "safe_load", "full_load", "read_text", "read_csv",
                           "load_json", "load_yaml", "read"))


class _Return(Exception):
    def __init__(self, value: Any) -> None:
        self.value = value


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


def _callee_name(call: cst.Call) -> str:
    func = call.func
    return func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""


def reads_data_file(fn: cst.FunctionDef) -> str | None:
    """The first file-reading call in a function (`json.load`), or None."""
    for node in iter_nodes(fn.body):
        if isinstance(node, cst.Call) and _callee_name(node) in _FILE_READERS:
            return cst.Module([]).code_for_node(node.func)
    return None


def _function_aliases(body: Any, functions: set[str], conditional: bool = False,
                      out: dict[str, tuple[list[str], bool]] | None = None) -> dict[str, tuple[list[str], bool]]:
    """Module-level `NAME = function` bindings: NAME → (the names it is bound to, whether any binding is
    conditional: inside a module-level `if`/`try`). Names bound to something else are left out."""
    out = {} if out is None else out
    for stmt in body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Assign) and len(small.targets) == 1 \
                        and isinstance(small.targets[0].target, cst.Name) and isinstance(small.value, cst.Name) \
                        and (small.value.value in functions or small.value.value in out):
                    names, cond = out.get(small.targets[0].target.value, ([], False))
                    out[small.targets[0].target.value] = ([*names, small.value.value], cond or conditional or bool(names))
        elif isinstance(stmt, (cst.If, cst.Try)):
            for suite in _suites(stmt):
                _function_aliases(suite.body, functions, True, out)
    return out


def _suites(stmt: cst.CSTNode) -> list[Any]:
    out: list[Any] = []
    todo: list[Any] = [stmt]
    while todo:
        node = todo.pop()
        for attr in ("body", "orelse", "finalbody"):
            sub = getattr(node, attr, None)
            if isinstance(sub, cst.IndentedBlock):
                out.append(sub)
            elif isinstance(sub, (cst.Else, cst.Finally)) and isinstance(sub.body, cst.IndentedBlock):
                out.append(sub.body)
            elif isinstance(sub, cst.If):
                todo.append(sub)
        for handler in getattr(node, "handlers", ()):
            if isinstance(handler.body, cst.IndentedBlock):
                out.append(handler.body)
    return out


class ModuleFunctions:
    """StaticEvaluator.call_hook for the module-level functions of one file."""

    def __init__(self, evaluator: StaticEvaluator, module: cst.Module) -> None:
        self.ev = evaluator
        self.functions = {s.name.value: s for s in module.body if isinstance(s, cst.FunctionDef)}
        self.aliases = _function_aliases(module.body, set(self.functions))
        self.depth = 0

    def __call__(self, call: cst.Call, env: dict[str, Any]) -> Any:
        func = call.func
        if not isinstance(func, cst.Name) or func.value in env:
            return None
        name = self._resolve(func.value)
        if name not in self.functions:
            return None
        fn = self.functions[name]
        source = reads_data_file(fn)
        if source is not None:
            _give(f"configs from a data file loaded by {func.value}(...) (it calls {source}): not read")
        if self.depth >= MAX_CALL_DEPTH:
            _give(f"{func.value}(...) calls functions more than {MAX_CALL_DEPTH} deep")
        local = self._bind_params(fn, call, env)
        self.depth += 1
        try:
            self._block(fn.body, local)
        except _Return as ret:
            return ret.value
        finally:
            self.depth -= 1
        return _give(f"{func.value}(...) returns nothing")

    def _resolve(self, name: str) -> str:
        """`AUTOTUNE = get_configs` at module level: the function the name is bound to. A name bound to one of
        several functions under module-level conditions (gemlite's `get_autotune_config`, chosen by a setting
        and the vendor at import time) gives up, naming them."""
        seen: list[str] = []
        while name in self.aliases and name not in seen and len(seen) < MAX_CALL_DEPTH:
            seen.append(name)
            targets, conditional = self.aliases[name]
            if conditional or len(targets) > 1:
                ends = sorted(self._ends(seen[0], set()))
                _give(f"`{seen[0]}` is one of {', '.join(f'{e}()' for e in ends)}, chosen by module-level "
                      "conditions at import time")
            name = targets[0]
        return name

    def _ends(self, name: str, seen: set[str]) -> set[str]:
        """The module functions a name may be bound to, through every alias."""
        if name in seen or name not in self.aliases:
            return {name}
        seen.add(name)
        return {e for t in self.aliases[name][0] for e in self._ends(t, seen)}

    def _bind_params(self, fn: cst.FunctionDef, call: cst.Call, env: dict[str, Any]) -> dict[str, Any]:
        params = [*fn.params.posonly_params, *fn.params.params]
        if any(a.star for a in call.args) or not isinstance(fn.params.star_arg, cst.MaybeSentinel) \
                or fn.params.star_kwarg is not None:
            _give(f"{fn.name.value}(...) takes *args/**kwargs")
        local: dict[str, Any] = {}
        positional = [a for a in call.args if a.keyword is None]
        for p, a in zip(params, positional):
            local[p.name.value] = self.ev._known(self.ev._eval(a.value, env))
        for a in call.args:
            if a.keyword is not None:
                local[a.keyword.value] = self.ev._known(self.ev._eval(a.value, env))
        for p in [*params, *fn.params.kwonly_params]:
            if p.name.value not in local:
                if p.default is None:
                    _give(f"{fn.name.value}(...) is called without `{p.name.value}`")
                local[p.name.value] = self.ev._known(self.ev._eval(p.default, {}))
        return local

    # -- statements -------------------------------------------------------------------------------
    def _block(self, body: cst.BaseSuite, local: dict[str, Any]) -> None:
        statements = body.body if isinstance(body, cst.IndentedBlock) else [body]
        for stmt in statements:
            self._statement(stmt, local)

    def _statement(self, stmt: cst.CSTNode, local: dict[str, Any]) -> None:
        if isinstance(stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            for small in stmt.body:
                self._small(small, local)
        elif isinstance(stmt, cst.For) and isinstance(stmt.orelse, type(None)):
            for item in self.ev._known(self.ev._eval(stmt.iter, local)):
                self.ev._bind(stmt.target, item, local)
                try:
                    self._block(stmt.body, local)
                except _Break:
                    break
                except _Continue:
                    continue
        elif isinstance(stmt, cst.If):
            if self.ev._known(self.ev._eval(stmt.test, local)):
                self._block(stmt.body, local)
            elif isinstance(stmt.orelse, cst.If):
                self._statement(stmt.orelse, local)
            elif isinstance(stmt.orelse, cst.Else):
                self._block(stmt.orelse.body, local)
        else:
            _give(f"`{type(stmt).__name__}` statement in a config function")

    def _small(self, small: cst.BaseSmallStatement, local: dict[str, Any]) -> None:
        if isinstance(small, cst.Assign):
            value = self.ev._known(self.ev._eval(small.value, local))
            for target in small.targets:
                self.ev._bind(target.target, value, local)
        elif isinstance(small, cst.AnnAssign) and small.value is not None:
            self.ev._bind(small.target, self.ev._known(self.ev._eval(small.value, local)), local)
        elif isinstance(small, cst.AugAssign) and isinstance(small.target, cst.Name) \
                and isinstance(small.operator, cst.AddAssign) and small.target.value in local:
            local[small.target.value] = local[small.target.value] + self.ev._known(self.ev._eval(small.value, local))
        elif isinstance(small, cst.Expr):
            self._expression_statement(small.value, local)
        elif isinstance(small, cst.Return):
            raise _Return(self.ev._known(self.ev._eval(small.value, local)) if small.value is not None else None)
        elif isinstance(small, cst.Break):
            raise _Break()
        elif isinstance(small, cst.Continue):
            raise _Continue()
        elif not isinstance(small, cst.Pass):
            _give(f"`{type(small).__name__}` statement in a config function")

    def _expression_statement(self, node: cst.BaseExpression, local: dict[str, Any]) -> None:
        if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
            return  # a docstring
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                and isinstance(node.func.value, cst.Name) and node.func.attr.value in ("append", "extend") \
                and isinstance(local.get(node.func.value.value), list) and len(node.args) == 1:
            value = self.ev._known(self.ev._eval(node.args[0].value, local))
            target = local[node.func.value.value]
            if node.func.attr.value == "append":
                target.append(value)
            else:
                target.extend(value)
            return
        _give("an expression statement in a config function other than list .append/.extend")
