"""Bytes → libcst module, or a reason the file cannot be linted (reported as KL001)."""
from __future__ import annotations

import ast
import io
import operator
import re
import sys
import tokenize
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kernlint.core.deep_stack import run_deep

from kernlint.core.source_files import DEFAULT_MAX_FILE_BYTES, too_large

# libcst is imported by `parse_text` only: decoding and the syntax checks run for every file, and a file
# without kernels never needs libcst (its import is most of a cold `kernlint check`; docs/performance.md)
if TYPE_CHECKING:
    import libcst as cst

    from kernlint.frontend.cst_reuse import StatementCache


@dataclass(frozen=True, slots=True)
class ParseFailure:
    message: str
    line: int = 1
    col: int = 0
    # a file kernlint chose not to read (over max-file-size): nothing is wrong with the code, so a warning
    refused: bool = False


@dataclass(frozen=True, slots=True)
class ParsedSource:
    text: str
    module: cst.Module


def decode_source(data: bytes, limit: int | None = DEFAULT_MAX_FILE_BYTES) -> str | ParseFailure:
    """`limit` None: the caller already applied the configured size limit (kernlint.core.source_files)."""
    if limit is not None and len(data) > limit:
        return ParseFailure(too_large(len(data), limit))
    nul = data.find(b"\x00")
    if 0 <= nul < 8192:
        return ParseFailure("file looks binary (NUL bytes); not linted")
    if nul >= 0:
        # CPython refuses any source with a NUL byte ("source code string cannot contain null bytes"); libcst
        # parsed one deep in a 200 KB file, and its literal_eval of the string raised later (fuzz seed 31)
        line = data[:nul].count(b"\n") + 1
        return ParseFailure(f"NUL byte at line {line}: Python does not accept source with NUL bytes; not linted",
                            line)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return ParseFailure(f"file is not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})", line)
    return text


# Bracket depth at which CPython's tokenizer stops ("too many nested parentheses", MAXLEVEL 200); only
# checked for text CPython cannot parse, before libcst (whose native parser recursed per level) gets it.
MAX_NESTING = 200


# Only brackets and newlines change the count: looping over those alone (found by the regex engine)
# instead of every character is ~10x fewer Python iterations.
_BRACKET_OR_NEWLINE = re.compile(r"[()\[\]{}\n]")


def _bracket_depth(text: str) -> tuple[int, int]:
    """Deepest bracket nesting and its line (strings are not skipped: a cheap upper bound)."""
    depth = peak = 0
    line = peak_line = 1
    for ch in _BRACKET_OR_NEWLINE.findall(text):
        if ch in "([{":
            depth += 1
            if depth > peak:
                peak, peak_line = depth, line
        elif ch in ")]}":
            depth = max(0, depth - 1)
        elif ch == "\n":
            line += 1
    return peak, peak_line


# Syntax-tree depth CPython accepts: at its default recursion limit (1,000) CPython 3.11 parses a 2,986-term
# sum or a 2,984-branch `elif` chain, both 2,989 deep as `_ast_peak` counts, and rejects one term more
# ("maximum recursion depth exceeded during ast construction"). Files within it are linted on a deep-stack
# thread (kernlint.core.deep_stack), whose raised recursion limit would let `ast.parse` accept deeper trees:
# this constant keeps the rule "what CPython accepts" whatever the limit. libcst's native parser
# segfaulted on an 8,000-term chain, far above it.
MAX_AST_DEPTH = 2_989


# The stdlib tree of the text parsed last: a kernel file's syntax check (here) and its node positions
# (kernlint.frontend.positions) read the same tree, which CPython then parses once, not twice. One entry,
# replaced as a whole (a tuple), so a language-server thread never sees half of another's.
_LAST_AST: tuple[str, ast.Module] | None = None


def parse_ast(text: str) -> ast.Module:
    """`ast.parse(text)`, shared with the last caller that parsed the same text (the tree is only read)."""
    global _LAST_AST
    last = _LAST_AST
    if last is not None and (last[0] is text or last[0] == text):
        return last[1]
    tree = ast.parse(text)
    _LAST_AST = (text, tree)
    return tree


def _ast_depth(text: str) -> tuple[int, int] | None:
    """Deepest syntax-tree nesting and its line, or None when CPython cannot tell (syntax errors and
    newer syntax are left to libcst, which reports or accepts them)."""
    try:
        tree = parse_ast(text)
    except (RecursionError, MemoryError):
        return sys.maxsize, 1
    except (SyntaxError, ValueError):
        return None
    peak = _ast_peak(tree)
    if peak <= MAX_AST_DEPTH:
        return peak, 1  # the line is only reported for a tree that is too deep
    return _ast_peak_and_line(tree)


# Per node type, one C call that reads all its fields (ast.iter_child_nodes, a generator over a
# generator, was most of the depth check's time). ast.parse sets every field of the nodes it makes
# (absent optional ones to None), so attrgetter never meets a missing attribute.
_AST_FIELDS: dict[type, Callable[[ast.AST], tuple[object, ...]]] = {}


def _ast_fields(kind: type) -> Callable[[ast.AST], tuple[object, ...]]:
    names: tuple[str, ...] = kind._fields  # type: ignore[attr-defined]
    if len(names) == 1:
        one = operator.attrgetter(names[0])

        def getter(node: ast.AST) -> tuple[object, ...]:
            return (one(node),)
    else:
        getter = operator.attrgetter(*names) if names else (lambda node: ())
    _AST_FIELDS[kind] = getter
    return getter


def _ast_levels(tree: ast.AST) -> Iterator[list[ast.AST]]:
    """The nodes of `tree` level by level (the root's level first, fields in order), with the one-call field
    getters: a few times cheaper than ast.walk's generator over iter_child_nodes."""
    level: list[ast.AST] = [tree]
    while level:
        yield level
        below: list[ast.AST] = []
        for node in level:
            fields = _AST_FIELDS.get(type(node)) or _ast_fields(type(node))
            for value in fields(node):
                if isinstance(value, ast.AST):
                    below.append(value)
                elif isinstance(value, list):
                    below.extend(item for item in value if isinstance(item, ast.AST))
        level = below


def ast_nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node of `tree` in `ast.walk`'s order (breadth first, fields in order)."""
    return [node for level in _ast_levels(tree) for node in level]


def _ast_peak(tree: ast.AST) -> int:
    """Depth of the deepest node (the root is 0); the same nodes as ast.iter_child_nodes."""
    return sum(1 for _ in _ast_levels(tree)) - 1


def _ast_peak_and_line(tree: ast.AST) -> tuple[int, int]:
    """Deepest nesting and the line of the first node found at it (depth-first: the line reported)."""
    peak, peak_line = 0, 1
    stack: list[tuple[ast.AST, int, int]] = [(tree, 0, 1)]
    while stack:  # iterative: the tree may be too deep for a recursive walk
        node, depth, line = stack.pop()
        line = getattr(node, "lineno", line)   # `Load` contexts have none: their parent's line
        if depth > peak:
            peak, peak_line = depth, line
        stack.extend((child, depth + 1, line) for child in ast.iter_child_nodes(node))
    return peak, peak_line


def check_syntax(text: str) -> ParseFailure | bool:
    """The checks `parse_text` makes before libcst parses: a failure for nesting too deep to parse
    safely, else whether CPython's own parser accepts the text."""
    measured = _ast_depth(text)
    if measured is not None and measured[0] > MAX_AST_DEPTH:
        shown = "too" if measured[0] == sys.maxsize else f"{measured[0]:,}"
        return ParseFailure(f"syntax tree nested {shown} deep: CPython rejects it too (it accepts about "
                            f"{MAX_AST_DEPTH:,}); not linted", measured[1])
    if measured is None:
        # Deeply nested brackets would overflow the C stack inside libcst's parser: refuse them up front.
        depth, line = _bracket_depth(text)
        if depth > MAX_NESTING:
            return ParseFailure(f"brackets nested {depth} deep (limit {MAX_NESTING}); not linted", line)
        # CPython rejected the text, so its depth is unknown and libcst gets it (newer syntax may be fine
        # there). An operator chain of 50,000 terms with a syntax error after it segfaulted libcst's native
        # parser before it reached the error (benchmarks/fuzz.py seed 23): such a file is refused here.
        chain, line = _longest_operator_chain(text)
        if chain > MAX_OPERATOR_CHAIN:
            error = _cpython_syntax_error(text)
            if error is not None:   # CPython's message and place, as for any syntax error (parse_text)
                return ParseFailure(f"syntax error: {error.msg}", error.lineno or 1, max(0, (error.offset or 1) - 1))
            return ParseFailure(f"an expression of {chain:,} operators (limit {MAX_OPERATOR_CHAIN:,}); not linted",
                                line)
    return measured is not None


# Operators in one statement that libcst may meet without CPython's depth check (see check_syntax); the
# 8,000-term chain that segfaulted is far above it, real kernels are far below.
MAX_OPERATOR_CHAIN = 1_000


def _longest_operator_chain(text: str) -> tuple[int, int]:
    """Most operator tokens in one logical line, and that line (tokenize reads text CPython cannot parse)."""
    best, best_line, count, start = 0, 1, 0, 1
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type in (tokenize.NEWLINE, tokenize.ENDMARKER):
                count, start = 0, tok.end[0] + 1
            elif tok.type == tokenize.OP and tok.string not in "()[]{},:;.=":
                count += 1
                if count > best:
                    best, best_line = count, start
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass   # what was read so far is what counts: the rest is what CPython rejected
    return best, best_line


def _cpython_syntax_error(text: str) -> SyntaxError | None:
    try:
        ast.parse(text)
    except SyntaxError as exc:
        return exc
    except (ValueError, RecursionError, MemoryError):
        return None
    return None


def parse_text(text: str, reuse: StatementCache | None = None) -> ParsedSource | ParseFailure:
    """`reuse`: the language server's statements of the document's previous text (kernlint.frontend.cst_reuse);
    the chunks of `text` it holds are not parsed again."""
    checked = check_syntax(text)
    if isinstance(checked, ParseFailure):
        return checked
    import libcst as cst

    if reuse is not None and checked:
        assembled = reuse.module(text, parse_ast(text))
        if assembled is not None:
            return ParsedSource(text, assembled)

    try:
        module = run_deep(cst.parse_module, text)   # a no-op hop when already on the deep-stack thread
    except cst.ParserSyntaxError as exc:
        cpython = _cpython_syntax_error(text)
        if cpython is not None:
            # CPython's message and position: libcst's point one or two lines past the error (where its
            # parser gave up) and name tokens, not the mistake ("expected ':'", "'(' was never closed")
            return ParseFailure(f"syntax error: {cpython.msg}", cpython.lineno or 1, max(0, (cpython.offset or 1) - 1))
        first = str(exc.message).splitlines()[0] if str(exc.message) else "invalid syntax"
        return ParseFailure(f"syntax error: {first}", exc.raw_line, exc.raw_column)
    except (RecursionError, MemoryError):
        return ParseFailure("expression nesting too deep to parse; not linted")
    except Exception as exc:  # libcst raises a few other types on exotic input; never crash the run
        return ParseFailure(f"cannot parse: {type(exc).__name__}: {exc}")
    return ParsedSource(text, module)


def parse_bytes(data: bytes) -> ParsedSource | ParseFailure:
    text = decode_source(data)
    if isinstance(text, ParseFailure):
        return text
    return parse_text(text)
