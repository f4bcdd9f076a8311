"""`dra-migrate explain FILE|CODE`: the IR and every decision per workload, or a code's documentation."""

from __future__ import annotations

import dataclasses
import json
import re
import sys
from pathlib import Path
from typing import Any

import typer

from dra_migrate.cli.rules_cmd import explain_code
from dra_migrate.features import Target
from dra_migrate.lower.context import Options, RunContext
from dra_migrate.pipeline import FileResult, process_source


def register(app: typer.Typer) -> None:
    @app.command("explain")
    def explain(
        target: str = typer.Argument(..., help="A manifest file, or a diagnostic code such as DRA205."),
        target_version: str = typer.Option("1.34", "--target-version"),
        fmt: str = typer.Option("text", "--format", help="text or json"),
    ) -> None:
        """Show what dra-migrate understood and decided, without writing anything."""
        if re.fullmatch(r"(?i)DRA\d{3}", target):
            text = explain_code(target)
            if text is None:
                typer.echo(f"unknown code {target}", err=True)
                raise typer.Exit(2)
            typer.echo(text)
            return
        path = Path(target)
        try:
            raw = path.read_bytes()
        except OSError as exc:
            typer.echo(f"{target}: cannot read: {exc.strerror}", err=True)
            raise typer.Exit(2) from None
        ctx = RunContext(Options(target_version=target_version, api_version=Target(target_version).api_version))
        fr = process_source(target, raw, ctx)
        if fmt == "json":
            sys.stdout.write(json.dumps(explain_json(fr), indent=2, default=str) + "\n")
        else:
            sys.stdout.write(explain_text(fr))
        raise typer.Exit(2 if fr.failed else 0)


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
