"""The worker's audit hook lets Triton stop a ptxas it started (a child of the worker) and nothing else.

Before, Triton's own ptxas timeout on a long flag-gems attention compile was refused (`os.kill`), and the
compile was reported as "sandbox refused" instead of a timeout.
"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from kernlint.calibrate.sandbox import Sandbox, SandboxRefusal


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_kill_of_an_own_child_is_allowed_and_of_anything_else_refused(tmp_path) -> None:  # type: ignore[no-untyped-def]
    box = Sandbox([str(tmp_path)], [])
    box.active = True
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        box.hook("os.kill", (child.pid, 9))          # no exception: Triton's timeout may stop it
        with pytest.raises(SandboxRefusal):
            box.hook("os.kill", (os.getppid(), 9))   # the process that started this one
        with pytest.raises(SandboxRefusal):
            box.hook("os.kill", (1, 15))
        with pytest.raises(SandboxRefusal):
            box.hook("os.killpg", (os.getpgid(0), 9))
    finally:
        child.kill()
        child.wait()
