"""Atomic file replacement, shared by the cache, `--add-noqa`, `--fix` and the config store.

The data goes to a temporary file in the same directory, is flushed, and is renamed over the target with
`os.replace`, so a reader (or a crash half way) only ever sees the old file or the new one, and two
writers of the same file each leave a whole file behind.
"""
from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path


def write_atomic(path: str | Path, data: bytes, *, keep_mode: bool = True, fsync: bool = False) -> None:
    """Replace `path` with `data`; `keep_mode` keeps an existing file's permission bits (mkstemp makes 0600)."""
    target = Path(path)
    mode: int | None = None
    if keep_mode:
        try:
            mode = stat.S_IMODE(target.stat().st_mode)
        except FileNotFoundError:
            mode = None
    fd, tmp = tempfile.mkstemp(dir=target.parent if str(target.parent) else ".", prefix=f".{target.name}.",
                               suffix=".kernlint-tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            if fsync:
                fh.flush()
                os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
