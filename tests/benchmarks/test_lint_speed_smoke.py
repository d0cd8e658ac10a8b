"""Smoke test for benchmarks/lint_speed.py on examples/: it finds the kernels and its canonical dump is
deterministic (the dump is what proves a speed-up changed no output). No timing assertions."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from conftest import ROOT


from benchmarks import lint_speed


def test_cli_reports_kernels_and_writes_the_dump(tmp_path: Path) -> None:
    dump = tmp_path / "dump.json"
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks/lint_speed.py"), "examples", "--dump", str(dump)],
                          cwd=ROOT, capture_output=True, text=True, check=True)
    found = re.search(r"files (\d+)\s+kernels (\d+)", proc.stdout)
    assert found is not None, proc.stdout
    assert int(found.group(1)) > 0 and int(found.group(2)) > 0
    doc = json.loads(dump.read_text())
    assert lint_speed.counts(doc)[0] == int(found.group(2))


def test_canonical_dump_is_the_same_twice() -> None:
    first, _ = lint_speed.run(["examples"], str(ROOT))
    second, _ = lint_speed.run(["examples"], str(ROOT))
    a, b = lint_speed.canonical(first), lint_speed.canonical(second)
    kernels, _, estimates = lint_speed.counts(a)
    assert kernels > 0 and estimates > 0
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
