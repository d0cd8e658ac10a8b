"""What the Triton API-misuse rules (KL310-KL313) share: the file's findings and how releases are named (not a rule)."""
from __future__ import annotations

from kernlint.frontend.api_problems import ApiMisuse, ApiProblem
from kernlint.frontend.triton_api import load, release_scope, scope_label
from kernlint.pipeline.rule import FileContext


def misuses(ctx: FileContext, problem: ApiProblem) -> list[ApiMisuse]:
    if ctx.names is None or not ctx.jit_functions:
        return []
    from kernlint.pipeline import incremental
    from kernlint.frontend.api_usage import file_misuses   # libcst: only for a file with jit functions

    release = ctx.settings.triton_version if ctx.settings is not None else None
    found = incremental.file_misuses(ctx, release)   # the language server's re-lint: unchanged functions reused
    if found is None:
        found = file_misuses(ctx.jit_functions, ctx.names, release)
    return [m for m in found if m.problem is problem]


def judged(m: ApiMisuse) -> str:
    """"Triton 3.9", or every release of the table for a use under a version guard."""
    releases = load().releases
    return f"any Triton release {releases[0]}-{releases[-1]}" if m.guarded else f"Triton {m.release}"


def target(ctx: FileContext) -> str:
    return scope_label(release_scope(ctx.settings.triton_version if ctx.settings is not None else None))


def either(options: tuple[str, ...]) -> str:
    return " or ".join(f"`{o}`" for o in options)
