"""os.path.realpath for the many paths a run resolves (every file it may migrate, every kustomize entry),
without the lstat of every directory above each one: a directory's resolution is cached (a walk resets the
cache), and a name inside a resolved directory costs one lstat per component of its own."""

from __future__ import annotations

import functools
import os
from pathlib import Path


@functools.lru_cache(maxsize=65536)
def real_dir(directory: str) -> str:
    """os.path.realpath of a directory, cached (reset at the start of every walk and every run): resolved from
    its parent's, so directories with a common ancestor share its resolution."""
    parent, name = os.path.split(directory)
    if name in ("", ".", "..") or parent == directory:
        return os.path.realpath(directory)
    return real_join(real_dir(parent or "."), name)


def clear() -> None:
    """Forget the cached directories: they may have moved since (a new walk, a new run)."""
    real_dir.cache_clear()


def real_file(path: Path | str) -> str:
    """os.path.realpath of a file that is not itself a symbolic link (walks never yield one): its directory's
    resolution and its name (a string, no Path object: a run asks this for every file of a repository)."""
    directory, name = os.path.split(os.fspath(path))
    return os.path.join(real_dir(directory or "."), name)


def resolved(path: Path | str) -> str:
    """os.path.realpath(path), the directory's part cached: the same answer for any path, links included."""
    directory, name = os.path.split(os.fspath(path))
    if name in ("", ".", ".."):
        return os.path.realpath(path)
    return real_join(real_dir(directory or "."), name)


def real_join(real_directory: str, entry: str) -> str:
    """os.path.realpath(os.path.join(real_directory, entry)) for a directory that is a real path already
    (absolute, links resolved): only the entry's own components are looked at. A component that is a link
    is resolved as realpath resolves it; a missing one is kept as it is, as realpath (not strict) does."""
    if os.path.isabs(entry):
        return os.path.realpath(entry)
    current = real_directory
    for part in entry.split(os.sep):
        if part in ("", "."):
            continue
        if part == "..":
            current = os.path.dirname(current)
            continue
        joined = os.path.join(current, part)
        current = os.path.realpath(joined) if os.path.islink(joined) else joined
    return current
