"""What each kustomization of a repository builds from (its local resources, bases, components and generator
files, nested kustomizations followed): the reach that decides which workloads a sharing config governs."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dra_migrate.lower.sharing.scope import TREE, Scope, absolute
from dra_migrate.run.integrations import kustomize


@dataclass(slots=True)
class Builds:
    """The files each kustomization reaches (its build's inputs), by absolute kustomization path."""

    reach: dict[str, frozenset[str]] = field(default_factory=dict)
    shown: dict[str, str] = field(default_factory=dict)  # absolute path -> display path

    def including(self, source: str) -> list[str]:
        s = absolute(source)
        return sorted(k for k, files in self.reach.items() if s in files)


def kustomize_builds(kustomizations: Iterable[tuple[str, Path]]) -> Builds:
    """What the given kustomizations reach; nested directories are followed (read from disk if they are not
    among the given ones), remote bases are ignored."""
    out = Builds()
    memo: dict[str, frozenset[str]] = {}

    def reach(kfile: str, display: str, stack: frozenset[str]) -> frozenset[str]:
        if kfile in memo:
            return memo[kfile]
        if kfile in stack:
            return frozenset()
        k = kustomize.load(Path(kfile), display)
        files: set[str] = set()
        here = os.path.dirname(kfile)
        for entry in _entries(k.data if k is not None else {}):
            target = os.path.normpath(os.path.join(here, entry))
            if os.path.isdir(target):
                nested = kustomize.find_kustomization(Path(target))
                if nested is not None:
                    files |= reach(absolute(str(nested)), str(nested), stack | {kfile})
            else:
                files.add(target)
        memo[kfile] = frozenset(files)
        return memo[kfile]

    for display, path in kustomizations:
        kfile = absolute(str(path))
        out.shown[kfile] = display
        out.reach[kfile] = reach(kfile, display, frozenset())
    return out


def _entries(data: dict[str, Any]) -> list[str]:
    """Local paths a kustomization builds from: resources, bases, components, generator files."""
    out: list[str] = []
    for key in ("resources", "bases", "components"):
        for e in data.get(key) or []:
            if isinstance(e, str) and not _remote(e):
                out.append(e)
    for key in ("configMapGenerator", "secretGenerator"):
        for gen in data.get(key) or []:
            for e in (gen.get("files") or []) if isinstance(gen, dict) else []:
                if isinstance(e, str):
                    out.append(e.split("=", 1)[-1])  # `key=path` or `path`
    return out


def _remote(entry: str) -> bool:
    return "://" in entry or entry.startswith(("github.com/", "git@", "gitlab.com/", "bitbucket.org/"))


def tree_scope(sources: Sequence[str], builds: Builds) -> Scope:
    """The directories of `sources` and every build that includes one of them."""
    dirs = tuple(sorted({os.path.dirname(absolute(s)) for s in sources}))
    kfiles = sorted({k for s in sources for k in builds.including(s)})
    files = frozenset(f for k in kfiles for f in builds.reach[k])
    return Scope(TREE, dirs, files, tuple(builds.shown[k] for k in kfiles))
