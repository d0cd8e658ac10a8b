"""The wheel: built from a snapshot of the tree, installed into a fresh virtual environment, smoke-tested.

The wheel is built without build isolation (setuptools is already here) and installed with --no-deps; its
dependencies (libcst, rich) are made visible through a .pth file naming the directories they are installed
in, so the test needs no package index. A .pth-added directory does not run the .pth files inside it, so
the editable kernlint of the development environment cannot shadow the wheel (checked below).
"""
from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="needs a git checkout"),
    pytest.mark.skipif(importlib.util.find_spec("setuptools") is None, reason="needs setuptools to build"),
]


def _snapshot(dest: Path) -> Path:
    """Tracked files and untracked ones git would not ignore: what a clone plus new work would hold."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            check=True, capture_output=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        if (ROOT / name).is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, dest / name)
    return dest


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("wheel")
    src = _snapshot(work / "src")
    dist = work / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                    str(dist), str(src)], check=True, capture_output=True, text=True, timeout=300)
    wheels = list(dist.glob("kernlint-*.whl"))
    assert len(wheels) == 1, wheels
    names = zipfile.ZipFile(wheels[0]).namelist()
    # the rules ship as kernlint.rules, with the package data rules read
    assert "kernlint/rules/shared_memory_overflow.py" in names and "kernlint/cli/commands.py" in names
    assert not any(n.startswith(("tests/", "benchmarks/", "examples/")) for n in names)
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    py = venv / "bin" / "python"
    site = Path(subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               check=True, capture_output=True, text=True).stdout.strip())
    deps = {str(Path(importlib.util.find_spec(m).origin).parent.parent)  # type: ignore[arg-type]
            for m in ("libcst", "rich", "yaml", "typing_extensions") if importlib.util.find_spec(m)}
    (site / "kernlint_test_deps.pth").write_text("\n".join(sorted(deps)) + "\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "--no-deps", "-q", str(wheels[0])],
                   check=True, capture_output=True, text=True, timeout=300)
    return venv


def _run(venv: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return subprocess.run(list(args), cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_the_installed_wheel_is_the_one_imported(installed: Path, tmp_path: Path) -> None:
    r = _run(installed, str(installed / "bin" / "python"), "-c",
             "import kernlint, importlib.metadata as m; print(kernlint.__file__); "
             "print([e.value for e in m.entry_points(group='kernlint.rules')])", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    where, entry_points = r.stdout.splitlines()
    assert where.startswith(str(installed)), where
    assert entry_points == "['kernlint.rules']"


def test_version_rules_and_check_from_the_wheel(installed: Path, tmp_path: Path) -> None:
    kernlint = str(installed / "bin" / "kernlint")
    version = _run(installed, kernlint, "--version", cwd=tmp_path)
    assert version.returncode == 0 and "0.1.0" in version.stdout, version.stdout + version.stderr
    rules = _run(installed, kernlint, "rule", "--all", cwd=tmp_path)
    assert rules.returncode == 0, rules.stderr
    for code in ("KL001", "KL101", "KL201", "KL401", "KL501"):
        assert f"({code})" in rules.stdout
    shutil.copy(ROOT / "examples" / "vector_add.py", tmp_path / "vector_add.py")
    check = _run(installed, kernlint, "check", "--no-cache", "vector_add.py", cwd=tmp_path)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "All checks passed: 1 file(s), 1 kernel(s), 1 estimate(s)." in check.stdout
    # a finding exits 1 from the installed script too
    (tmp_path / "bad.py").write_text((ROOT / "examples" / "vector_add.py").read_text()
                                     .replace("BLOCK_SIZE=1024", "BLOCK_SIZE=1000"))
    bad = _run(installed, kernlint, "check", "--no-cache", "bad.py", cwd=tmp_path)
    assert bad.returncode == 1 and "KL301" in bad.stdout, bad.stdout + bad.stderr
