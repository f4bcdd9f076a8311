"""SARIF 2.1.0 (validated against schemas/sarif-2.1.0.schema.json): one run, every code as a rule."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from dra_migrate import __version__
from dra_migrate.diagnostics.model import Diagnostic, Severity
from dra_migrate.reports.anchor import is_pseudo, run_anchor

if TYPE_CHECKING:
    from dra_migrate.run.model import RunConfig, RunResult

SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
INFORMATION_URI = "https://github.com/dra-migrate/dra-migrate"
_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def rules() -> list[dict[str, Any]]:
    # lazy: start-up (diagnostics.codes: ~1 ms, only rules() needs it)
    from dra_migrate.diagnostics.codes import CODES

    out = []
    for code in sorted(CODES.values(), key=lambda c: c.code):
        out.append(
            {
                "id": code.code,
                "name": "".join(w.capitalize() for w in code.name.split("-")),
                "shortDescription": {"text": code.summary},
                "fullDescription": {"text": code.explanation},
                "help": {
                    "text": f"{code.explanation} (`dra-migrate explain {code.code}`)",
                    "markdown": f"{code.explanation}\n\nRun `dra-migrate explain {code.code}` for details.",
                },
                "defaultConfiguration": {"level": _LEVEL[code.severity]},
                "properties": {"tags": [code.name]},
            }
        )
    return out


def artifact_uri(file: str, base: Path | None = None) -> str | None:
    """A relative URI with forward slashes when the file is under `base` (default: the working directory)."""
    if not file or file.startswith("<"):
        return None
    base = (base or Path.cwd()).resolve()
    p = Path(file)
    absolute = p if p.is_absolute() else (Path.cwd() / p)
    absolute = Path(os.path.normpath(absolute))
    try:
        rel = absolute.relative_to(base)
    except ValueError:
        return absolute.as_uri()
    return quote(rel.as_posix())


def result_object(
    d: Diagnostic, rule_index: dict[str, int], base: Path | None = None, anchor: str = "."
) -> dict[str, Any]:
    """One result; a finding about the run as a whole is located at `anchor` (reports.anchor), since code
    scanning rejects the whole upload when one result has no physical location."""
    text = f"[{d.object}] {d.message}" if d.object else d.message
    res: dict[str, Any] = {
        "ruleId": d.code,
        "level": _LEVEL[d.severity],
        "message": {"text": text},
    }
    if d.code in rule_index:
        res["ruleIndex"] = rule_index[d.code]
    pseudo = is_pseudo(d.location.file)
    uri = artifact_uri(anchor if pseudo else d.location.file, base) or "."
    physical: dict[str, Any] = {"artifactLocation": {"uri": uri}}
    if not uri.startswith("file:"):
        physical["artifactLocation"]["uriBaseId"] = "%SRCROOT%"
    if d.location.line > 0 and not pseudo:
        physical["region"] = {"startLine": d.location.line, "startColumn": max(d.location.col, 1)}
    res["locations"] = [{"physicalLocation": physical}]
    return res


def document(cfg: RunConfig, result: RunResult, base: Path | None = None) -> dict[str, Any]:
    rule_list = rules()
    index = {r["id"]: i for i, r in enumerate(rule_list)}
    root = (base or Path.cwd()).resolve()
    anchor = run_anchor(cfg, result)
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "dra-migrate",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "informationUri": INFORMATION_URI,
                        "rules": rule_list,
                    }
                },
                "originalUriBaseIds": {"%SRCROOT%": {"uri": root.as_uri() + "/"}},
                "columnKind": "unicodeCodePoints",
                "results": [result_object(d, index, base, anchor) for d in result.all_diagnostics],
                "properties": {
                    "mode": cfg.mode,
                    "targetVersion": cfg.options.target_version,
                    "exitCode": result.exit_code,
                },
            }
        ],
    }


def render(cfg: RunConfig, result: RunResult) -> str:
    return json.dumps(document(cfg, result), indent=2, ensure_ascii=False)
