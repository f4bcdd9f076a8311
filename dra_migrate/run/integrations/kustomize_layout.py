"""The kustomize part of a run. What the user deploys is the built output, so every property of a migrated pod
must hold there, not only in each file:

- a reference to a ResourceClaimTemplate/ResourceClaim survives namePrefix/nameSuffix: each kustomization that
  lists a workload with claims gets a transformer configuration (`configurations:`) naming the pod fields;
- every object a pod references is in its build: a new claims file is added to `resources:`;
- overlay patches of a migrated workload are carried over (kustomize_patches), or the workload is not migrated.

Decided once the run has read every file and before anything is translated (`prepare`): a workload whose
build cannot be kept right is refused there, so its file is never rewritten. `finish` makes the kustomize
edits once the workloads are migrated.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dra_migrate.diagnostics.model import Diagnostic
from dra_migrate.lower.context import RunContext
from dra_migrate.run.integrations import kustomize
from dra_migrate.run.integrations.kustomize import Kustomization
from dra_migrate.run.integrations.kustomize_files import KustomizeFiles, Prepared, display_of, resolved
from dra_migrate.run.integrations.kustomize_patches import Decisions
from dra_migrate.run.integrations.kustomize_tree import BuildIndex, discover_kustomizations

if TYPE_CHECKING:
    from dra_migrate.ruleset.kinds import KindRuleSet
    from dra_migrate.source.discover import Found


class KustomizeRun(KustomizeFiles):
    """Drives the kustomize part of a run: notes the kustomizations read, prepares the decisions before translation
    (kustomize_checks), answers for the files it reports instead of migrating, makes the edits at the end
    (kustomize_finish)."""

    def __init__(self) -> None:
        super().__init__()
        self.noted: dict[Path, tuple[Found, bytes]] = {}  # kustomization files the walk read, by real path
        self.loaded: dict[Path, Kustomization] = {}  # those of them that are kustomizations
        self.prepared: Prepared | None = None

    # --- during the read --------------------------------------------------------------------------------

    def note(self, found: Found, raw: bytes) -> None:
        """A file the run read. A kustomization is loaded now rather than in prepare(): the read often waits for
        the walk (the scout's), and what it does meanwhile is off the time to the first translation."""
        if found.name in kustomize.KUSTOMIZATION_NAMES:
            real = resolved(found.path)
            if real not in self.noted:
                self.noted[real] = (found, raw)
                k = kustomize.load(real, found.display, raw)
                if k is not None:
                    self.loaded[real] = k

    # --- before translation ------------------------------------------------------------------------------

    def prepare(self, candidates: Sequence[tuple[Found, bytes]], paths: Sequence[str], claims_out: Path | None,
                rules: KindRuleSet, run: RunContext, read_repository: bool = False) -> None:
        """`read_repository`: the run noted the kustomizations of the whole repository (a run on some files
        reads the repository around them); only those under `paths` are the run's to edit."""
        # lazy: start-up (run.integrations: ~2 ms, only prepare() needs it)
        from dra_migrate.run.integrations import kustomize_checks

        self._rules, self._run = rules, run
        for found, raw in candidates:
            real = resolved(found.path)
            self._raw[real] = raw
            self._display[real] = found.display
        loaded = dict(self.loaded)
        given = [Path(os.path.realpath(p)) for p in paths if p != "-"]
        editable = {r for r in loaded if any(g == r or g in r.parents for g in given)}
        near: Near = {}
        for real in self._raw:  # a file named alone still belongs to the kustomizations beside and above it
            for k in _listing(real, loaded, near):
                loaded.setdefault(k.path, k)
                editable.add(k.path)
        if not loaded:
            return
        listed = {t for k in loaded.values() for _e, t, _l in k.resources}
        owned = [r for r in self._raw if r in listed]
        if owned and not read_repository:  # overlays elsewhere in the repository patch these bases too
            for k in discover_kustomizations(owned, paths):
                loaded.setdefault(k.path, k)
        index = BuildIndex(loaded.values())
        self.prepared = Prepared(index, Decisions(), editable)
        kustomize_checks.prepare(self, self.prepared, claims_out)

    # --- during translation ------------------------------------------------------------------------------

    def intercept(self, found: Found, raw: bytes) -> list[Diagnostic] | None:
        p = self.prepared
        if p is None:
            return None
        real = resolved(found.path)
        if real in p.refused:
            return p.refused[real]
        if real in p.reports or real in p.patch_files or real in p.config_files:
            return p.reports.get(real, [])
        return None

    def refuses(self, found: Found) -> bool:
        return self.prepared is not None and resolved(found.path) in self.prepared.refused

    def kustomization_reports(self, found: Found) -> list[Diagnostic] | None:
        p = self.prepared
        if p is None:
            return None
        return p.reports.get(resolved(found.path))

    # --- after translation ---------------------------------------------------------------------------------

    def finish(self, cfg: Any, result: Any) -> None:
        if self.prepared is None:
            return
        # lazy: start-up (run.integrations: ~11 ms, only finish() needs it)
        from dra_migrate.run.integrations import kustomize_finish

        kustomize_finish.finish(self, self.prepared, cfg, result)


Near = dict[Path, tuple[Kustomization | None, frozenset[Path], bool]]


def _listing(file: Path, loaded: dict[Path, Kustomization], near: Near) -> list[Kustomization]:
    """The kustomizations in the file's directory and the directories above it that list it in resources
    (`near`: each directory's kustomization, what it lists, and whether the walk up stops there, looked up once
    for all the run's files)."""
    out: list[Kustomization] = []
    d = file.parent
    for _ in range(8):
        if d not in near:
            found = kustomize.find_kustomization(d)
            k = None if found is None else loaded.get(resolved(found)) or kustomize.load(resolved(found),
                                                                                      display_of(found))
            listed = frozenset(t for _e, t, _l in k.resources) if k is not None else frozenset()
            near[d] = (k, listed, (d / ".git").exists() or d.parent == d)
        k, listed, top = near[d]
        if k is not None and file in listed:
            out.append(k)
        if top:
            break
        d = d.parent
    return out
