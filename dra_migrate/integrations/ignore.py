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
    """Answers 'is this path ignored?' for paths under one walk root, loading .gitignore files lazily."""

    def __init__(self, walk_root: Path) -> None:
        root = walk_root.resolve()
        self.top = repo_root(root) or root
        self._specs: dict[Path, Any] = {}
        self._chains: dict[Path, list[tuple[str, Any]]] = {}

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
        for prefix, spec in chain:
            res = spec.check_file(prefix + path.name + ("/" if is_dir else ""))
            if res.include is not None:
                decision = bool(res.include)
        return decision

    def _chain(self, parent: Path) -> list[tuple[str, Any]]:
        """(path of `parent` relative to a directory + '/', its spec) for each .gitignore above, top first."""
        rp = parent.resolve()
        if rp != self.top and not rp.is_relative_to(self.top):
            return []
        out: list[tuple[str, Any]] = []
        for directory in reversed([rp, *(d for d in rp.parents if d == self.top or d.is_relative_to(self.top))]):
            spec = self._spec(directory)
            if spec is not None:
                rel = rp.relative_to(directory).as_posix()
                out.append(("" if rel == "." else rel + "/", spec))
        return out
