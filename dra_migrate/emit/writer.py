"""Atomic, faithful writes: a temporary file in the same directory renamed over the original.

A reader (or an interrupted run) sees the old file or the new one, never a mix. The mode is kept; a file
without any write bit is refused even when the process could override it (root), because such files are
usually deliberately frozen (vendored or generated trees).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from pathlib import Path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_atomic(path: Path, data: bytes) -> None:
    if path.is_symlink():  # the caller resolves links it wants to write through; never replace a link
        raise IsADirectoryError(errno.EISDIR, "refusing to replace a symbolic link", str(path))
    mode = None
    with contextlib.suppress(FileNotFoundError):
        mode = stat.S_IMODE(path.stat().st_mode)
    if mode is not None and (not mode & 0o222 or not os.access(path, os.W_OK)):
        raise PermissionError(errno.EACCES, "file is read-only", str(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".dra-migrate.tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        # mkstemp creates 0600; a new file gets what an ordinary open() would have given it
        os.chmod(tmp, mode if mode is not None else 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
