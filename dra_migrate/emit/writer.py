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


def write_atomic(path: Path, data: bytes, *, durable: bool = True) -> None:
    """Replace `path` with `data` so a reader sees the old or the new file, never half of one.

    durable: fsync before the rename, so a crash cannot leave an empty file in place of a user's manifest."""
    staged = stage_replace(path, data, sync=durable)
    try:
        staged.commit()
    except BaseException:
        staged.discard()
        raise


class StagedReplace:
    """A file's new bytes written beside it under a temporary name, not yet renamed over it."""

    __slots__ = ("path", "tmp")

    def __init__(self, path: Path, tmp: str) -> None:
        self.path, self.tmp = path, tmp

    def sync(self) -> None:
        fd = os.open(self.tmp, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def commit(self) -> None:
        os.replace(self.tmp, self.path)

    def discard(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.tmp)


def stage_replace(path: Path, data: bytes, *, sync: bool = False) -> StagedReplace:
    """Write `data` beside `path` (same directory, so the rename is atomic), refusing what write_atomic
    refuses (links, read-only files); sync: fsync it now."""
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
            if sync:
                f.flush()
                os.fsync(f.fileno())
        # mkstemp creates 0600; a new file gets what an ordinary open() would have given it
        os.chmod(tmp, mode if mode is not None else 0o666 & ~_umask())
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return StagedReplace(path, tmp)


def commit_durably(staged: list[StagedReplace]) -> list[tuple[int, OSError]]:
    """Make every staged file durable (fsync), then rename each over its original, in order; the failures
    (index in `staged`, error).

    The fsyncs run on a few threads at once: the filesystem commits concurrent flushes together, so a batch
    of rewrites waits for the disk a few times rather than once per file. A file that cannot be made durable
    is not renamed (its original stays)."""
    failed: list[tuple[int, OSError]] = []

    def sync(s: StagedReplace) -> OSError | None:
        try:
            s.sync()
        except OSError as exc:
            return exc
        return None

    if len(staged) > 1:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(min(8, len(staged))) as pool:
            problems = list(pool.map(sync, staged))
    else:
        problems = [sync(s) for s in staged]
    for i, (s, problem) in enumerate(zip(staged, problems, strict=True)):
        if problem is None:
            try:
                s.commit()
                continue
            except OSError as exc:
                problem = exc
        s.discard()
        failed.append((i, problem))
    return failed


class TreeWriter:
    """Writes a fresh output tree (--output-dir): files that do not exist yet are created directly
    (O_EXCL, so a symlink planted at the destination is never followed), without fsync: the sources are
    untouched, so a crash costs a re-run, not data. An existing destination is replaced atomically."""

    def __init__(self) -> None:
        self._dirs: set[Path] = set()

    def write(self, path: Path, data: bytes) -> None:
        parent = path.parent
        if parent not in self._dirs:
            parent.mkdir(parents=True, exist_ok=True)
            self._dirs.add(parent)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(path, flags, 0o666)
        except FileExistsError:
            write_atomic(path, data, durable=False)
            return
        except FileNotFoundError:  # the directory went away since we made it
            parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, flags, 0o666)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        except BaseException:
            os.close(fd)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
            raise
        os.close(fd)
