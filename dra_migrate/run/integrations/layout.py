"""Repository layouts seen by a whole run: kustomize directories and Helm charts.

`run_migration` asks four things: note every file read (`note`), decide what the layout needs once the files
that may need migration are known and before any is translated (`index`), is this file handled here instead of
by the compiler (`intercept`), refine the compiler's diagnostics for it (`refine`), and finish after the
workloads are migrated (`finish`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from dra_migrate.diagnostics.model import Diagnostic
from dra_migrate.run.integrations import kustomize
from dra_migrate.run.integrations.kustomize_layout import KustomizeRun
from dra_migrate.source import helm
from dra_migrate.source.reader import is_helm_template_path

if TYPE_CHECKING:
    from dra_migrate.lower.context import RunContext
    from dra_migrate.pipeline import FileResult
    from dra_migrate.ruleset.kinds import KindRuleSet
    from dra_migrate.run.model import RunConfig, RunResult
    from dra_migrate.source.discover import Found


class Layout:
    def __init__(self) -> None:
        self.kustomize = KustomizeRun()

    def note(self, found: Found, raw: bytes) -> None:
        """Every file the run read: kustomizations are remembered."""
        self.kustomize.note(found, raw)

    def kustomization_files(self) -> list[tuple[str, Path]]:
        """(display, path) of every kustomization the run noted, its repository context's too: the sharing
        pre-pass follows their builds, before `index` (whose translations need the sharing configs)."""
        return sorted((found.display, found.path) for found, _raw in self.kustomize.noted.values())

    def index(self, candidates: Sequence[tuple[Found, bytes]], cfg: RunConfig, rules: KindRuleSet,
              ctx: RunContext) -> None:
        """Before translation: the kustomize builds of `candidates` (the files that may hold GPU requests),
        what their migration needs, and the files refused because their build could not be kept right.
        `ctx`: the run's context, whose options and pre-pass facts (as they are then) their translations use."""
        self.kustomize.prepare(candidates, cfg.paths, cfg.claims_out, rules, ctx,
                               read_repository=getattr(cfg, "repo_context", False))

    def builds_of(self, path: Path | str) -> frozenset[Path]:
        """The directories of the kustomize roots whose build includes the file: the objects applied together
        with its objects. Empty when no kustomization the run knows includes it (it is applied on its own, or
        with the other files of its directory)."""
        prepared = self.kustomize.prepared
        return prepared.index.roots_of(Path(path)) if prepared is not None else frozenset()

    def intercept(self, found: Found, raw: bytes) -> list[Diagnostic] | None:
        """Diagnostics for a file the compiler must not rewrite; None when the compiler should process it."""
        if found.name in kustomize.KUSTOMIZATION_NAMES:
            reports = self.kustomize.kustomization_reports(found)
            return reports if reports is not None else ([] if self.kustomize.prepared is not None else None)
        handled = self.kustomize.intercept(found, raw)
        if handled is not None:
            return handled
        if is_helm_template_path(found.path):
            return helm.scan_template(found.display, raw)
        return None

    def refuses(self, found: Found) -> bool:
        """Whether `found` is a GPU workload file the kustomize layout keeps from migrating (its build could not
        be kept right): a file with GPU keys left as is, not a patch or a report."""
        return self.kustomize.refuses(found)

    def refine(self, found: Found, fr: FileResult) -> None:
        """A chart's values file: replace the generic 'no apiVersion/kind' warning by Helm advice per key."""
        if not any(d.code == "DRA108" for d in fr.diagnostics) or not helm.is_values_file(found.path):
            return
        fr.diagnostics[:] = [d for d in fr.diagnostics if d.code != "DRA108"]
        fr.diagnostics.extend(helm.scan_values(found.display, fr.original))

    def finish(self, cfg: RunConfig, result: RunResult) -> None:
        """The kustomize edits that keep each build right after the migration."""
        self.kustomize.finish(cfg, result)

