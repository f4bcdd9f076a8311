"""The per-user cache directory and the rules every cache file in it follows.

$XDG_CACHE_HOME/dra-migrate (else ~/.cache/dra-migrate): private to the user (0700), files written to a
temporary name and renamed (concurrent runs see a whole file or none), a file is read only if the user owns
it and nobody else can write it, and any failure means "no cache": a run never depends on it. Nothing here
imports more than the standard library, so the pre-commit path can consult a cache cheaply.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO


def cache_dir() -> Path | None:
    """$XDG_CACHE_HOME/dra-migrate, else ~/.cache/dra-migrate; None when there is no home to put it in."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):  # the XDG spec: a relative value is invalid and ignored
        home = os.path.expanduser("~")
        if not os.path.isabs(home):
            return None
        base = os.path.join(home, ".cache")
    return Path(base) / "dra-migrate"


def own_private_file(path: Path) -> bool:
    st = path.stat()
    return stat.S_ISREG(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o022


def save(directory: Path, path: Path, write: Callable[[IO[bytes]], None], stale_glob: str | None = None) -> bool:
    """Write `path` atomically in the private `directory`; remove other files matching `stale_glob` (older
    versions). False when the cache cannot be written (read-only home, full disk...)."""
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=directory)  # mode 0600
    except OSError:
        return False
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
        os.replace(tmp, path)
    except Exception:  # noqa: BLE001 - a cache that cannot be written is no cache
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        return False
    if stale_glob:
        for old in directory.glob(stale_glob):
            if old != path:
                with contextlib.suppress(OSError):
                    old.unlink()
    return True
