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

ROOT = Path(__file__).resolve().parent.parent
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


def _try_repo(cwd: Path, hook_repo: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pre_commit", "try-repo", str(hook_repo), "kernlint", "--files",
                           "kernels/add.py", "--color", "never"], cwd=cwd, env=env, capture_output=True,
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
