"""What the frontend learns about a file: kernels, their parameters, configs and launch sites."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:   # annotations only: a file without kernels gets its (empty) facts without libcst
    import libcst as cst

    from kernlint.frontend.data_configs import DataConfigs
    from kernlint.frontend.static_eval import ConfigLiteral

ConfigOrigin = Literal["autotune", "launch", "default", "cli", "heuristics"]
NO_DEFAULT: Any = object()


@dataclass(frozen=True, slots=True)
class Param:
    name: str
    index: int
    is_constexpr: bool
    default: Any = NO_DEFAULT          # evaluated default, `Unknown`, or NO_DEFAULT
    annotation: str | None = None      # source text of the annotation, e.g. "tl.constexpr" or "tl.tensor"


@dataclass(frozen=True, slots=True)
class AutotuneSpec:
    configs: tuple[ConfigLiteral, ...]
    key: tuple[str, ...]
    line: int
    unknown_reason: str | None = None  # set when the config list could not be evaluated statically
    has_prune: bool = False
    # the list came from the package's data files (`configs=runtime.get_tuned_config("mm")`): `configs` is the
    # generic file's, and a target whose architecture has a file of its own reads that one (api.analyse_kernel)
    data: DataConfigs | None = None


@dataclass(frozen=True, slots=True)
class HeuristicValue:
    name: str
    source: str                        # the lambda's source text, for messages
    line: int
    body: cst.BaseExpression | None    # the lambda body, evaluated per config with `args` bound
    arg_name: str = "args"


@dataclass(frozen=True, slots=True)
class LaunchSite:
    callee: str                        # qualified name of the launched kernel
    line: int
    col: int
    end_line: int
    kwargs: dict[str, Any]             # evaluated keyword values (Unknown where not static)
    positional: int                    # number of positional arguments
    grid_is_callable: bool
    host_function: str | None          # the host function containing the launch
    # element types the host code states for the tensors it passes: (position or keyword, short dtype, why),
    # from `assert a.dtype == torch.int8` or `out = torch.empty(..., dtype=torch.float32)` before the launch
    arg_dtypes: tuple[tuple[int | str, str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class JitFunction:
    """A `@triton.jit` function: a kernel, a helper, or both."""

    name: str
    qualname: str                      # dotted path inside the module (Outer.inner for nested defs)
    module: str                        # module name derived from the file path
    path: str
    node: cst.FunctionDef
    line: int                          # line of the `def`
    decorator_line: int                # first decorator line (noqa on it covers the kernel)
    params: tuple[Param, ...]
    autotune: AutotuneSpec | None = None
    heuristics: tuple[HeuristicValue, ...] = ()
    jit_kwargs: dict[str, Any] = field(default_factory=dict)
    # `return <value>` in its own body: Triton compiles only non-kernel functions that return ("By design, only
    # non-kernel functions can return", triton/compiler/code_generator.py), so unless it is launched this is a
    # device function (a helper of another package, or a template such as a pointwise-op generator expands)
    returns_value: bool = False

    @property
    def full_name(self) -> str:
        return f"{self.module}.{self.qualname}" if self.module else self.qualname

    @property
    def constexpr_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params if p.is_constexpr)


@dataclass(frozen=True, slots=True)
class UnresolvedDecorator:
    """A function decorated like a Triton kernel (`@x.jit`, `@jit`) whose decorator kernlint could not resolve
    to triton, with a body that reads like one (`tl.` calls, `program_id`): it is reported, not analysed."""
    line: int                          # the function's `def` line
    function: str                      # qualname in its module
    decorator: str                     # the decorator as written


@dataclass(frozen=True, slots=True)
class ModuleFacts:
    path: str
    module_name: str
    jit_functions: tuple[JitFunction, ...]
    launches: tuple[LaunchSite, ...]
    constants: dict[str, Any]          # module-level names with static values (constexpr globals too)
    called_jit_names: frozenset[str]   # qualified names called from inside jit functions (→ helpers)
    unresolved: tuple[UnresolvedDecorator, ...] = ()
