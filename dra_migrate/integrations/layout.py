"""Repository layouts seen by a whole run: kustomize directories and Helm charts.

`run_migration` asks three things: is this file handled here instead of by the compiler (`intercept`),
refine the compiler's diagnostics for it (`refine`), and finish after the claims files are written (`finish`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from dra_migrate.diagnostics import Diagnostic, Location, make
from dra_migrate.discover import real_path
from dra_migrate.integrations import helm, kustomize

if TYPE_CHECKING:
    from dra_migrate.discover import Found
    from dra_migrate.pipeline import FileResult
    from dra_migrate.run import RunConfig, RunResult


# Paths a kustomization's text mentions (patch paths are paths of manifest files relative to it).
_MENTIONED_FILE = re.compile(rb"([^\s'\"\[\]{},:]+\.(?:ya?ml|json))")


class Layout:
    """Filled during the run's read of every file (`note`), indexed once the files that may hold GPU requests
    are known (`index`): a kustomization is parsed only if it names one of them, or is one of them."""

    def __init__(self) -> None:
        # by the path as the walk spelled it (the same Found comes back to intercept)
        self.kustomizations: dict[str, kustomize.Kustomization | None] = {}
        self._unparsed: dict[str, tuple[Found, bytes | None]] = {}  # parsed if ever needed
        self.patch_files: dict[Path, kustomize.PatchRef] = {}  # by resolved path

    def note(self, found: Found, raw: bytes) -> None:
        """Every file the run read: kustomizations are remembered (their text only if they list patches)."""
        if found.name in kustomize.KUSTOMIZATION_NAMES:
            # patches, patchesJson6902, patchesStrategicMerge
            self._unparsed.setdefault(os.fspath(found), (found, raw if b"atch" in raw else None))

    def index(self, candidates: Sequence[Found]) -> None:
        """Parse the kustomizations whose text names one of `candidates` (the files that may hold GPU
        requests) by a path relative to it, and record the patch files they list."""
        wanted = {os.path.normpath(os.fspath(c)) for c in candidates}
        for key, (found, raw) in list(self._unparsed.items()):
            if raw is None:
                continue
            here = os.path.dirname(key)
            mentions = (os.path.normpath(os.path.join(here, os.fsdecode(m))) for m in _MENTIONED_FILE.findall(raw))
            if not any(m in wanted for m in mentions):
                continue
            k = self._load(key, found)
            if k is not None:
                self.patch_files.update(k.patch_files)
        # the texts were kept for this search only
        self._unparsed = {key: (found, None) for key, (found, _raw) in self._unparsed.items()}

    def _load(self, key: str, found: Found) -> kustomize.Kustomization | None:
        self._unparsed.pop(key, None)
        k = self.kustomizations[key] = kustomize.load(found.path, found.display)
        return k

    def _kustomization(self, key: str) -> kustomize.Kustomization | None:
        pending = self._unparsed.get(key)
        if pending is not None:
            return self._load(key, pending[0])
        return self.kustomizations.get(key)

    def intercept(self, found: Found, raw: bytes) -> list[Diagnostic] | None:
        """Diagnostics for a file the compiler must not rewrite; None when the compiler should process it."""
        from dra_migrate.source.reader import is_helm_template_path

        if found.name in kustomize.KUSTOMIZATION_NAMES:
            k = self._kustomization(os.fspath(found))
            return kustomize.inline_patch_diagnostics(k) if k is not None else None
        ref = self.patch_files.get(real_path(os.fspath(found))) if self.patch_files else None
        if ref is not None:
            return kustomize.patch_file_diagnostics(found.display, raw, ref)
        if is_helm_template_path(found.path):
            return helm.scan_template(found.display, raw)
        return None

    def refine(self, found: Found, fr: FileResult) -> None:
        """A chart's values file: replace the generic 'no apiVersion/kind' warning by Helm advice per key."""
        if not any(d.code == "DRA108" for d in fr.diagnostics) or not helm.is_values_file(found.path):
            return
        fr.diagnostics[:] = [d for d in fr.diagnostics if d.code != "DRA108"]
        fr.diagnostics.extend(helm.scan_values(found.display, fr.original))

    def finish(self, cfg: RunConfig, result: RunResult) -> None:
        """Add a claims file written into a kustomize directory to that kustomization's resources."""
        if cfg.claims_out is None or cfg.output_dir is not None:
            return
        for display in list(result.new_files):
            target = Path(display)
            kfile = kustomize.find_kustomization(target.resolve().parent)
            if kfile is None:
                continue
            entry = os.path.relpath(target.resolve(), kfile.parent).replace(os.sep, "/")
            edited = kustomize.add_resource(kfile, entry)
            kdisplay = str(kfile) if target.is_absolute() else os.path.relpath(kfile)
            if isinstance(edited, str):
                result.diagnostics.append(
                    make("DRA708", f"{entry} not added to resources: {edited}", Location(kdisplay))
                )
                continue
            old, new = edited
            if old == new:
                continue
            from dra_migrate.pipeline import FileResult

            result.files.append(FileResult(kdisplay, old, new))  # a changed file: exit code 1 like any change
            if cfg.mode == "diff":
                from dra_migrate.run import unified_diff

                result.diffs.append(unified_diff(kdisplay, old, new))
            elif cfg.mode == "write":
                from dra_migrate.emit.writer import write_atomic

                write_atomic(kfile, new)
            result.diagnostics.append(make("DRA703", f"{entry} added to resources", Location(kdisplay)))
