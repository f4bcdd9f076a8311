"""Which workloads a device plugin sharing config governs: the workloads of its own cluster only.

A repository may hold the manifests of several clusters, each with its own device plugin config. A config
found in the scanned tree applies to

- the files of its own directory and below (the usual `clusters/<name>/` layout);
- the files of every kustomize build that includes it (kustomizations whose `resources`, `bases`,
  `components` or generator `files` reach it, directly or through other kustomizations);
- the same for the ClusterPolicy / Helm values that point at its ConfigMap;

unless `.dra-migrate.yaml` maps it explicitly (`sharing-scopes`), which then is its whole scope. A config
given with `--sharing-config` applies to every path of the run. Paths are compared as absolute, normalised
paths (the run's display paths are relative to the working directory).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

GLOBAL, MAPPED, TREE = "global", "mapped", "tree"


def absolute(path: str) -> str:
    return os.path.normpath(os.path.abspath(path))


@dataclass(frozen=True, slots=True)
class ScopeMapping:
    """One entry of `sharing-scopes` in `.dra-migrate.yaml`: the configs in files matching `config` apply to
    the files matching `paths` (gitignore-style patterns, relative to `base`, the configuration's directory)."""

    base: str
    config: str
    paths: tuple[str, ...]
    where: str = ".dra-migrate.yaml"  # the configuration file that holds it (for messages)

    def matches_config(self, source: str) -> bool:
        return _matches(self.base, (self.config,), source)

    def covers(self, path: str) -> bool:
        return _matches(self.base, self.paths, path)


def _matches(base: str, patterns: Sequence[str], path: str) -> bool:
    rel = os.path.relpath(absolute(path), base)
    if rel == os.pardir or rel.startswith(os.pardir + os.sep):
        return False
    return _spec(tuple(patterns)).match_file(Path(rel).as_posix())


_SPECS: dict[tuple[str, ...], Any] = {}


def _spec(patterns: tuple[str, ...]) -> Any:
    spec = _SPECS.get(patterns)
    if spec is None:
        # lazy: start-up (pathspec: ~10 ms, only _spec() needs it)
        import pathspec

        spec = _SPECS[patterns] = pathspec.GitIgnoreSpec.from_lines(patterns)
    return spec


@dataclass(slots=True)
class Scope:
    """Where one config (or config pointer) applies."""

    kind: str = GLOBAL  # global | mapped | tree
    dirs: tuple[str, ...] = ()  # tree: absolute directories whose files (at any depth) are in scope
    files: frozenset[str] = frozenset()  # tree: absolute files of kustomize builds that include the config
    builds: tuple[str, ...] = ()  # tree: those kustomizations, as displayed
    mappings: tuple[ScopeMapping, ...] = ()  # mapped

    def contains(self, path: str) -> bool:
        if self.kind == GLOBAL:
            return True
        p = absolute(path)
        if self.kind == MAPPED:
            return any(m.covers(p) for m in self.mappings)
        return p in self.files or any(p == d or p.startswith(d.rstrip(os.sep) + os.sep) for d in self.dirs)

    def describe(self) -> str:
        if self.kind == GLOBAL:
            return "every path of the run (--sharing-config)"
        if self.kind == MAPPED:
            return "sharing-scopes " + "; ".join(", ".join(m.paths) for m in self.mappings)
        where = [f"{_shown(d)}/ and below" for d in self.dirs]
        if self.builds:
            where.append("the kustomize build(s) of " + ", ".join(self.builds))
        return ", ".join(where)


def _shown(directory: str) -> str:
    rel = os.path.relpath(directory)
    return "." if rel == os.curdir else rel if not rel.startswith(os.pardir) else directory


def mapped_scope(source: str, mappings: Sequence[ScopeMapping]) -> Scope | None:
    chosen = tuple(m for m in mappings if m.matches_config(source))
    return Scope(MAPPED, mappings=chosen) if chosen else None
