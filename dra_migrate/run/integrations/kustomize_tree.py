"""Which files each kustomize build applies together.

A kustomization includes files (its `resources:` that are files) and other kustomizations (resources that are
directories, and `components:`). A build is what `kubectl kustomize ROOT` renders for a root: a kustomization
no other one includes. Objects are applied together, and can reference each other, only within one build.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from dra_migrate.run.integrations import kustomize
from dra_migrate.run.integrations.kustomize import Kustomization
from dra_migrate.source import realpaths


class BuildIndex:
    """Every kustomization the run knows (read by the run, or loaded from disk because one of them includes
    it), indexed by directory. Paths are resolved (symlinks followed) absolute paths: each kustomization's
    directory is a real path already (kustomize_layout and the loads here resolve them)."""

    def __init__(self, kustomizations: Iterable[Kustomization]) -> None:
        self.by_dir: dict[Path, Kustomization] = {}
        for k in kustomizations:
            self.by_dir.setdefault(k.dir, k)
        self.context: set[Path] = set()  # directories loaded from disk, outside the paths the run was given
        self._load_included()
        self._owners: dict[Path, list[Kustomization]] = {}
        self._parents: dict[Path, list[Kustomization]] = {}
        for k in self.by_dir.values():
            for _entry, target, _line in k.resources:
                if target in self.by_dir:
                    self._parents.setdefault(target, []).append(k)
                else:
                    self._owners.setdefault(target, []).append(k)
            for _entry, target, _line in k.components:
                if target in self.by_dir:
                    self._parents.setdefault(target, []).append(k)

    def _load_included(self) -> None:
        pending = list(self.by_dir.values())
        while pending:
            k = pending.pop()
            for _entry, target, _line in (*k.resources, *k.components):
                if target in self.by_dir or not target.is_dir():
                    continue
                found = kustomize.find_kustomization(target)
                sub = kustomize.load(found, os.path.relpath(found)) if found is not None else None
                if sub is not None:
                    self.by_dir[target] = sub
                    self.context.add(target)
                    pending.append(sub)

    # --- the API other passes use --------------------------------------------------------------------

    def owners(self, file: Path) -> list[Kustomization]:
        """The kustomizations (and components) that list `file` in their resources."""
        return list(self._owners.get(Path(realpaths.resolved(file)), ()))

    def parents(self, k: Kustomization) -> list[Kustomization]:
        """The kustomizations that include `k` (as a resource directory or a component)."""
        return list(self._parents.get(k.dir, ()))

    def roots_of(self, file: Path) -> frozenset[Path]:
        """The directories of the kustomization roots whose build includes `file`; empty when no known
        kustomization does (the file is applied on its own, or with its directory)."""
        out: set[Path] = set()
        for owner in self.owners(file):
            out.update(r.dir for r in self.roots_above(owner))
        return frozenset(out)

    def roots_above(self, k: Kustomization) -> list[Kustomization]:
        """`k` itself when nothing includes it, else every root above it."""
        seen: set[Path] = set()
        roots: list[Kustomization] = []
        stack = [k]
        while stack:
            cur = stack.pop()
            key = cur.dir
            if key in seen:
                continue
            seen.add(key)
            ups = self._parents.get(key, [])
            if not ups and cur.kind != "Component":
                roots.append(cur)
            stack.extend(ups)
        return sorted(roots, key=lambda r: str(r.dir))

    def chain_of(self, file: Path) -> Iterator[list[Kustomization]]:
        """Every path from a kustomization listing `file` up to a root: [owner, parent, ..., root]."""
        for owner in self.owners(file):
            yield from self._up([owner])

    def _up(self, path: list[Kustomization]) -> Iterator[list[Kustomization]]:
        ups = [p for p in self._parents.get(path[-1].dir, []) if p not in path]
        if not ups:
            yield path
        for p in ups:
            yield from self._up([*path, p])

    def namespace_in(self, root: Path, file: Path) -> str | None:
        """The namespace the build of `root` gives the objects of `file` (the outermost `namespace:` on the
        way up), or None when no kustomization on the way sets one (the objects keep their own)."""
        for chain in self.chain_of(file):
            if chain[-1].dir != root:
                continue
            for k in reversed(chain):
                if k.namespace:
                    return k.namespace
        return None

    def files_of(self, k: Kustomization) -> list[Path]:
        """The files `k` lists itself (not those of the kustomizations it includes)."""
        return [target for _e, target, _l in k.resources if target not in self.by_dir]

    def kustomizations_under(self, k: Kustomization) -> list[Kustomization]:
        """`k` and every kustomization (and component) its build includes."""
        out: list[Kustomization] = []
        stack = [k]
        while stack:
            cur = stack.pop()
            if cur in out:
                continue
            out.append(cur)
            stack.extend(sub for _e, t, _l in (*cur.resources, *cur.components)
                         if (sub := self.by_dir.get(t)) is not None)
        return out

    def builds_files(self, k: Kustomization) -> list[Path]:
        """Every file the build of `k` includes, through the kustomizations it includes."""
        out: list[Path] = []
        seen: set[Path] = set()

        def walk(cur: Kustomization) -> None:
            if cur.dir in seen:
                return
            seen.add(cur.dir)
            for _e, target, _l in (*cur.resources, *cur.components):
                sub = self.by_dir.get(target)
                if sub is not None:
                    walk(sub)
                elif target not in out:
                    out.append(target)

        walk(k)
        return out


SKIP_DIRS = frozenset({".git", "node_modules", "vendor", "__pycache__", ".venv", "venv", ".tox"})
MAX_DIRS = 20000  # a repository walked for kustomizations beyond this is not walked further


def git_root(path: Path) -> Path | None:
    for d in (path, *path.parents):
        if (d / ".git").exists():
            return d
    return None


def discover_kustomizations(files: Iterable[Path], paths: Iterable[str]) -> list[Kustomization]:
    """The kustomizations of the repositories holding `files`, when the run was not given the whole repository:
    an overlay elsewhere may patch a base the run migrates (a pre-commit run on staged files, say). Read only;
    the run never edits what it was not given."""
    given = [Path(os.path.realpath(p)) for p in paths if p != "-"]
    roots = {r for f in files if (r := git_root(f.parent)) is not None}
    out: list[Kustomization] = []
    for root in sorted(roots):
        if any(g == root or g in root.parents for g in given):
            continue  # the run's own walk saw them
        for seen, (current, dirs, names) in enumerate(os.walk(root)):
            if seen >= MAX_DIRS:
                break
            dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
            for name in kustomize.KUSTOMIZATION_NAMES:
                if name in names:
                    p = Path(current, name)
                    k = kustomize.load(Path(os.path.realpath(p)), os.path.relpath(p))
                    if k is not None:
                        out.append(k)
                    break
    return out
