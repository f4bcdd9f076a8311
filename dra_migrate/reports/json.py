"""The JSON report (schema: schemas/report.schema.json, `schemaVersion` 1)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from dra_migrate.diagnostics import Severity

if TYPE_CHECKING:
    from dra_migrate.run import RunConfig, RunResult

SCHEMA_VERSION = 1


def document(cfg: RunConfig, result: RunResult) -> dict[str, Any]:
    from dra_migrate import __version__

    diags = result.all_diagnostics
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
        "files": [{"path": f.path, "changed": f.changed, "failed": f.failed} for f in result.files],
        "diagnostics": [d.to_json() for d in diags],
    }


def render(cfg: RunConfig, result: RunResult) -> str:
    return json.dumps(document(cfg, result), indent=2, ensure_ascii=False)
