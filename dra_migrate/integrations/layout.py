"""Repository layouts seen by a whole run: kustomize directories and Helm charts.

`run_migration` asks three things: is this file handled here instead of by the compiler (`intercept`),
refine the compiler's diagnostics for it (`refine`), and finish after the claims files are written (`finish`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from dra_migrate.diagnostics import Diagnostic, Location, make
from dra_migrate.integrations import helm, kustomize
from dra_migrate.pipeline import might_need_migration

if TYPE_CHECKING:
    from dra_migrate.discover import Found
    from dra_migrate.pipeline import FileResult
    from dra_migrate.run import RunConfig, RunResult


class Layout:
    def __init__(self, found: Sequence[Found]) -> None:
        self.kustomizations: dict[Path, kustomize.Kustomization | None] = {}  # by resolved path
        self._unparsed: dict[Path, Found] = {}  # kustomizations without patches, parsed if ever asked about
        self.patch_files: dict[Path, kustomize.PatchRef] = {}
        for f in found:
            if f.path.name in kustomize.KUSTOMIZATION_NAMES:
                key = f.path.resolve()
                if key in self.kustomizations or key in self._unparsed:
                    continue
                try:
                    with open(f.path, "rb") as fh:
                        mentions_patches = b"atch" in fh.read()  # patches, patchesJson6902, patchesStrategicMerge
                except OSError:
                    mentions_patches = True  # load() reports nothing either way; keep one code path
                if not mentions_patches:
                    self._unparsed[key] = f
                    continue
                k = kustomize.load(f.path, f.display)
                if k is not None:
                    self.patch_files.update(k.patch_files)
                    if not might_need_migration(k.text.encode("utf-8")):
                        # never asked about (only files that may hold GPU requests are): keep only its patches
                        self._unparsed[key] = f
                        continue
                self.kustomizations[key] = k

    def _kustomization(self, resolved: Path) -> kustomize.Kustomization | None:
        pending = self._unparsed.pop(resolved, None)
        if pending is not None:
            self.kustomizations[resolved] = kustomize.load(pending.path, pending.display)
        return self.kustomizations.get(resolved)

    def intercept(self, found: Found, raw: bytes) -> list[Diagnostic] | None:
        """Diagnostics for a file the compiler must not rewrite; None when the compiler should process it."""
        from dra_migrate.source.reader import is_helm_template_path

        resolved = found.path.resolve()
        if found.path.name in kustomize.KUSTOMIZATION_NAMES:
            k = self._kustomization(resolved)
            return kustomize.inline_patch_diagnostics(k) if k is not None else None
        ref = self.patch_files.get(resolved)
        if ref is not None:
            return kustomize.patch_file_diagnostics(found.display, raw, ref)
        if is_helm_template_path(found.path):
            return helm.scan_template(found.display, raw)
        return None

    def refine(self, found: Found, fr: FileResult) -> None:
        """A chart's values file: replace the generic 'no apiVersion/kind' warning by Helm advice per key."""
        if not helm.is_values_file(found.path) or not any(d.code == "DRA108" for d in fr.diagnostics):
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
