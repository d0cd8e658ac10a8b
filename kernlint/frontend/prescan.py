"""The text-level test that keeps most files of a repository away from libcst (no libcst import here).

A file can only define a jit function if it says "jit" (every name kernlint resolves to triton.jit ends in
the identifier `jit` written in the file), can only launch one through `callee[grid](...)` (a `]`
followed, past whitespace, comments and line continuations, by `(`), and can only hold a Helion kernel if
it says "helion". A file with none of these (three quarters of a large repository) has no kernel, launch
site or call of a jit function, so nothing reads its syntax tree: the linter checks that CPython parses it
(kernlint.frontend.parse.check_syntax) and gives it empty facts, without importing or running libcst.

Re-exported names (`from mypkg.compat import triton`, `tl` from a project module) need no import test:
the decorator or launch that uses them still says `jit` or `[grid](`. A helper-only module (jit helpers
another file inlines) says `jit` too; a module of constants or configs that another file reads is
resolved on demand from that file (kernlint.pipeline.imports), not from this file's facts.
"""
from __future__ import annotations

import ast
import re

from kernlint.frontend.facts import ModuleFacts
from kernlint.core.module_names import package_module_name

# The comment branch ends at the end of its line (the lookahead) so the pattern cannot backtrack exponentially.
_LAUNCH_SYNTAX = re.compile(r"\]\s*(?:(?:#[^\r\n]*(?=[\r\n])|\\(?:\r\n|\r|\n))\s*)*\(")


def may_define_or_launch(text: str) -> bool:
    """Whether `text` may define a Triton jit function or launch one (False: it surely does neither)."""
    return "jit" in text or _LAUNCH_SYNTAX.search(text) is not None


def may_hold_kernels(text: str) -> bool:
    """Whether the frontend needs the syntax tree of `text`: a Triton kernel or launch, or a Helion kernel."""
    return may_define_or_launch(text) or "helion" in text


def launch_syntax_only(text: str) -> bool:
    """Whether `text` passed `may_hold_kernels` on its launch syntax alone: it never says `jit` or `helion`,
    so it defines no jit function and holds no Helion kernel, and its facts are its launch sites."""
    return "jit" not in text and "helion" not in text


def has_subscript_call(tree: ast.AST) -> bool:
    """Whether CPython's tree of a file has a call of a subscript (`callee[grid](...)`), the only form of a
    launch site (kernlint.frontend.kernels `visit_call`). The launch regex also matches `](` in strings,
    comments and markdown links of docstrings: a file of those has no launch, so libcst would find none."""
    from kernlint.frontend.parse import ast_nodes

    return any(type(node) is ast.Call and type(node.func) is ast.Subscript
               for node in ast_nodes(tree))


def facts_without_kernels(path: str) -> ModuleFacts:
    """The facts of a file that `may_define_or_launch` rules out (constants are left out: only the
    module's own kernels read them)."""
    return ModuleFacts(path=path, module_name=package_module_name(path), jit_functions=(), launches=(), constants={},
                       called_jit_names=frozenset())
