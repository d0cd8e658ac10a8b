"""The `kernlint` hook of .pre-commit-hooks.yaml through the real `pre-commit try-repo`.

pre-commit builds the hook repository into its own virtualenv (pip, from PyPI for libcst and rich), exactly
as a user's `.pre-commit-config.yaml` would. The hook repository is a committed snapshot of this working
tree (tracked and untracked-but-not-ignored files): try-repo on a dirty checkout would only carry tracked
changes, so a new, not yet added module would be missing from the hook env. The hook env lives in a
temporary PRE_COMMIT_HOME so the user's cache is neither used nor polluted.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pre_commit", reason="pre-commit is not installed (it is in the test extra)")

ROOT = Path(__file__).resolve().parents[2]
KERNEL = '''import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, n):
    offs = tl.program_id(0) * 48 + tl.arange(0, 48)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


def add(x, y, n):
    add_kernel[(triton.cdiv(n, 48),)](x, y, n, num_warps=4)
'''

SCALE_KERNEL = '''import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)
'''
SCALE_LAUNCH = '''from kernels.scale import scale_kernel


def scale(x, n):
    scale_kernel[(n // 48 + 1,)](x, n, BLOCK=48)
'''

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed"),
    pytest.mark.skipif(not (ROOT / ".git").exists(), reason="not a git checkout: try-repo needs one"),
]


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)


def _snapshot(dest: Path) -> Path:
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            check=True, capture_output=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        src = ROOT / name
        if src.is_file():      # a tracked file deleted in the working tree is simply absent
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    _git(dest, "init", "-q")
    _git(dest, "add", "-A")
    _git(dest, "-c", "user.name=kernlint-test", "-c", "user.email=test@kernlint.invalid", "commit", "-q", "-m", "snapshot")
    return dest


def _try_repo(cwd: Path, hook_repo: Path, env: dict[str, str], hook: str = "kernlint",
              path: str = "kernels/add.py") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pre_commit", "try-repo", str(hook_repo), hook, "--files",
                           path, "--color", "never"], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=900)


def test_hook_fails_on_a_finding_and_passes_after_the_fix(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "kernels").mkdir(parents=True)
    kernel = project / "kernels" / "add.py"
    kernel.write_text(KERNEL, encoding="utf-8")
    _git(project, "init", "-q")
    _git(project, "add", "kernels/add.py")
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"), "NO_COLOR": "1"}
    hook_repo = _snapshot(tmp_path / "kernlint-repo")

    failing = _try_repo(project, hook_repo, env)
    out = failing.stdout + failing.stderr
    assert failing.returncode == 1, out
    assert "kernlint" in out and "Failed" in out
    assert "KL301" in out and "kernels/add.py:7" in out

    kernel.write_text(KERNEL.replace("48", "64"), encoding="utf-8")
    _git(project, "add", "kernels/add.py")
    passing = _try_repo(project, hook_repo, env)
    assert passing.returncode == 0, passing.stdout + passing.stderr
    assert "Passed" in passing.stdout
    # The hook env was built under the temporary PRE_COMMIT_HOME, not the user's cache.
    assert any((tmp_path / "pre-commit-home").iterdir())

    # A kernel and the file that launches it with a bad block size, among other files: pre-commit must not
    # split them over parallel processes (require_serial), or neither process sees the finding
    (project / "kernels" / "scale.py").write_text(SCALE_KERNEL, encoding="utf-8")
    (project / "launch.py").write_text(SCALE_LAUNCH, encoding="utf-8")
    for i in range(8):
        (project / f"m{i}.py").write_text(f"x = {i}\n", encoding="utf-8")
    _git(project, "add", "-A")
    together = subprocess.run([sys.executable, "-m", "pre_commit", "try-repo", str(hook_repo), "kernlint",
                               "--all-files", "--color", "never"], cwd=project, env=env, capture_output=True,
                              text=True, timeout=900)
    out = together.stdout + together.stderr
    assert together.returncode == 1 and "KL301" in out and "kernels/scale.py" in out, out


AUTOTUNED = '''import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64}, num_warps=8, num_stages=3),
        triton.Config({"BLOCK_M": 256, "BLOCK_N": 256, "BLOCK_K": 64}, num_warps=8, num_stages=4),
    ],
    key=["M", "N", "K"],
)
@triton.jit
def mm(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0).to(tl.int64)
    pid_n = tl.program_id(1).to(tl.int64)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        acc = tl.dot(tl.load(a_ptrs), tl.load(b_ptrs), acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * stride_bk
    tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :], acc.to(tl.float16))
'''


def test_fix_hook_drops_the_infeasible_config_then_passes(tmp_path: Path) -> None:
    """`kernlint-fix`: 4 x (256*64 + 64*256) x 2 B = 262,144 B > 232,448 B, so the second config goes."""
    project = tmp_path / "project"
    (project / "kernels").mkdir(parents=True)
    kernel = project / "kernels" / "mm.py"
    kernel.write_text(AUTOTUNED, encoding="utf-8")
    _git(project, "init", "-q")
    _git(project, "add", "kernels/mm.py")
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"), "NO_COLOR": "1"}
    hook_repo = _snapshot(tmp_path / "kernlint-repo")

    first = _try_repo(project, hook_repo, env, "kernlint-fix", "kernels/mm.py")
    assert first.returncode == 1, first.stdout + first.stderr   # pre-commit fails when a hook edits files
    fixed = kernel.read_text(encoding="utf-8")
    assert '"BLOCK_M": 256' not in fixed and '"BLOCK_M": 128' in fixed
    _git(project, "add", "kernels/mm.py")
    second = _try_repo(project, hook_repo, env, "kernlint-fix", "kernels/mm.py")
    assert second.returncode == 0, second.stdout + second.stderr
    assert kernel.read_text(encoding="utf-8") == fixed


def _readme_yaml_block(marker: str) -> str:
    """The README's ```yaml block that contains `marker`, as written."""
    import re

    blocks = re.findall(r"```yaml\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"), re.S)
    found = [b for b in blocks if marker in b]
    assert len(found) == 1, f"README has {len(found)} yaml blocks with {marker!r}"
    return found[0]


def test_readme_local_hook_snippet_works_as_written(tmp_path: Path) -> None:
    # the README's `repo: local` snippet runs the kernlint installed beside this interpreter
    project = tmp_path / "project"
    (project / "kernels").mkdir(parents=True)
    (project / "kernels" / "add.py").write_text(KERNEL, encoding="utf-8")
    (project / ".pre-commit-config.yaml").write_text(_readme_yaml_block("repo: local"), encoding="utf-8")
    _git(project, "init", "-q")
    _git(project, "add", "-A")
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"), "NO_COLOR": "1",
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    run = [sys.executable, "-m", "pre_commit", "run", "--all-files", "--color", "never"]
    failing = subprocess.run(run, cwd=project, env=env, capture_output=True, text=True, timeout=300)
    assert failing.returncode == 1 and "KL301" in failing.stdout, failing.stdout + failing.stderr
    (project / "kernels" / "add.py").write_text(KERNEL.replace("48", "64"), encoding="utf-8")
    _git(project, "add", "-A")
    passing = subprocess.run(run, cwd=project, env=env, capture_output=True, text=True, timeout=300)
    assert passing.returncode == 0 and "Passed" in passing.stdout, passing.stdout + passing.stderr


def test_readme_pinned_commit_form_installs_the_hook(tmp_path: Path) -> None:
    # `repo: <kernlint repository URL>` + `rev: <commit-sha>`, with the URL a local clone and the sha its
    # head: pre-commit builds kernlint into its own environment from that commit (no tag is needed)
    hook_repo = _snapshot(tmp_path / "kernlint-repo")
    sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=hook_repo, check=True, capture_output=True,
                         text=True).stdout.strip()
    project = tmp_path / "project"
    (project / "kernels").mkdir(parents=True)
    (project / "kernels" / "add.py").write_text(KERNEL, encoding="utf-8")
    (project / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {hook_repo}\n    rev: {sha}\n    hooks:\n      - id: kernlint\n", encoding="utf-8")
    _git(project, "init", "-q")
    _git(project, "add", "-A")
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"), "NO_COLOR": "1"}
    r = subprocess.run([sys.executable, "-m", "pre_commit", "run", "--all-files", "--color", "never"],
                       cwd=project, env=env, capture_output=True, text=True, timeout=900)
    assert r.returncode == 1 and "KL301" in r.stdout and "kernels/add.py:7" in r.stdout, r.stdout + r.stderr
