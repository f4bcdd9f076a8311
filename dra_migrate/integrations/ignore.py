"""`.gitignore` rules for directory walks (pathspec's git-compatible matcher, nested files honoured)."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def repo_root(start: Path) -> Path | None:
    """The nearest ancestor (or itself) holding `.git`, else None."""
    p = start.resolve()
    for cand in (p, *p.parents):
        if (cand / ".git").exists():
            return cand
    return None


class GitIgnore:
    """Answers 'is this path ignored?' for paths under one walk root, loading .gitignore files lazily.

    As in ripgrep, a directory named on the command line is walked even when a .gitignore ignores it (or a
    directory above it): the patterns that ignore the walk root itself do not apply below it, every other
    pattern does. Otherwise `dra-migrate migrate build/manifests` would silently find nothing.
    """

    def __init__(self, walk_root: Path) -> None:
        root = walk_root.resolve()
        self.root = root
        self.top = repo_root(root) or root
        self._specs: dict[Path, Any] = {}
        self._chains: dict[Path, list[tuple[str, Any, frozenset[int]]]] = {}
        self._root_patterns: dict[Path, frozenset[int]] = {}

    def _spec(self, directory: Path) -> Any:
        if directory not in self._specs:
            f = directory / ".gitignore"
            spec = None
            if f.is_file():
                import pathspec

                try:
                    lines = f.read_text(encoding="utf-8", errors="replace").splitlines()
                except OSError:
                    lines = []
                spec = pathspec.GitIgnoreSpec.from_lines(lines)
            self._specs[directory] = spec
        return self._specs[directory]

    def ignored(self, path: Path, is_dir: bool = False) -> bool:
        # Everything but the last component depends on the parent directory only: resolved (symlinks in
        # the name itself are not followed) and matched against its .gitignore chain once per directory.
        chain = self._chains.get(path.parent)
        if chain is None:
            chain = self._chains[path.parent] = self._chain(path.parent)
        decision = False
        # Deeper .gitignore files override shallower ones, as in git.
        for prefix, spec, root_patterns in chain:
            res = spec.check_file(prefix + path.name + ("/" if is_dir else ""))
            if res.include is not None and res.index not in root_patterns:
                decision = bool(res.include)
        return decision

    def _chain(self, parent: Path) -> list[tuple[str, Any, frozenset[int]]]:
        """(path of `parent` relative to a directory + '/', its spec, the indexes of its patterns that ignore
        the walk root or a directory above it) for each .gitignore above `parent`, top first."""
        rp = parent.resolve()
        if rp != self.top and not rp.is_relative_to(self.top):
            return []
        out: list[tuple[str, Any, frozenset[int]]] = []
        for directory in reversed([rp, *(d for d in rp.parents if d == self.top or d.is_relative_to(self.top))]):
            spec = self._spec(directory)
            if spec is not None:
                rel = rp.relative_to(directory).as_posix()
                out.append(("" if rel == "." else rel + "/", spec, self._patterns_ignoring_root(directory, spec)))
        return out

    def _patterns_ignoring_root(self, directory: Path, spec: Any) -> frozenset[int]:
        found = self._root_patterns.get(directory)
        if found is None:
            hits: set[int] = set()
            if self.root != directory and self.root.is_relative_to(directory):
                rel = self.root.relative_to(directory)
                for i in range(1, len(rel.parts) + 1):
                    res = spec.check_file("/".join(rel.parts[:i]) + "/")
                    if res.include and res.index is not None:
                        hits.add(res.index)
            found = self._root_patterns[directory] = frozenset(hits)
        return found
