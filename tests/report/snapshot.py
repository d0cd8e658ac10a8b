"""Golden-file helper: compare text with tests/snapshots/NAME; `KERNLINT_UPDATE_SNAPSHOTS=1` rewrites it."""
from __future__ import annotations

import os
from pathlib import Path

SNAPSHOTS = Path(__file__).resolve().parent.parent / "snapshots"


def assert_snapshot(name: str, text: str) -> None:
    path = SNAPSHOTS / name
    if os.environ.get("KERNLINT_UPDATE_SNAPSHOTS") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="")
        return
    assert path.exists(), f"no snapshot {path}; run with KERNLINT_UPDATE_SNAPSHOTS=1 to record it"
    expected = path.read_text(encoding="utf-8")
    assert text == expected, (f"output differs from {path.relative_to(SNAPSHOTS.parent.parent)}; if the change is "
                              "intended, re-run with KERNLINT_UPDATE_SNAPSHOTS=1 and review the diff")
