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
        p = path.resolve() if not path.is_symlink() else path.parent.resolve() / path.name
        try:
            p.relative_to(self.top)
        except ValueError:
            return False
        decision = False
        # Deeper .gitignore files override shallower ones, as in git.
        chain = [d for d in (p.parent, *p.parent.parents) if d == self.top or d.is_relative_to(self.top)]
        for directory in reversed(chain):
            spec = self._spec(directory)
            if spec is None:
                continue
            rel = p.relative_to(directory).as_posix() + ("/" if is_dir else "")
            res = spec.check_file(rel)
            if res.include is not None:
                decision = bool(res.include)
        return decision
