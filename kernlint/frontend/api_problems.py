"""The Triton API-misuse findings (kernlint.frontend.api_usage finds them), in a module without libcst: the
rules that report them import these names, and importing the rules must not import libcst (a file without
kernels never needs it; docs/performance.md)."""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class ApiProblem(Enum):
    UNKNOWN_ATTRIBUTE = "unknown-attribute"
    NOT_IN_RELEASE = "not-in-release"
    DTYPE_CALL = "dtype-call"
    UNKNOWN_KEYWORD = "unknown-keyword"


@dataclass(frozen=True, slots=True)
class ApiMisuse:
    problem: ApiProblem
    line: int                           # the line its statement (or call) starts on; `code` locates it there
    code: str                           # the flagged expression as the source spells it (`tl.cidv`, `msk=m`)
    function: str                       # qualname of the jit function it sits in
    name: str                           # qualified name looked up (`triton.language.cidv`)
    release: str                        # the release it was judged against ("every release" when guarded)
    suggestions: tuple[str, ...] = ()   # spelled as the source would (`tl.cdiv`, `x.to(tl.float32)`)
    releases: tuple[str, ...] = ()      # NOT_IN_RELEASE: the releases that have it
    keyword: str | None = None          # UNKNOWN_KEYWORD: the keyword passed
    guarded: bool = False
