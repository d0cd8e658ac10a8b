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
    """Replace `path` with `data`; `keep_mode` keeps an existing file's permission bits (mkstemp makes 0600)
    and, where allowed, its owner. A symlink is followed: its target is replaced and the link stays a link
    (os.replace on the link's own path turned it into a regular file and left the real file unfixed)."""
    target = Path(os.path.realpath(path))
    mode: int | None = None
    owner: tuple[int, int] | None = None
    if keep_mode:
        try:
            st = target.stat()
            mode, owner = stat.S_IMODE(st.st_mode), (st.st_uid, st.st_gid)
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
        if owner is not None and hasattr(os, "chown"):
            try:
                os.chown(tmp, *owner)   # root fixing another user's file must not take it over
            except OSError:
                pass                    # not permitted (not root): the new file is the writer's, as with any editor
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
