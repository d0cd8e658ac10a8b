"""The shipped Triton API table, `triton-version`, and the API-misuse rules (KL310-KL313) against real Triton."""
from __future__ import annotations

import importlib.util
import json
import sys

import pytest

from conftest import ROOT
from kernlint.pipeline.api import Settings, lint_source
from kernlint.frontend.triton_api import PACKAGE, TABLE, load, release_error, release_key
from kernlint.pipeline.registry import rule_by_code
from kernlint.pipeline.settings import SettingsError, parse_table

RAW = json.loads(TABLE.read_text(encoding="utf-8"))
API_CODES = ("KL310", "KL311", "KL312", "KL313")


def test_table_records_how_it_was_generated() -> None:
    assert RAW["generated_by"] == "benchmarks/triton_api_table.py"
    versions = [w["version"] for w in RAW["wheels"]]
    for minor in ("3.2", "3.3", "3.4", "3.5", "3.6", "3.7", "3.8", "3.9"):   # issue 33: 3.2 to 3.9 at least
        assert any(v.startswith(minor + ".") for v in versions)
    assert all(len(w["sha256"]) == 64 and w["wheel"].endswith(".whl") for w in RAW["wheels"])
    # the generator pins the same wheels it recorded
    text = (ROOT / "benchmarks" / "triton_api_table.py").read_text(encoding="utf-8")
    assert all(w["sha256"] in text and w["wheel"] in text for w in RAW["wheels"])
    assert TABLE.stat().st_size < 400_000   # shipped with every install: a few hundred KB at most


def test_cdiv_everywhere_libdevice_gone_in_3x() -> None:
    api = load()
    assert api.newest == "3.9"
    for release in api.releases:
        cdiv = api.member(PACKAGE, "cdiv", release)
        assert cdiv is not None and cdiv.kind == "function" and cdiv.params == ("x", "div")
        assert api.member(PACKAGE, "float32", release).kind == "dtype"   # type: ignore[union-attr]
        assert api.member(PACKAGE, "cidv", release) is None
        if release.startswith("3."):
            assert api.member(PACKAGE, "libdevice", release) is None
            assert api.member(f"{PACKAGE}.math", "erf", release) is not None
    assert api.member(PACKAGE, "libdevice", "2.0").kind == "module"   # type: ignore[union-attr]
    assert api.releases_with(PACKAGE, "libdevice") == ("2.0",)
    assert "erf" in api.members(f"{PACKAGE}.extra.cuda.libdevice", "3.9")


def test_keyword_parameters_come_from_the_defs() -> None:
    api = load()
    load_ = api.member(PACKAGE, "load", "3.4")
    assert load_ is not None and {"mask", "other", "cache_modifier", "eviction_policy"} <= load_.keywords()  # type: ignore[operator]
    assert "boundary_check" in load_.keywords()   # type: ignore[operator]
    # block pointers were removed in 3.9: tl.load lost boundary_check/padding_option and tl.advance is unexported
    assert "boundary_check" not in api.member(PACKAGE, "load", "3.9").keywords()   # type: ignore[union-attr, operator]
    assert api.member(PACKAGE, "advance", "3.9") is None and api.member(PACKAGE, "advance", "3.8") is not None
    range_ = api.member(PACKAGE, "range", "3.9")
    assert range_ is not None and range_.kind == "class" and "num_stages" in range_.keywords()   # type: ignore[operator]


def test_triton_version_setting() -> None:
    assert parse_table({"triton-version": "3.4"}, "pyproject.toml", ".")["triton_version"] == "3.4"
    assert release_key("3.4.1") == "3.4" and release_key(None) == "3.9"
    assert release_error("3.4") is None
    with pytest.raises(SettingsError, match="unknown Triton release '4.0'"):
        parse_table({"triton-version": "4.0"}, "pyproject.toml", ".")
    with pytest.raises(SettingsError, match="must be a string"):
        parse_table({"triton-version": 3.4}, "pyproject.toml", ".")


ADVANCE = '''import triton
import triton.language as tl


@triton.jit
def walk(p_ptr, M, N, BLOCK: tl.constexpr):
    p = tl.make_block_ptr(p_ptr, (M, N), (N, 1), (0, 0), (BLOCK, BLOCK), (1, 0))
    x = tl.load(p, boundary_check=(0, 1))
    p = tl.advance(p, (BLOCK, 0))
    tl.store(p, x, boundary_check=(0, 1))
'''


def _codes(source: str, **settings: object) -> list[tuple[int, str]]:
    result = lint_source(source, "case.py", Settings(select=API_CODES, **settings))  # type: ignore[arg-type]
    return sorted((d.span.start.line, d.code) for d in result.diagnostics)


def test_triton_version_selects_the_release() -> None:
    # Triton 3.9 removed block pointers; 3.8 has them, so with no release pinned (every Triton 3 is a
    # reading of the source) they are not an error
    assert _codes(ADVANCE, triton_version="3.9") == [(8, "KL313"), (9, "KL311"), (10, "KL313")]
    assert _codes(ADVANCE, triton_version="3.8") == []
    assert _codes(ADVANCE) == []
    warp_spec = ADVANCE.replace("    x = tl.load(p, boundary_check=(0, 1))\n",
                                "    for i in tl.range(0, M, warp_specialize=True):\n        pass\n")
    assert (8, "KL313") in _codes(warp_spec, triton_version="3.2")    # warp_specialize is newer than 3.2
    assert (8, "KL313") not in _codes(warp_spec, triton_version="3.8")


def test_messages_suggest_the_fix() -> None:
    src = rule_by_code("KL311").INVALID[0].source   # type: ignore[union-attr]
    [d] = lint_source(src, "case.py", Settings(select=("KL311",))).diagnostics
    assert "only in 2.0" in d.message and "`tl.math.erf`" in d.message and "`tl.extra.cuda.libdevice.erf`" in d.message
    src = rule_by_code("KL310").INVALID[0].source   # type: ignore[union-attr]
    [d] = lint_source(src, "case.py", Settings(select=("KL310",))).diagnostics
    assert "did you mean `tl.cdiv`?" in d.message and d.span.end.col - d.span.start.col == len("tl.cidv")
    src = rule_by_code("KL312").INVALID[0].source   # type: ignore[union-attr]
    [d] = lint_source(src, "case.py", Settings(select=("KL312",))).diagnostics
    assert "`tl.load(x_ptr + offs).to(tl.float32)`" in d.message


@pytest.mark.parametrize("spelling", ["import triton.language as tl", "from triton import language as tl",
                                      "import triton.language as language\ntl = None"])
def test_tl_resolved_however_imported(spelling: str) -> None:
    src = f"import triton\n{spelling}\n\n\n@triton.jit\ndef k(out_ptr, n):\n    tl.store(out_ptr, tl.cidv(n, 4))\n"
    found = _codes(src)
    # bound twice (an import and an assignment): which one holds is decided at run time, so nothing is certain
    assert found == ([] if "tl = None" in spelling else [(7, "KL310")])


def test_from_imports_and_guards() -> None:
    src = ("import triton\nfrom triton.language import cdiv, load\n\n\n@triton.jit\n"
           "def k(p, n):\n    x = load(p, msk=n)\n    return cdiv(x, 2)\n")
    assert _codes(src) == [(7, "KL313")]
    guarded = ("import triton\nimport triton.language as tl\nNEW = True\n\n\n@triton.jit\ndef k(p, n):\n"
               "    if NEW:\n        x = tl.load(p)\n    else:\n        x = tl.libdevice.erf(tl.load(p))\n"
               "    tl.store(p, tl.cidv(x, 2))\n")
    # under a branch on a global only what no release has is an error; the unguarded typo still is
    assert _codes(guarded) == [(12, "KL310")]


# -- truth: the rules' examples really fail (and the fixed ones compile) with the installed Triton ------------

def _compile(source: str, tmp_path, name: str) -> None:  # type: ignore[no-untyped-def]
    triton = pytest.importorskip("triton")
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    path = tmp_path / f"{name}.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)   # type: ignore[arg-type]
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)   # type: ignore[union-attr]
        fn = next(v for v in vars(module).values() if isinstance(v, triton.runtime.jit.JITFunction))
        sig = {a: "constexpr" if p.is_constexpr else "*fp32" if a.endswith("_ptr") else "i32"
               for a, p in zip(fn.arg_names, fn.params)}
        cx = {a: 128 for a, p in zip(fn.arg_names, fn.params) if p.is_constexpr}
        triton.compile(ASTSource(fn, sig, cx), target=GPUTarget("cuda", 90, 32))
    finally:
        sys.modules.pop(name, None)


# (rule, example, what Triton's error names)
COMPILED = [("KL310", 0, "cidv"), ("KL311", 0, "libdevice"), ("KL312", 0, "not callable"), ("KL313", 0, "msk")]


@pytest.mark.parametrize("code,index,says", COMPILED, ids=[c for c, _, _ in COMPILED])
def test_examples_agree_with_triton(code: str, index: int, says: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("triton")
    import triton

    if ".".join(triton.__version__.split(".")[:2]) != load().newest:
        pytest.skip("the examples are judged against the newest release in the table")
    rule = rule_by_code(code)
    assert rule is not None
    _compile(rule.VALID[index].source, tmp_path, f"valid_{code}")
    with pytest.raises(Exception) as err:
        _compile(rule.INVALID[index].source, tmp_path, f"invalid_{code}")
    assert says in str(err.value), repr(err.value)


def test_block_pointers_really_fail_on_the_newest_release(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Why the corpus's block-pointer code (fla, flag-gems) is flagged under the default release."""
    pytest.importorskip("triton")
    import triton

    if ".".join(triton.__version__.split(".")[:2]) != "3.9":
        pytest.skip("block pointers were removed in 3.9")
    with pytest.raises(Exception) as err:
        _compile(ADVANCE, tmp_path, "advance_case")
    assert "boundary_check" in str(err.value) or "Block pointers" in str(err.value), repr(err.value)


def test_cli_triton_version(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    from kernlint.cli import main

    (tmp_path / "walk.py").write_text(ADVANCE, encoding="utf-8")
    args = ["check", "--no-cache", "--select", "KL31", str(tmp_path / "walk.py")]
    assert main(args) == 0                                  # no release pinned: 3.0-3.8 have block pointers
    assert main([*args, "--triton-version", "3.9"]) == 1    # 3.9 removed them
    assert main([*args, "--triton-version", "3.8"]) == 0
    assert main([*args, "--triton-version", "4.1"]) == 2    # a release the table does not know: tool error
    assert "unknown Triton release '4.1'" in capsys.readouterr().err
    (tmp_path / "pyproject.toml").write_text('[tool.kernlint]\ntriton-version = "3.9"\n', encoding="utf-8")
    assert main(args) == 1


def test_dtype_call_on_a_python_number_suggests_a_typed_scalar() -> None:
    # liger-kernel 0.8.5 ops/softmax.py: `m = tl.float32(-float("inf"))`; Triton 3.9 says "'dtype' object is
    # not callable" (compiled by hand), and a Python float has no `.to`
    src = ("import triton\nimport triton.language as tl\n\n\n@triton.jit\ndef k(out_ptr):\n"
           "    m = tl.float32(-float(\"inf\"))\n    tl.store(out_ptr, m)\n")
    [d] = lint_source(src, "case.py", Settings(select=("KL312",))).diagnostics
    assert "`tl.full((), -float(\"inf\"), tl.float32)`" in d.message
