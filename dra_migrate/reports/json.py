"""The JSON report (schema: schemas/report.schema.json, `schemaVersion` 1)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from dra_migrate import __version__
from dra_migrate.diagnostics.model import Severity

if TYPE_CHECKING:
    from dra_migrate.run.model import RunConfig, RunResult

SCHEMA_VERSION = 1


def document(cfg: RunConfig, result: RunResult) -> dict[str, Any]:
    diags = result.all_diagnostics
    diffs = diffs_by_file(result)
    return {
        "schemaVersion": SCHEMA_VERSION,
        "tool": {"name": "dra-migrate", "version": __version__},
        "target": {"kubernetes": cfg.options.target_version, "apiVersion": cfg.options.api_version},
        "mode": cfg.mode,
        "summary": {
            "filesScanned": result.scanned,
            "filesParsed": len(result.files),
            "filesChanged": sum(1 for f in result.files if f.changed),
            "filesFailed": sum(1 for f in result.files if f.failed),
            "newFiles": sorted(result.new_files),
            "workloadsMigrated": sum(f.migrated_workloads for f in result.files),
            "errors": sum(1 for d in diags if d.severity is Severity.ERROR),
            "warnings": sum(1 for d in diags if d.severity is Severity.WARNING),
            "exitCode": result.exit_code,
        },
        "files": [_file(f.path, f.changed, f.failed, diffs.get(f.path)) for f in result.files],
        "created": [_file(p, True, False, diffs.get(p)) for p in sorted(result.new_files)],
        "diagnostics": [d.to_json() for d in diags],
    }


def diffs_by_file(result: RunResult) -> dict[str, str]:
    """The run's diffs (run.unified_diff: `--- a/<path>` first) by the path of their file."""
    by_header = {d.split("\n", 1)[0]: d for d in result.diffs}
    out = {}
    for path in [*(f.path for f in result.files), *result.new_files]:
        d = by_header.get("--- a/" + path.lstrip("/"))
        if d is not None:
            out[path] = d
    return out


def _file(path: str, changed: bool, failed: bool, diff: str | None) -> dict[str, Any]:
    """A file's entry; with --diff, the change it would get (stdout carries the report and nothing else)."""
    out: dict[str, Any] = {"path": path, "changed": changed, "failed": failed}
    if diff is not None:
        out["diff"] = diff
    return out


def render(cfg: RunConfig, result: RunResult) -> str:
    return json.dumps(document(cfg, result), indent=2, ensure_ascii=False)
