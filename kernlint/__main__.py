from __future__ import annotations

from kernlint.cli import main

raise SystemExit(main())
