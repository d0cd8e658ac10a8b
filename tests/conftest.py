from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXPECT = re.compile(r"#\s*expect:\s*(?P<codes>KL\d{3}(?:\s*,\s*KL\d{3})*)")


def expected_markers(text: str) -> set[tuple[int, str]]:
    """(line, code) pairs from `# expect: KL101, KL201` comments."""
    found: set[tuple[int, str]] = set()
    for i, line in enumerate(text.splitlines(), start=1):
        m = EXPECT.search(line)
        if m:
            found |= {(i, c.strip()) for c in m.group("codes").split(",")}
    return found


def import_probe(path: Path) -> object:
    """A probe-kernel file of tests/truth/ as a module, for the live ptxas re-measurements (needs triton)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
