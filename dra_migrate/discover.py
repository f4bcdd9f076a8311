"""Find manifest files under the given paths: sorted, never following links out of the tree."""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from dra_migrate.diagnostics import Diagnostic, Location, make

EXTENSIONS = (".yaml", ".yml", ".json")
SKIP_DIRS = {".git", ".hg", ".svn", "node_modules", ".venv", "__pycache__", ".terraform"}


@dataclass(slots=True)
class Found:
    path: Path
    display: str
    root: Path  # the argument it was found under (for --output-dir layout)


def discover(
    paths: Sequence[str],
    excludes: Sequence[str] = (),
    diagnostics: list[Diagnostic] | None = None,
    gitignore: bool = False,
) -> Iterator[Found]:
    """Files named explicitly are always yielded; `gitignore` only prunes what directory walks find."""
    for arg in paths:
        p = Path(arg)
        if p.is_dir():
            root = p.resolve()
            ignore = None
            if gitignore:
                from dra_migrate.integrations.ignore import GitIgnore

                ignore = GitIgnore(p)
            for dirpath, dirnames, filenames in os.walk(p, followlinks=False):
                dirnames[:] = sorted(
                    d for d in dirnames
                    if d not in SKIP_DIRS and not _excluded(Path(dirpath, d), excludes)
                    and not (ignore and ignore.ignored(Path(dirpath, d), is_dir=True))
                )
                for name in sorted(filenames):
                    fp = Path(dirpath, name)
                    if not name.endswith(EXTENSIONS) or _excluded(fp, excludes):
                        continue
                    if ignore and ignore.ignored(fp):
                        continue
                    if fp.is_symlink():
                        target = fp.resolve()
                        if not target.is_relative_to(root):
                            _note(diagnostics, "DRA110", f"symbolic link to {target} leaves the tree; not followed", fp)
                        else:
                            # the target is in the tree and is migrated under its own path; rewriting the link
                            # too would process the file twice or replace the link by a copy
                            _note(diagnostics, "DRA115", f"symbolic link to {target}: the target is migrated "
                                  "under its own path, the link is kept", fp)
                        continue
                    yield Found(fp, str(fp), p)
        elif p.is_symlink():
            # a link named on the command line is written through, but only within the directory it sits in
            target = p.resolve()
            if target.is_file() and target.is_relative_to(p.parent.resolve()):
                yield Found(target, str(p), p.parent)
            else:
                _note(diagnostics, "DRA110", f"symbolic link to {target} leaves its directory; not followed", p)
        elif p.exists():
            yield Found(p, str(p), p.parent)
        elif diagnostics is not None:
            diagnostics.append(make("DRA106", "no such file or directory", Location(arg)))


def _note(diagnostics: list[Diagnostic] | None, code: str, message: str, path: Path) -> None:
    if diagnostics is not None:
        diagnostics.append(make(code, message, Location(str(path))))


def _excluded(path: Path, excludes: Sequence[str]) -> bool:
    s = str(path)
    return any(fnmatch.fnmatch(s, g) or fnmatch.fnmatch(path.name, g) for g in excludes)
