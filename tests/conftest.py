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
