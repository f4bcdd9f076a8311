"""Find manifest files under the given paths: sorted, never following links out of the tree."""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from dra_migrate.diagnostics.model import Diagnostic, Location, make
from dra_migrate.source import realpaths
from dra_migrate.source.ignore import GitIgnore

if TYPE_CHECKING:
    from dra_migrate.source.ignore import GitIgnore

EXTENSIONS = (".yaml", ".yml", ".json")
# kustomize's own file names: a walk treats these as build roots, whatever reads them
KUSTOMIZATION_NAMES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
# A named pipe would block whoever reads it for good; sockets and devices are no manifests either.
_NOT_REGULAR = "not a regular file (a named pipe, socket or device); skipped"
SKIP_DIRS = {".git", ".hg", ".svn", "node_modules", ".venv", "__pycache__", ".terraform"}


class Found:
    """A file a walk found. The path is kept as a string (a Path object is built when asked for): a run
    holds one per file of the repository, and 100,000 Path objects would cost ~40 MB."""

    __slots__ = ("_path", "display", "root")

    def __init__(self, path: Path | str, display: str, root: Path) -> None:
        self._path = os.fspath(path)
        self.display = display
        self.root = root  # the argument it was found under (for --output-dir layout)

    @property
    def path(self) -> Path:
        return Path(self._path)

    @property
    def name(self) -> str:
        return os.path.basename(self._path)

    def __fspath__(self) -> str:
        return self._path

    def __repr__(self) -> str:
        return f"Found({self._path!r}, {self.display!r}, {self.root!r})"


def discover(
    paths: Sequence[str],
    excludes: Sequence[str] = (),
    diagnostics: list[Diagnostic] | None = None,
    gitignore: bool = False,
) -> Iterator[Found]:
    """Files named explicitly are always yielded; `gitignore` only prunes what directory walks find."""
    realpaths.clear()  # a new walk: directories may have moved since the last one
    for arg in paths:
        p = Path(arg)
        if p.is_dir():
            ignore = None
            if gitignore:
                ignore = GitIgnore(p)
            yield from _walk(os.fspath(p), p, p.resolve(), excludes, ignore, diagnostics)
        elif p.is_symlink():
            # a link named on the command line is written through, but only within the directory it sits in
            target = p.resolve()
            if target.is_file() and target.is_relative_to(p.parent.resolve()):
                yield Found(target, str(p), p.parent)
            else:
                _note(diagnostics, "DRA110", f"symbolic link to {target} leaves its directory; not followed", p)
        elif p.is_file():
            yield Found(p, str(p), p.parent)
        elif p.exists():
            _note(diagnostics, "DRA106", _NOT_REGULAR, p)
        elif diagnostics is not None:
            diagnostics.append(make("DRA106", "no such file or directory", Location(arg)))


def _note(diagnostics: list[Diagnostic] | None, code: str, message: str, path: Path) -> None:
    if diagnostics is not None:
        diagnostics.append(make(code, message, Location(str(path))))


def _walk(
    top: str, arg: Path, root: Path, excludes: Sequence[str], ignore: GitIgnore | None,
    diagnostics: list[Diagnostic] | None,
) -> Iterator[Found]:
    # os.walk's order (a directory's files, then its subdirectories, both sorted), from one scandir per
    # directory: the entries' cached types spare a stat per file on a large tree
    try:
        with os.scandir(top) as it:
            entries = list(it)
    except OSError:
        return
    dirs: list[tuple[str, bool]] = []
    files: list[os.DirEntry[str]] = []
    for entry in entries:
        try:
            is_dir = entry.is_dir()
        except OSError:
            is_dir = False
        if is_dir:
            dirs.append((entry.name, entry.is_symlink()))
        else:
            files.append(entry)
    files.sort(key=lambda e: e.name)
    rules = ignore.directory(top, any(e.name == ".gitignore" for e in files)) if ignore else None
    for entry in files:
        name = entry.name
        if not name.endswith(EXTENSIONS):
            continue
        if rules and rules.ignored(name):
            continue
        fp = _join(top, name)
        if excludes and _excluded(Path(fp), excludes):
            continue
        if entry.is_symlink():
            target = Path(fp).resolve()
            if not target.is_relative_to(root):
                _note(diagnostics, "DRA110", f"symbolic link to {target} leaves the tree; not followed", Path(fp))
            else:
                # the target is in the tree and is migrated under its own path; rewriting the link too would
                # process the file twice or replace the link by a copy
                _note(diagnostics, "DRA115", f"symbolic link to {target}: the target is migrated under its own "
                      "path, the link is kept", Path(fp))
            continue
        if not entry.is_file(follow_symlinks=False):
            _note(diagnostics, "DRA106", _NOT_REGULAR, Path(fp))
            continue
        yield Found(fp, fp, arg)
    for name, is_link in sorted(dirs):
        if name in SKIP_DIRS or is_link:
            continue
        if rules and rules.ignored(name, is_dir=True):
            continue
        if excludes and _excluded(Path(top, name), excludes):
            continue
        yield from _walk(_join(top, name), arg, root, excludes, ignore, diagnostics)


def _join(top: str, name: str) -> str:
    """os.path.join spelled as pathlib would print it (no './' in front), so displayed paths stay short."""
    return name if top == "." else os.path.join(top, name)


def _excluded(path: Path, excludes: Sequence[str]) -> bool:
    s = str(path)
    return any(fnmatch.fnmatch(s, g) or fnmatch.fnmatch(path.name, g) for g in excludes)
