"""Discover rules: every `Rule` subclass in the modules of `kernlint.rules` and of entry-point packs."""
from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache
from importlib.metadata import entry_points

from kernlint.pipeline.rule import Rule


def _rules_in_package(package_name: str) -> list[type[Rule]]:
    package = importlib.import_module(package_name)
    found: list[type[Rule]] = []
    for info in pkgutil.iter_modules(package.__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{package_name}.{info.name}")
        for obj in vars(module).values():
            if isinstance(obj, type) and issubclass(obj, Rule) and obj is not Rule and obj.__module__ == module.__name__:
                found.append(obj)
    return found


@lru_cache(maxsize=1)
def all_rules() -> tuple[type[Rule], ...]:
    packages = {"kernlint.rules"}
    for ep in entry_points(group="kernlint.rules"):
        packages.add(ep.value)
    rules: dict[str, type[Rule]] = {}
    for name in sorted(packages):
        for rule in _rules_in_package(name):
            if rule.CODE in rules and rules[rule.CODE] is not rule:
                raise RuntimeError(f"rule code {rule.CODE} defined twice: {rules[rule.CODE].__name__}, {rule.__name__}")
            rules[rule.CODE] = rule
    return tuple(rules[c] for c in sorted(rules))


def select_rules(select: tuple[str, ...] = (), ignore: tuple[str, ...] = ()) -> tuple[type[Rule], ...]:
    """Ruff-style prefix selection: `KL1` selects KL101…KL199; ignore wins over select."""
    chosen = []
    for rule in all_rules():
        if select and not any(rule.CODE.startswith(p) for p in select):
            continue
        if any(rule.CODE.startswith(p) for p in ignore):
            continue
        chosen.append(rule)
    return tuple(chosen)


def rule_by_code(code: str) -> type[Rule] | None:
    return next((r for r in all_rules() if r.CODE == code.upper()), None)
