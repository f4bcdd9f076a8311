"""`dra-migrate explain FILE|CODE`: the IR and every decision per workload, or a code's documentation."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import sys
from typing import TYPE_CHECKING, Any

from dra_migrate.cli.rules_cmd import explain_code
from dra_migrate.cli.settings import Settings, run_config
from dra_migrate.diagnostics.model import Severity
from dra_migrate.pipeline import FileResult
from dra_migrate.run.driver import run_migration

if TYPE_CHECKING:
    import typer


def execute(s: Settings) -> int:
    """A diagnostic code's documentation, or what a run on the file or directory would understand and decide,
    per workload, without writing anything: the same run (settings, repository context) as `migrate`."""
    target = s.paths[0]
    if re.fullmatch(r"(?i)DRA\d{3}", target) and not os.path.exists(target):
        text = explain_code(target)
        if text is None:
            sys.stderr.write(f"unknown code {target}\n")
            return 2
        sys.stdout.write(text + "\n")
        return 0
    if not os.path.exists(target):
        sys.stderr.write(f"{target}: cannot read: no such file or directory\n")
        return 2
    # lazy: start-up (reports.policy: ~1 ms, only execute() needs it)
    from dra_migrate.reports.policy import Policy, apply

    result = run_migration(run_config(s, "check", keep_ir=True))
    apply(Policy(s.select, s.ignore, s.strict, s.fail_on), result)
    files = result.files
    if not files and os.path.isfile(target):  # no GPU key: nothing to explain, said as for any file
        files = [FileResult(target, b"")]
    run_level = [d for d in result.diagnostics if d.severity is not Severity.INFO or s.verbose]
    if s.format == "json":
        doc: dict[str, Any] = explain_json(files[0]) if os.path.isfile(target) and len(files) == 1 else {
            "path": target, "files": [explain_json(f) for f in files]}
        doc["run"] = [d.to_json() for d in run_level]
        sys.stdout.write(json.dumps(doc, indent=2, default=str) + "\n")
    else:
        sys.stdout.write("".join(explain_text(f) for f in files) or f"{target}: no file with GPU keys\n")
        sys.stdout.write("".join(f"{d.render()}\n" for d in run_level))
    return result.exit_code if result.exit_code == 2 else 0


def register(app: typer.Typer) -> None:
    # lazy: start-up (cli.declare: ~1 ms, only register() needs it)
    from dra_migrate.cli.declare import command

    command(app, "explain", execute, argument="target", many=False,
            argument_help="A manifest file or directory, or a diagnostic code such as DRA205.",
            doc="Show what dra-migrate understood and decided, without writing anything.")


def explain_json(fr: FileResult) -> dict[str, Any]:
    return {
        "file": fr.path,
        "workloads": [
            dataclasses.asdict(w) | {"diagnostics": [d.to_json() for d in w.diagnostics]} for w in fr.workloads
        ],
        "decisions": [d.to_json() for d in fr.diagnostics],
        "selection": [
            {
                "workload": tl.workload.ref,
                "podTemplate": ".".join(map(str, tl.template.path)),
                "decisions": tl.decisions,
            }
            for tl in fr.lowered
            if tl.decisions
        ],
        "wouldChange": fr.changed,
    }


def explain_text(fr: FileResult) -> str:
    lines: list[str] = [f"file {fr.path}"]
    for w in fr.workloads:
        lines.append(f"  workload {w.ref} ({w.api_version}) at line {w.line}")
        for pt in w.pod_templates:
            where = ".".join(str(p) for p in pt.path)
            lines.append(f"    pod template {where or '(root)'} (line {pt.line})")
            for c in pt.containers:
                gpus = ", ".join(f"{d.resource}={d.count}" for d in c.demands) or "no GPUs"
                lines.append(f"      {c.role.value:<7} {c.name}: {gpus}")
            if pt.pod_claims:
                lines.append("      existing claims: " + ", ".join(c.name for c in pt.pod_claims))
            if pt.node_selector:
                lines.append("      nodeSelector: " + ", ".join(f"{k}={v}" for k, v in pt.node_selector.items()))
            decisions = [d for tl in fr.lowered if tl.template is pt for d in tl.decisions]
            if decisions:
                lines.append("      GPU selection:")
                lines.extend(f"        {d}" for d in decisions)
    lines.append("  decisions:")
    for d in fr.diagnostics:
        lines.append(f"    {d.render()}")
    if not fr.diagnostics:
        lines.append("    (none: nothing to migrate)")
    lines.append(f"  result: {'would change the file' if fr.changed else 'no change'}")
    return "\n".join(lines) + "\n"
