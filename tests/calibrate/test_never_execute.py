"""`kernlint calibrate` never runs code of the kernel file it did not need to compile (docs/security.md).

Each vector is a small kernel file whose payload, if any of it ran, would create a sentinel file. The
scratch module holds only literals kernlint evaluated, a body that names a way into Python is refused, and
the compile worker starts isolated under an audit hook. Each test asserts no sentinel appears and the
config is reported as not compiled with the reason (or compiled, with the value kernlint evaluated).
"""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kernlint.calibrate.scratch import build_scratch, find_kernel, source_tree_for

HAS_TRITON = __import__("importlib").util.find_spec("triton") is not None
KERNLINT = Path(sys.executable).parent / "kernlint"
needs_triton = pytest.mark.skipif(not HAS_TRITON or not KERNLINT.exists(), reason="calibrate needs Triton and the "
                                  "installed kernlint script")

HEAD = "import triton\nimport triton.language as tl\n"
BODY = """
    offs = tl.arange(0, B)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(x_ptr + offs, x * {scale}, mask=offs < n)
"""


def kernel(params: str = "x_ptr, n, B: tl.constexpr", scale: str = "2", deco: str = "@triton.jit",
           body: str | None = None) -> str:
    return f"{deco}\ndef k({params}):" + textwrap.indent(textwrap.dedent(body or BODY.format(scale=scale)), "    ")


def payload(sentinel: Path) -> str:
    return f'__import__("os").system("touch {sentinel}")'


# name → (files, whether a config may compile); SENT is replaced by the sentinel path
VECTORS: dict[str, tuple[dict[str, str], bool]] = {
    "constant __import__": ({"k.py": HEAD + "SCALE = PAYLOAD or 2\n" + kernel(scale="SCALE")}, False),
    "constant triton.knobs.os": ({"k.py": HEAD + 'SCALE = triton.knobs.os.system("touch SENT") or 2\n'
                                  + kernel(scale="SCALE")}, False),
    "constexpr of tl.core.builtins": ({"k.py": HEAD + 'SCALE = tl.constexpr(tl.core.builtins.__import__("os")'
                                       '.system("touch SENT") or 2)\n' + kernel(scale="SCALE")}, False),
    "lambda constant": ({"k.py": HEAD + "F = lambda: PAYLOAD\nSCALE = F()\n" + kernel(scale="SCALE")}, False),
    "constant bound in if": ({"k.py": HEAD + "if True:\n    SCALE = PAYLOAD or 2\nelse:\n    SCALE = 2\n"
                              + kernel(scale="SCALE")}, False),
    "constant bound in try": ({"k.py": HEAD + "try:\n    SCALE = tl.constexpr(PAYLOAD or 2)\nexcept Exception:\n"
                               "    pass\n" + kernel(scale="SCALE")}, False),
    "constant in a helper module": ({
        "pkg/__init__.py": "",
        "pkg/helpers.py": HEAD + "FACTOR = tl.constexpr(PAYLOAD or 3)\n"
                          "@triton.jit\ndef twice(x):\n    return x * FACTOR\n",
        "pkg/k.py": HEAD + "from pkg.helpers import twice\n" + kernel(scale="twice(1)"),
    }, False),
    "kernel default": ({"k.py": HEAD + kernel(params="x_ptr, n, B: tl.constexpr = PAYLOAD or 64")}, False),
    "helper default": ({"k.py": HEAD + "@triton.jit\ndef h(x, s=PAYLOAD or 2):\n    return x * s\n"
                        + kernel(scale="h(1)")}, False),
    "annotations": ({"k.py": HEAD + kernel(params="x_ptr: PAYLOAD or 1, n: 'int', B: tl.constexpr")
                     .replace("):", ") -> PAYLOAD:", 1)}, True),
    "@triton.jit arguments": ({"k.py": HEAD + kernel(deco="@triton.jit(debug=PAYLOAD or False)")}, False),
    "@triton.jit launch-only argument": ({"k.py": HEAD + kernel(deco="@triton.jit(repr=lambda _: PAYLOAD)")},
                                         True),
    "getattr in the body": ({"k.py": HEAD + kernel(body="""
        getattr(getattr(tl.core, "builtins"), "__import__")("os").system("touch SENT")
        offs = tl.arange(0, B)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs))
    """)}, False),
    "triton.knobs.os in the body": ({"k.py": HEAD + kernel(body="""
        triton.knobs.os.system("touch SENT")
        offs = tl.arange(0, B)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs))
    """)}, False),
    "getattr shadowed by a local": ({"k.py": HEAD + kernel(body="""
        getattr = getattr
        g = getattr(tl.core, "builtins")
        offs = tl.arange(0, B)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs))
    """)}, False),
    "import of triton.knobs.os": ({"k.py": HEAD + "from triton.knobs import os as tos\n" + kernel(body="""
        tos.system("touch SENT")
        offs = tl.arange(0, B)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs))
    """)}, False),
}


def _write(tmp: Path, files: dict[str, str], sentinel: Path) -> Path:
    main = None
    for rel, text in files.items():
        path = tmp / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.replace("PAYLOAD", payload(sentinel)).replace("SENT", str(sentinel)))
        main = rel if rel.endswith("k.py") else main
    assert main is not None
    return Path(main)


@pytest.mark.parametrize("name", list(VECTORS))
def test_the_scratch_module_holds_no_payload(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files, _ = VECTORS[name]
    sentinel = tmp_path / "SENTINEL"
    monkeypatch.chdir(tmp_path)
    rel = _write(tmp_path, files, sentinel)
    tree, pm = source_tree_for(str(rel))
    scratch = build_scratch(tree, pm, find_kernel(pm, "k"))
    assert "system" not in scratch.source.replace("# refused:", "").split("# refused")[0] or scratch.refused
    code_lines = [ln for ln in scratch.source.splitlines() if not ln.startswith("#")]
    assert not any("system" in ln or "__import__" in ln or "lambda" in ln for ln in code_lines), scratch.source


@needs_triton
@pytest.mark.parametrize("name", list(VECTORS))
def test_calibrate_runs_no_payload(name: str, tmp_path: Path) -> None:
    files, may_compile = VECTORS[name]
    sentinel = tmp_path / "SENTINEL"
    rel = _write(tmp_path, files, sentinel)
    proc = subprocess.run([str(KERNLINT), "calibrate", f"{rel}::k", "--arg", "*=*fp32",
                           "--config", "B=128", "--no-cache", "--json"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert not sentinel.exists(), f"{name}: the payload ran"
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    rows = [r for r in json.loads(proc.stdout)["rows"]]
    assert rows
    if may_compile:
        assert all(r["error"] is None and r["truth"]["regs"] for r in rows), rows
    else:
        assert all(r["error"] and "not compiled" in r["error"] for r in rows), rows


@needs_triton
def test_a_json_or_queue_module_in_the_cwd_is_never_imported(tmp_path: Path) -> None:
    sentinel = tmp_path / "SENTINEL"
    for mod in ("json", "queue", "triton_compile", "sandbox"):
        (tmp_path / f"{mod}.py").write_text(f"import os\nos.system('touch {sentinel}')\n")
    (tmp_path / "k.py").write_text(HEAD + kernel())
    # the installed `kernlint` script (`python -m` would put the cwd on the CLI's own sys.path)
    proc = subprocess.run([str(KERNLINT), "calibrate", "k.py", "--arg", "*=*fp32", "--config", "B=128", "--no-cache",
                           "--json"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert not sentinel.exists()
    (row,) = json.loads(proc.stdout)["rows"]
    assert row["error"] is None and row["truth"]["regs"] > 0


@needs_triton
def test_the_audit_hook_refuses_what_gets_past_the_scratch_checks(tmp_path: Path) -> None:
    """A scratch module is only ever written by kernlint; this one is hand-written to stand for a body that
    got past body_refusal: the worker's audit hook must refuse each of its side effects."""
    from kernlint.calibrate.worker import WorkerPool
    sentinel = tmp_path / "SENTINEL"
    mods = {
        "spawn": f"import os\nos.system('touch {sentinel}')\n",
        "subprocess": f"import subprocess\nsubprocess.run(['touch', '{sentinel}'])\n",
        "write": f"open('{sentinel}', 'w').write('x')\n",
        "socket": "import socket\nsocket.socket().connect(('127.0.0.1', 9))\n",
        "import": "import sqlite3\n",
    }
    with WorkerPool(jobs=1) as pool:
        pool.environment()
        for what, text in mods.items():
            path = tmp_path / f"scratch_{what}.py"
            path.write_text(text + HEAD + kernel())
            res = pool.request({"op": "compile", "module": str(path), "kernel": "k", "args": {"x_ptr": "*fp32", "n": 1000},
                                "constexprs": {"B": 128}, "config": {"num_warps": 4}, "cap": 90, "timeout": 60})
            assert "refused by calibrate's sandbox" in (res["error"] or ""), (what, res)
            assert not sentinel.exists(), what
        ok = tmp_path / "scratch_ok.py"
        ok.write_text(HEAD + kernel())
        res = pool.request({"op": "compile", "module": str(ok), "kernel": "k", "args": {"x_ptr": "*fp32", "n": 1000},
                            "constexprs": {"B": 128}, "config": {"num_warps": 4}, "cap": 100, "timeout": 60})
        assert res["error"] is None and res["regs"] > 0    # ptxas-blackwell still runs under the hook


@pytest.mark.parametrize("body, refused", [
    ("x = tl.load(p)\ntl.store(p, x.to(tl.float16))", False),
    ("input = tl.load(p)\ntl.store(p, input)", False),          # a builtin's name as a local
    ("id = tl.program_id(0)\ntl.store(p + id, 1.0)", False),
    ("tl.store(p, type(p))", True),
    ("tl.store(p, p.__class__)", True),
    ("tl.store(p, eval('1'))", True),
    ("v = vars()\ntl.store(p, 1.0)", True),
    ("tl.store(p, tl.core.os)", True),
])
def test_body_allow_list(body: str, refused: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "k.py").write_text(HEAD + "@triton.jit\ndef k(p):\n" + textwrap.indent(body, "    ") + "\n")
    tree, pm = source_tree_for("k.py")
    scratch = build_scratch(tree, pm, find_kernel(pm, "k"))
    assert bool(scratch.refused) is refused, scratch.refused


HAS_TORCH = HAS_TRITON and __import__("importlib").util.find_spec("torch") is not None


@pytest.mark.skipif(not HAS_TORCH, reason="--verify needs triton and torch")
@pytest.mark.parametrize("payload_src", [
    "import os\nos.system('touch SENT')\n",
    "open('SENT', 'w').write('x')\n",
])
def test_the_verify_child_refuses_what_gets_past_the_scratch_checks(payload_src: str, tmp_path: Path) -> None:
    """`recommend --verify` runs the kernel under the interpreter: its child is isolated and hooked like
    calibrate's workers (a hand-written scratch source stands for a body that got past body_refusal)."""
    from kernlint.recommend.verify import _child
    sentinel = tmp_path / "SENTINEL"
    source = payload_src.replace("SENT", str(sentinel)) + HEAD + kernel()
    resp = _child(sys.executable, {"op": "verify", "source": source, "kernel": "k", "seed": 0, "tolerance": {},
                                   "args": [{"name": "x_ptr", "kind": "pointer", "dtype": "fp32", "numel": 256},
                                            {"name": "n", "kind": "scalar", "value": 100}],
                                   "runs": [{"label": "B=128", "constexprs": {"B": 128}, "grid": [1]}]})
    assert not sentinel.exists()
    assert "refused by calibrate's sandbox" in str(resp.get("author_error")), resp


@pytest.mark.skipif(not HAS_TORCH, reason="--verify needs triton and torch")
def test_the_verify_child_still_runs_a_benign_kernel(tmp_path: Path) -> None:
    from kernlint.recommend.verify import _child
    resp = _child(sys.executable, {"op": "verify", "source": HEAD + kernel(), "kernel": "k", "seed": 0,
                                   "tolerance": {"fp32": [1e-4, 1e-4]},
                                   "args": [{"name": "x_ptr", "kind": "pointer", "dtype": "fp32", "numel": 256},
                                            {"name": "n", "kind": "scalar", "value": 100}],
                                   "runs": [{"label": "B=128", "constexprs": {"B": 128}, "grid": [1]},
                                            {"label": "B=256", "constexprs": {"B": 256}, "grid": [1]}]})
    assert resp == {"results": [None]}, resp


@pytest.mark.skipif(not HAS_TORCH, reason="--verify needs triton and torch")
@pytest.mark.parametrize("name", list(VECTORS))
def test_verify_runs_no_payload(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every vector through `recommend --verify`'s own path: the request is built from the linted kernel (the
    scratch module, refused where the body reaches Python) and, where it is built, run in the isolated child."""
    from kernlint.pipeline.api import Settings, lint_paths
    from kernlint.recommend.verify import NotVerifiable, _run_runs, build_request

    files, may_compile = VECTORS[name]
    sentinel = tmp_path / "SENTINEL"
    monkeypatch.chdir(tmp_path)
    rel = _write(tmp_path, files, sentinel)
    with (tmp_path / rel).open("a", encoding="utf-8") as fh:   # a launch site, so the grid is known
        fh.write("\n\ndef launch(x, n):\n    k[(1,)](x, n, B=128)\n")
    res = lint_paths([str(rel)], Settings(targets=("h100",)))
    kernel = next(k for f in res.files for k in f.kernels if k.jit.name == "k")
    try:
        request, _ = build_request(kernel, {"n": 100, "B": 128}, [{"B": 256}], {"*": "*fp32"})
    except NotVerifiable as exc:
        assert not may_compile, f"{name}: refused although nothing in it runs: {exc}"
        assert not sentinel.exists()
        return
    try:
        verdicts: list[str | None] | None = _run_runs(sys.executable, request)
    except NotVerifiable:   # a constant left out of the scratch module: the interpreter run fails, nothing runs
        verdicts = None
    assert not sentinel.exists(), f"{name}: the payload ran"
    if may_compile:
        # the kernel really ran in the child: one verdict for the one candidate (its results compared)
        assert verdicts is not None and len(verdicts) == 1, verdicts
