"""`.gitignore` rules for directory walks (pathspec's git-compatible matcher, nested files honoured)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any


def repo_root(start: Path) -> Path | None:
    """The nearest ancestor (or itself) holding `.git`, else None."""
    p = start.resolve()
    for cand in (p, *p.parents):
        if (cand / ".git").exists():
            return cand
    return None


class DirectoryRules:
    """Answers 'is this entry of one directory ignored?' (see GitIgnore.directory)."""

    __slots__ = ("chain",)

    def __init__(self, chain: list[tuple[str, Any, frozenset[int]]]) -> None:
        self.chain = chain

    def ignored(self, name: str, is_dir: bool = False) -> bool:
        decision = False
        # Deeper .gitignore files override shallower ones, as in git.
        for prefix, spec, root_patterns in self.chain:
            res = spec.check_file(prefix + name + ("/" if is_dir else ""))
            if res.include is not None and res.index not in root_patterns:
                decision = bool(res.include)
        return decision


class GitIgnore:
    """Answers 'is this path ignored?' for paths under one walk root, loading .gitignore files lazily.

    As in ripgrep, a directory named on the command line is walked even when a .gitignore ignores it (or a
    directory above it): the patterns that ignore the walk root itself do not apply below it, every other
    pattern does. Otherwise `dra-migrate migrate build/manifests` would silently find nothing.

    Paths are plain strings here: a walk asks once per entry, and pathlib costs more than the matching.
    """

    def __init__(self, walk_root: Path) -> None:
        root = walk_root.resolve()
        self.root = os.fspath(root)
        self.top = os.fspath(repo_root(root) or root)
        # directory walks join names onto the argument and never follow directory links, so a directory
        # below it resolves to the resolved root joined with the same names (spares a resolve() per directory)
        self._arg = os.fspath(walk_root)
        self._arg_prefix = os.path.join(self._arg, "")
        self._specs: dict[str, Any] = {}
        self._by_resolved: dict[str, list[tuple[str, Any, frozenset[int]]]] = {}

    def directory(self, parent: str, has_gitignore: bool) -> DirectoryRules:
        """The rules for the entries of the directory `parent` (a path as the walk spells it), which the walk
        listed: it says whether the listing holds a `.gitignore` (spares a stat per directory). Everything but
        an entry's own name depends on the directory only, so its chain of .gitignore files is built once."""
        resolved = self._resolve(parent)
        if not has_gitignore:
            self._specs.setdefault(resolved, None)
        return DirectoryRules(self._resolved_chain(resolved))

    def _resolve(self, parent: str) -> str:
        if self._arg == "." and not os.path.isabs(parent):  # walks under "." spell paths without "./"
            return os.path.normpath(os.path.join(self.root, parent))
        if parent.startswith(self._arg_prefix):
            return os.path.join(self.root, parent[len(self._arg_prefix):])
        if parent == self._arg:
            return self.root
        return os.fspath(Path(parent).resolve())

    def _under_top(self, directory: str) -> bool:
        return directory == self.top or directory.startswith(os.path.join(self.top, ""))

    def _resolved_chain(self, rp: str) -> list[tuple[str, Any, frozenset[int]]]:
        """(path of `rp` relative to a directory + '/', its spec, the indexes of its patterns that ignore the
        walk root or a directory above it) for each .gitignore from the top down to `rp`. Built from the
        parent's chain (cached): one .gitignore lookup per directory, not one per ancestor."""
        found = self._by_resolved.get(rp)
        if found is not None:
            return found
        if not self._under_top(rp):
            out: list[tuple[str, Any, frozenset[int]]] = []
        else:
            out = []
            if rp != self.top:
                parent, name = os.path.split(rp)
                out = [(prefix + name + "/", spec, roots) for prefix, spec, roots in self._resolved_chain(parent)]
            spec = self._spec(rp)
            if spec is not None:
                out.append(("", spec, self._patterns_ignoring_root(rp, spec)))
        self._by_resolved[rp] = out
        return out

    def _spec(self, directory: str) -> Any:
        if directory not in self._specs:
            f = os.path.join(directory, ".gitignore")
            spec = None
            if os.path.isfile(f):
                # lazy: start-up (pathspec: ~11 ms, only _spec() needs it)
                import pathspec

                try:
                    with open(f, encoding="utf-8", errors="replace") as fh:
                        lines = fh.read().splitlines()
                except OSError:
                    lines = []
                spec = pathspec.GitIgnoreSpec.from_lines(lines)
            self._specs[directory] = spec
        return self._specs[directory]

    def _patterns_ignoring_root(self, directory: str, spec: Any) -> frozenset[int]:
        hits: set[int] = set()
        if self.root != directory and self.root.startswith(os.path.join(directory, "")):
            parts = os.path.relpath(self.root, directory).split(os.sep)
            for i in range(1, len(parts) + 1):
                res = spec.check_file("/".join(parts[:i]) + "/")
                if res.include and res.index is not None:
                    hits.add(res.index)
        return frozenset(hits)
