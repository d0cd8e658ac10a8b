"""Reading a source file to lint: only regular files, and only up to a size limit.

A FIFO named `x.py` blocks a plain read forever and a symlink to `/dev/zero` fills memory (15 GB in 60 s),
so the file's type is checked before it is opened, again on the open descriptor (it may have been swapped
in between), and no more than the limit plus one byte is ever read. A refusal is an OSError whose
`strerror` is the whole KL001 message. Stdlib only: the cold path imports this.
"""
from __future__ import annotations

import errno
import os
import stat

# Above this a file is almost certainly generated or data (the largest hand-written Triton file of the
# development corpus is under 300 KB); `max-file-size` in [tool.kernlint] or `--max-file-size` changes it.
DEFAULT_MAX_FILE_BYTES = 2 * 1024 * 1024

_KINDS = ((stat.S_ISFIFO, "FIFO"), (stat.S_ISCHR, "character device"), (stat.S_ISBLK, "block device"),
          (stat.S_ISSOCK, "socket"), (stat.S_ISDIR, "directory"))


class SourceRefused(OSError):
    """A file kernlint will not read; `strerror` is the diagnostic."""


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "special file")


def too_large(size: int, limit: int) -> str:
    return (f"file too large: {size:,} bytes, over the {limit:,}-byte limit (max-file-size in [tool.kernlint] "
            f"or --max-file-size); not linted")


def read_source(path: str, limit: int = DEFAULT_MAX_FILE_BYTES) -> bytes | OSError:
    """The file's bytes, or the OSError that becomes its KL001 (missing, unreadable, refused)."""
    try:
        st = os.stat(path)   # follows symlinks: a link to /dev/zero is a character device
        if not stat.S_ISREG(st.st_mode):
            return SourceRefused(errno.EINVAL, f"not a regular file ({_kind(st.st_mode)}); not linted", path)
        if st.st_size > limit:
            return SourceRefused(errno.EFBIG, too_large(st.st_size, limit), path)
        # O_NONBLOCK: if a FIFO replaced the file since the stat, opening it must not wait for a writer
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        return exc
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return SourceRefused(errno.EINVAL, f"not a regular file ({_kind(st.st_mode)}); not linted", path)
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:   # the file grew after the stat
            return SourceRefused(errno.EFBIG, too_large(size, limit), path)
        return b"".join(chunks)
    except OSError as exc:
        return exc
    finally:
        os.close(fd)


def is_lintable_path(path: str) -> bool:
    """True for anything but a directory or a missing path: special files are then refused by read_source
    with a KL001 that names their type, instead of "no such file or directory"."""
    return os.path.lexists(path) and not os.path.isdir(path)
