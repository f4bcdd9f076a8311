"""Atomic, faithful writes: a temporary file in the same directory renamed over the original.

A reader (or an interrupted run) sees the old file or the new one, never a mix. The mode is kept; a file
without any write bit is refused even when the process could override it (root), because such files are
usually deliberately frozen (vendored or generated trees).

Durable writes: the new bytes are fsynced before the rename makes them visible, and the directory after it.
Many rewrites are cheapest as a batch (commit_synced, commit_durably): every temporary file written and
fsynced (on a few threads: the filesystem groups concurrent flushes), then every rename, then one fsync per
directory touched.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

# map(function, items) on a few threads (ThreadPoolExecutor.map), for fsyncs that may run together
Mapper = Callable[..., Iterator[Any]]
SYNC_THREADS = 8  # fsyncs in flight at once: the filesystem commits concurrent ones together


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_atomic(path: Path, data: bytes, *, durable: bool = True) -> None:
    """Replace `path` with `data` so a reader sees the old or the new file, never half of one.

    durable: fsync the data before the rename, so a crash cannot leave an empty file in place of a user's
    manifest, and the directory after it, so the rename itself survives a crash."""
    staged = stage_replace(path, data, sync=durable)
    try:
        staged.commit()
    except BaseException:
        staged.discard()
        raise
    if durable:
        sync_directories([path.parent])


class StagedReplace:
    """A file's new bytes written beside it under a temporary name, not yet renamed over it. `fd`: the
    temporary file, still open until sync() (stage_replace(keep_open=True)), else None."""

    __slots__ = ("fd", "path", "tmp")

    def __init__(self, path: Path, tmp: str, fd: int | None = None) -> None:
        self.path, self.tmp, self.fd = path, tmp, fd

    def sync(self) -> None:
        """fsync the new bytes (through the open descriptor when there is one: no second open)."""
        fd, self.fd = self.fd, None
        if fd is None:
            fd = os.open(self.tmp, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def commit(self) -> None:
        os.replace(self.tmp, self.path)

    def discard(self) -> None:
        fd, self.fd = self.fd, None
        if fd is not None:
            os.close(fd)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.tmp)


def stage_replace(path: Path, data: bytes, *, sync: bool = False, keep_open: bool = False) -> StagedReplace:
    """Write `data` beside `path` (same directory, so the rename is atomic), refusing what write_atomic
    refuses (links, read-only files); sync: fsync it now; keep_open: leave it open for a later sync()
    (an fsync through it, without opening the file again)."""
    try:
        st: os.stat_result | None = os.lstat(path)  # one call says link, existence and mode
    except FileNotFoundError:
        st = None
    if st is not None and stat.S_ISLNK(st.st_mode):  # the caller resolves links it wants to write through
        raise IsADirectoryError(errno.EISDIR, "refusing to replace a symbolic link", str(path))
    mode = stat.S_IMODE(st.st_mode) if st is not None else None
    if mode is not None and (not mode & 0o222 or not os.access(path, os.W_OK)):
        raise PermissionError(errno.EACCES, "file is read-only", str(path))
    if st is None:  # an existing file's directory exists
        path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".dra-migrate.tmp", dir=path.parent)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        # mkstemp creates 0600; a new file gets what an ordinary open() would have given it
        os.fchmod(fd, mode if mode is not None else 0o666 & ~_umask())
        if sync:
            os.fsync(fd)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    if keep_open and not sync:
        return StagedReplace(path, tmp, fd)
    os.close(fd)
    return StagedReplace(path, tmp)


def sync_staged(staged: StagedReplace) -> OSError | None:
    """fsync one staged file; the error instead of raising it (the file must then not be renamed)."""
    try:
        staged.sync()
    except OSError as exc:
        return exc
    return None


def sync_directory(directory: Path) -> None:
    """fsync a directory, so that the renames done in it survive a crash. A filesystem that cannot sync a
    directory (EINVAL: some network and FUSE filesystems) leaves nothing more to do: every file in it is
    already the whole old or the whole new file."""
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # (see above: the files themselves are whole either way)
    finally:
        os.close(fd)


def sync_directories(directories: Iterable[Path], mapper: Mapper | None = None) -> None:
    """fsync each directory once (on the threads of `mapper`, a map like ThreadPoolExecutor.map)."""
    unique = list(dict.fromkeys(directories))
    if mapper is not None and len(unique) > 1:
        list(mapper(sync_directory, unique))
    else:
        for d in unique:
            sync_directory(d)


def commit_synced(staged: Sequence[StagedReplace], problems: Sequence[OSError | None],
                  mapper: Mapper | None = None) -> list[tuple[int, OSError]]:
    """Rename, in order, every staged file whose fsync succeeded (`problems[i]` is None) over its original,
    then fsync each directory a rename touched, once; the others are discarded (their original stays). The
    failures: (index in `staged`, error)."""
    failed: list[tuple[int, OSError]] = []
    renamed: list[Path] = []
    for i, (s, problem) in enumerate(zip(staged, problems, strict=True)):
        if problem is None:
            try:
                s.commit()
                renamed.append(s.path.parent)
                continue
            except OSError as exc:
                problem = exc
        s.discard()
        failed.append((i, problem))
    sync_directories(renamed, mapper)
    return failed


def commit_durably(staged: list[StagedReplace]) -> list[tuple[int, OSError]]:
    """Make every staged file durable (fsync), rename each over its original, in order, then fsync each
    directory the renames touched, once; the failures (index in `staged`, error).

    The fsyncs run on a few threads at once: the filesystem commits concurrent flushes together, so a batch
    of rewrites waits for the disk a few times rather than once per file. A file that cannot be made durable
    is not renamed (its original stays)."""
    if len(staged) > 1:
        # lazy: start-up (concurrent.futures: ~5 ms, only commit_durably() needs it)
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(min(SYNC_THREADS, len(staged))) as pool:
            problems = list(pool.map(sync_staged, staged))
            return commit_synced(staged, problems, pool.map)
    return commit_synced(staged, [sync_staged(s) for s in staged])


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
