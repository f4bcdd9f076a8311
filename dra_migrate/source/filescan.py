"""The one read of a file, and what its bytes alone say about it, without the compiler.

Every file of a repository comes through here once (in the run, or in its scout: dra_migrate.perf.scout), so
this is where per-file cost is counted in microseconds: the bytes are read with the fewest system calls and
searched once (RE2) for everything that makes the run keep a file. What a scan found is plain data (no
diagnostic, no result object): dra_migrate.run.readpass turns it into what the run acts on.
"""

from __future__ import annotations

import errno
import os
import stat

import re2

from dra_migrate.ruleset import prefilters

DEFAULT_MAX_BYTES = 8 * 1024 * 1024  # --max-file-size

# What makes the read keep a file: it may need migration, or hold a repo-wide setting for the pre-pass
# (dra_migrate.ruleset.prefilters, without the strings that contain another one; --rules may add some).
KEEP = prefilters.DEFAULT_KEEP
# Every file of the repository is searched for all of them: one linear-time pass of RE2 over the bytes costs a
# third of fifteen `in` tests (RE2 is here for CEL's matches() anyway).
_compiled: list[tuple[tuple[bytes, ...], re2._Regexp]] = []  # (prefilters.KEEP, its pattern) of the last scan


def _keep_re() -> re2._Regexp:
    keep = prefilters.KEEP
    if not _compiled or _compiled[0][0] is not keep:
        _compiled[:] = [(keep, re2.compile(b"|".join(re2.escape(p) for p in keep)))]
    return _compiled[0][1]

# ("error", strerror): unreadable; ("too-big", (size, first 64 KiB)): over the size limit; ("kept", bytes): may
# need migration or holds a repo-wide setting; ("plain", bytes): neither.
Scan = tuple[str, object]


def scan(path: str, max_bytes: int) -> Scan:
    try:
        raw, size = read_bytes(path, max_bytes)
    except OSError as exc:
        return "error", exc.strerror or str(exc)
    if size > max_bytes:
        return "too-big", (size, raw)
    return ("kept" if _keep_re().search(raw) is not None else "plain"), raw


def read_bytes(path: str, max_bytes: int) -> tuple[bytes, int]:
    """The file's bytes (its first 64 KiB when over max_bytes) and its size, with as few system calls and
    objects as the kernel allows. Anything but a regular file is an error: a named pipe would block the run
    for good (opened without waiting for a writer, so the open itself returns)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        size = st.st_size
        if size > max_bytes:
            return os.read(fd, 1 << 16), size
        raw = os.read(fd, size + 1)
        if len(raw) != size:  # a short read, or a file that changed size since fstat: read to the end
            rest = []
            while chunk := os.read(fd, 1 << 16):
                rest.append(chunk)
            raw += b"".join(rest)
        return raw, size
    finally:
        os.close(fd)
