"""Which files are applied together: the objects of one kustomize build, or one directory's files.

What a user deploys is a build (`kubectl kustomize ROOT`, ROOT a kustomization no other one includes) or a
directory (`kubectl apply -f DIR`, not recursive). A file listed by a kustomization's `resources:` (or
`bases:`, `components:`) is applied in every build that reaches it; any other manifest file with its
directory. Names of new objects need only be unique within these units (lower.names).

A minimal reading, kept in this one module so a fuller kustomize model can take its place: kustomization texts
are searched for the paths they mention (no YAML), and only the kustomizations that mention a file in question,
or one of those kustomizations' directories, are parsed. Paths are absolute and normalised (os.path.abspath).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from dra_migrate.lower.names import UnitKey
from dra_migrate.run.integrations import kustomize
from dra_migrate.source.discover import EXTENSIONS, SKIP_DIRS

# An item of a block or flow sequence: the entries of resources/bases/components are among them.
_LIST_ITEM = re.compile(rb"""(?:^[ \t]*-[ \t]+|[\[,][ \t]*)["']?([^\s"'\[\],#{}]+)""", re.M)
MAX_DIRS = 20_000  # a repository walked for its kustomizations is not walked beyond this many directories


@dataclass(frozen=True, slots=True)
class _Kustomization:
    dir: str
    includes: tuple[str, ...]  # resources, bases and components: files and kustomization directories
    namespace: str | None
    patches: frozenset[str]
    component: bool


class ApplyUnits:
    """The apply units of a repository, from its kustomization files (absolute path → bytes)."""

    def __init__(self, kustomizations: Mapping[str, bytes]) -> None:
        # one per directory, in kustomize's order of preference
        order = {n: i for i, n in enumerate(kustomize.KUSTOMIZATION_NAMES)}
        ranked = sorted(kustomizations.items(), key=lambda pr: order.get(os.path.basename(pr[0]), 9), reverse=True)
        self._texts = {os.path.dirname(p): (p, raw) for p, raw in ranked}
        self._mentions: dict[str, list[str]] | None = None
        self._parsed: dict[str, _Kustomization | None] = {}
        self._units: dict[str, list[tuple[UnitKey, str | None]]] = {}

    def units_of(self, file: str) -> list[tuple[UnitKey, str | None]]:
        """The units `file` is applied in, each with the namespace the unit gives its objects (None: their own)."""
        units = self._units.get(file)
        if units is None:
            roots = self.roots_of(file)
            units = [(("build", r), self.namespace_in(r, file)) for r in roots] if roots else \
                [(("dir", os.path.dirname(file)), None)]
            self._units[file] = units
        return units

    def members(self, unit: UnitKey) -> list[str]:
        """The manifest files of a unit (kustomization files and kustomize patches are not manifests)."""
        kind, where = unit
        if kind == "build":
            return self.build_files(where)
        try:
            with os.scandir(where) as it:
                names = sorted(e.name for e in it if e.name.endswith(EXTENSIONS) and e.is_file(follow_symlinks=False))
        except OSError:
            return []
        files = [os.path.join(where, n) for n in names if n not in kustomize.KUSTOMIZATION_NAMES]
        return [f for f in files if self.units_of(f)[0][0][0] == "dir" and not self.is_patch(f)]

    # --- the kustomize graph ---------------------------------------------------------------------------

    def roots_of(self, file: str) -> list[str]:
        """The directories of the builds that include `file` (through any number of kustomizations)."""
        roots: set[str] = set()
        seen: set[str] = set()
        todo = self.owners(file)
        while todo:
            d = todo.pop()
            if d in seen:
                continue
            seen.add(d)
            ups = self.owners(d)
            k = self._load(d)
            if not ups and k is not None and not k.component:
                roots.add(d)
            todo.extend(ups)
        return sorted(roots)

    def owners(self, target: str) -> list[str]:
        """The directories of the kustomizations that include `target` (a file, or a kustomization's dir)."""
        out = []
        for d in self._mentioning(target):
            k = self._load(d)
            if k is not None and target in k.includes:
                out.append(d)
        return out

    def namespace_in(self, root: str, file: str) -> str | None:
        """The namespace the build of `root` gives the objects of `file`: the outermost `namespace:` on the way
        down to it, or None (they keep their own)."""
        def down(d: str, seen: frozenset[str]) -> tuple[bool, str | None]:
            k = self._load(d)
            if k is None or d in seen:
                return False, None
            for target in k.includes:
                found, ns = (True, None) if target == file else (
                    down(target, seen | {d}) if target in self._texts else (False, None))
                if found:
                    return True, k.namespace or ns
            return False, None

        return down(root, frozenset())[1]

    def build_files(self, root: str) -> list[str]:
        """Every file the build of `root` includes."""
        out: list[str] = []
        seen: set[str] = set()
        todo = [root]
        while todo:
            d = todo.pop()
            k = self._load(d)
            if d in seen or k is None:
                continue
            seen.add(d)
            for target in k.includes:
                if target in self._texts:
                    todo.append(target)
                elif target not in out and target.endswith(EXTENSIONS):
                    out.append(target)
        return sorted(out)

    def is_patch(self, file: str) -> bool:
        """Listed as a patch by a kustomization (it merges into objects of a build; it is not applied)."""
        return any((k := self._load(d)) is not None and file in k.patches for d in self._mentioning(file))

    def _mentioning(self, target: str) -> list[str]:
        if self._mentions is None:
            self._mentions = {}
            for d, (_path, raw) in self._texts.items():
                for m in _LIST_ITEM.findall(raw):
                    entry = os.fsdecode(m)
                    if not _remote(entry):
                        self._mentions.setdefault(os.path.normpath(os.path.join(d, entry)), []).append(d)
        return self._mentions.get(target, [])

    def _load(self, d: str) -> _Kustomization | None:
        if d in self._parsed:
            return self._parsed[d]
        text = self._texts.get(d)
        data = _parse(text[1]) if text is not None else None
        parsed = None
        if data is not None:
            includes: list[str] = []
            for key in ("resources", "bases", "components"):
                entries = data.get(key)
                for entry in entries if isinstance(entries, list) else []:
                    if isinstance(entry, str) and not _remote(entry):
                        includes.append(os.path.normpath(os.path.join(d, entry)))
            ns = data.get("namespace")
            patches = frozenset(os.path.normpath(os.path.join(d, p)) for p in _patch_paths(data))
            parsed = _Kustomization(d, tuple(includes), ns if isinstance(ns, str) and ns else None, patches,
                                    data.get("kind") == "Component")
        self._parsed[d] = parsed
        return parsed


def _remote(entry: str) -> bool:
    """A remote resource (a URL or a git repository): never a file of this repository."""
    return "://" in entry or entry.startswith(("github.com/", "git@", "git::"))


def _parse(raw: bytes) -> dict[str, Any] | None:
    try:
        data = yaml.load(raw, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # noqa: S506 (safe loader)
    except yaml.YAMLError:
        return None
    return data if isinstance(data, dict) else None


def _patch_paths(data: dict[str, Any]) -> Iterable[str]:
    for key in ("patches", "patchesJson6902"):
        entries = data.get(key)
        for entry in entries if isinstance(entries, list) else []:
            if isinstance(entry, dict) and isinstance(entry.get("path"), str):
                yield entry["path"]
    entries = data.get("patchesStrategicMerge")
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, str) and "\n" not in entry.strip():
            yield entry.strip()


def repository_root(directory: str, known: dict[str, str | None] | None = None) -> str | None:
    """The nearest directory at or above `directory` with a `.git` (a checkout or a worktree); None outside
    one. `known`: the answers so far, by directory (the files of a run share their parents)."""
    known = {} if known is None else known
    path: list[str] = []
    d = directory
    while d not in known:
        path.append(d)
        if os.path.exists(os.path.join(d, ".git")):
            known[d] = d
            break
        up = os.path.dirname(d)
        if up == d:
            known[d] = None
            break
        d = up
    root = known[d]
    for p in path:
        known[p] = root
    return root


def discover_kustomizations(root: str) -> dict[str, bytes]:
    """Every kustomization file under `root` (absolute path → bytes), skipping what a walk skips."""
    out: dict[str, bytes] = {}
    for seen, (current, dirs, names) in enumerate(os.walk(root)):
        if seen >= MAX_DIRS:
            break
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        for name in kustomize.KUSTOMIZATION_NAMES:
            if name in names:
                p = os.path.join(current, name)
                try:
                    with open(p, "rb") as f:
                        out[p] = f.read(1 << 20)
                except OSError:
                    pass
                break
    return out
