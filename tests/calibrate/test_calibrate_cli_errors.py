"""`kernlint calibrate` on bad input: damaged cache entries, pyproject settings, config typos, Ctrl-C.

Found by a review on 2026-11-30: each was a traceback, a silently wrong table or a sweep that did not stop.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kernlint.calibrate.session import Cache
from kernlint.cli import main

ROOT = Path(__file__).resolve().parents[2]
HAS_TRITON = __import__("importlib").util.find_spec("triton") is not None


@pytest.mark.parametrize("text", ["[1, 2]", "{}", '{"regs": "20", "shared": 0, "spill_store": 0}', "[" * 5000])
def test_a_damaged_cache_entry_is_a_miss(tmp_path: Path, text: str) -> None:
    cache = Cache(tmp_path)
    (tmp_path / "ab").mkdir()
    (tmp_path / "ab" / "abcdef.json").write_text(text)
    assert cache.get("abcdef") is None          # compiled again, never shown as truth
    cache.put("abcdef", {"regs": 26, "shared": 0, "spill_store": 0})
    assert cache.get("abcdef") == {"regs": 26, "shared": 0, "spill_store": 0}
    cache.put("abcdef", {"error": "CompilationError: at 2:4: ..."})
    assert cache.get("abcdef") == {"error": "CompilationError: at 2:4: ..."}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copyfile(ROOT / "examples" / "vector_add.py", tmp_path / "vector_add.py")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_broken_pyproject_is_an_error_not_the_default_types(project: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    (project / "pyproject.toml").write_text('[tool.kernlint.calibrate]\nargs = { x_ptr = "*fp32"\n')
    assert main(["calibrate", "vector_add.py"]) == 2
    assert "pyproject.toml: invalid TOML" in capsys.readouterr().err
    (project / "pyproject.toml").write_text('[tool.kernlint.calibrate]\nargs = ["x_ptr=*fp32"]\n')
    assert main(["calibrate", "vector_add.py"]) == 2
    assert "`tool.kernlint.calibrate.args` must be a table" in capsys.readouterr().err


def test_project_wide_args_for_other_kernels_do_not_block_this_one(project: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    # `a_ptr` belongs to another kernel of the project: `check` ignores it here, calibrate said
    # "--arg a_ptr: vector_add_kernel has no argument 'a_ptr'" although no --arg was given
    (project / "pyproject.toml").write_text('[tool.kernlint]\nargs = { a_ptr = "*bf16" }\n')
    main(["calibrate", "vector_add.py", "--config", "BLOCK_SIZE=64", "--no-progress"])
    assert "has no argument 'a_ptr'" not in capsys.readouterr().err


def test_a_config_key_the_kernel_does_not_have_is_named(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["calibrate", "vector_add.py", "--config", "BLOCK_Q=3"]) == 2
    assert "the kernel has no argument 'BLOCK_Q'" in capsys.readouterr().err
    assert main(["calibrate", "vector_add.py", "--anchor-config", "garbage"]) == 2
    assert "bad --anchor-config item 'garbage'" in capsys.readouterr().err


@pytest.mark.skipif(not HAS_TRITON or not hasattr(os, "killpg") or not Path("/proc/self/environ").exists(),
                    reason="needs Triton (live compiles) and POSIX signals")
def test_ctrl_c_stops_a_sweep_at_once_without_a_traceback(project: Path) -> None:
    # the workers shared the terminal's process group: each died of the SIGINT, was replaced, and the sweep
    # compiled on for 5-13 s before a KeyboardInterrupt traceback
    shutil.copyfile(ROOT / "examples" / "matmul.py", project / "matmul.py")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "kernlint", "calibrate", "matmul.py", "--sweep", "--no-cache",
                             "--no-progress", "-j", "2", "--max-configs", "48"], cwd=project, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            # as from a shell: SIGINT not ignored, even if this test process inherited it ignored
                            # (CI started without a terminal: the sweep never saw the Ctrl-C and finished)
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 60
    workers: set[int] = set()
    while time.monotonic() < deadline and not workers:   # wait until the first compile worker runs
        workers = _workers_of(proc.pid)
        time.sleep(0.2)
    assert workers
    # a compile takes ~0.2 s on an idle machine: 48 configs over 2 workers outlast this pause
    time.sleep(0.3)
    workers |= _workers_of(proc.pid)
    os.killpg(proc.pid, signal.SIGINT)   # what a terminal's Ctrl-C does: the whole foreground group
    start = time.monotonic()
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "interrupted" in err and "Traceback" not in err, err[-2000:]
    assert time.monotonic() - start < 10
    time.sleep(0.5)
    assert not [pid for pid in workers if _alive(pid)]                # no stray worker left behind


def _workers_of(parent: int) -> set[int]:
    """Compile workers started by `parent` (Linux /proc). Workers get a minimal environment of their own
    (kernlint/calibrate/sandbox.py), so they are found by parent and command line, not by a variable."""
    found: set[int] = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            ppid = int(stat.read_text().rsplit(")", 1)[1].split()[1])
            cmd = (stat.parent / "cmdline").read_bytes()
        except (OSError, ValueError, IndexError):
            continue
        if ppid == parent and b"calibrate/worker.py" in cmd:
            found.add(int(stat.parent.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


@pytest.mark.parametrize("argv, message", [(["-j", "0"], "must be at least 1"),
                                           (["--max-configs", "-1"], "must be at least 1"),
                                           (["--triton-version", "abc"], "expected a version like 3.6")])
def test_bad_option_values_are_usage_errors(argv: list[str], message: str,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["calibrate", str(ROOT / "examples/vector_add.py"), *argv]) == 2
    assert message in capsys.readouterr().err


def test_verify_without_an_anchor_is_a_usage_error_not_ignored(project: Path, capsys: pytest.CaptureFixture[str],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    # --verify compiles what --anchor left uncompiled; alone it was dropped silently and the plain table printed,
    # so a forgotten --anchor looked like a verified anchored run. Compiling is replaced by a marker error: the
    # refusal must come before any compile, and with an anchor the option must get as far as compiling.
    from kernlint.calibrate import session

    def reached_compile(*_: object, **__: object) -> None:
        raise session.CalibrateError("compile reached")

    monkeypatch.setattr(session, "compile_work", reached_compile)
    assert main(["calibrate", "vector_add.py", "--verify", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--verify needs --anchor" in err and "compile reached" not in err
    for anchor in (["--anchor"], ["--anchor-config", "BLOCK_SIZE=1024"]):
        assert main(["calibrate", "vector_add.py", "--verify", "--no-progress", *anchor]) == 2
        err = capsys.readouterr().err
        assert "compile reached" in err and "--verify needs" not in err
