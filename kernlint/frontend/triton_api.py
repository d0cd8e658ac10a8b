"""The `triton.language` API of each Triton release, read from the shipped table (kernlint/data/triton_api.json).

The table is generated from the released wheels by benchmarks/triton_api_table.py (their sources parsed, never
imported); this module only reads it, with the standard library, so settings validation can use it on the cold
path and the lint path never imports Triton.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

TABLE = Path(__file__).resolve().parents[1] / "data" / "triton_api.json"
PACKAGE = "triton.language"


@dataclass(frozen=True, slots=True)
class Member:
    """What one attribute of a `triton.language` module is in one release."""

    kind: str                          # "function", "class", "dtype", "module" or "value"
    params: tuple[str, ...] | None     # positional-or-keyword parameters; None when unknown (a class without __init__)
    posonly: int = 0                   # how many of `params` are positional-only
    kwonly: tuple[str, ...] = ()
    varargs: bool = False
    varkw: bool = False                # `**kwargs`: any keyword is accepted
    module: str | None = None          # for kind "module": its full name

    def keywords(self) -> frozenset[str] | None:
        """The keyword names a call may pass; None when any keyword is accepted or the signature is unknown."""
        if self.varkw or self.params is None:
            return None
        return frozenset((*self.params[self.posonly:], *self.kwonly))


class TritonApi:
    def __init__(self, data: dict) -> None:   # type: ignore[type-arg]
        self.releases: tuple[str, ...] = tuple(data["releases"])
        self.wheels = tuple((w["version"], w["wheel"], w["sha256"]) for w in data["wheels"])
        self._modules = data["modules"]
        self._members: dict[tuple[str, str], dict[str, Member]] = {}   # (module, release) → name → member

    @property
    def newest(self) -> str:
        return self.releases[-1]

    def has_module(self, module: str, release: str) -> bool:
        return release in self._modules.get(module, {}).get("in", ())

    def is_open(self, module: str, release: str) -> bool:
        """A module-level `__getattr__`: any attribute may exist."""
        return release in self._modules.get(module, {}).get("open", ())

    def members(self, module: str, release: str) -> dict[str, Member]:
        key = (module, release)
        if key not in self._members:
            found: dict[str, Member] = {}
            for name, variants in self._modules.get(module, {}).get("members", {}).items():
                v = next((v for v in variants if release in v["in"]), None)
                if v is not None:
                    params = v.get("params")
                    found[name] = Member(v["kind"], tuple(params) if params is not None else None, v.get("posonly", 0),
                                         tuple(v.get("kwonly", ())), v.get("varargs", False), v.get("varkw", False),
                                         v.get("module"))
            self._members[key] = found
        return self._members[key]

    def member(self, module: str, name: str, release: str) -> Member | None:
        return self.members(module, release).get(name)

    def releases_with(self, module: str, name: str) -> tuple[str, ...]:
        """The releases in which `module.name` exists (as anything)."""
        variants = self._modules.get(module, {}).get("members", {}).get(name, ())
        return tuple(r for r in self.releases if any(r in v["in"] for v in variants))

    def homes(self, name: str, release: str) -> list[str]:
        """Public modules (no `_private` part) that have a callable `name` in `release`, `triton.language` first."""
        out = []
        for module in self._modules:
            if any(p.startswith("_") for p in module.split(".")) or not self.has_module(module, release):
                continue
            m = self.member(module, name, release)
            if m is not None and m.kind in ("function", "class") and module.rsplit(".", 1)[-1] not in (
                    "core", "semantic", "standard"):   # implementation modules: reach them through `tl` itself
                out.append(module)
        return sorted(out, key=lambda m: (m != PACKAGE, m.count("."), m))


@lru_cache(maxsize=1)
def load() -> TritonApi:
    return TritonApi(json.loads(TABLE.read_text(encoding="utf-8")))


def release_error(value: object) -> str | None:
    """Why `value` is not a `triton-version` the table knows (None when it is); "3.4" and "3.4.1" name 3.4."""
    if not isinstance(value, str):
        return f"must be a string such as \"3.4\", got {value!r}"
    releases = load().releases
    if ".".join(value.split(".")[:2]) not in releases:
        return f"unknown Triton release {value!r}; the API table has {', '.join(releases)}"
    return None


def release_key(value: str | None) -> str:
    """The table's release for a `triton-version` value; the newest when none is set."""
    return ".".join(value.split(".")[:2]) if value else load().newest


def release_scope(value: str | None) -> tuple[str, ...]:
    """The releases a use is judged against: the one `triton-version` names, or, when the project names none,
    every release of the newest major line (3.0-3.9). An error must hold for every reading of the source, and
    without a pinned release any Triton 3 is a reading: block pointers (gone in 3.9) are fine on 3.8."""
    if value:
        return (release_key(value),)
    api = load()
    major = api.newest.split(".")[0]
    return tuple(r for r in api.releases if r.split(".")[0] == major)


def scope_label(scope: tuple[str, ...]) -> str:
    """"3.9" for one release, "3.0-3.9" for a line of them."""
    return scope[0] if len(scope) == 1 else f"{scope[0]}-{scope[-1]}"
