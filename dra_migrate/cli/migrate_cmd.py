"""`dra-migrate migrate`: the main job."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from dra_migrate.diagnostics import Severity
from dra_migrate.features import SUPPORTED_VERSIONS as SUPPORTED_TARGETS
from dra_migrate.features import Target
from dra_migrate.lower.context import Options
from dra_migrate.run import RunConfig, report_json, run_migration


STRATEGIES = ("rewrite", "extended-resource")


def api_version_for(target: str) -> str:
    """Kept for callers written before `Target`; rules/features.yaml is the one source of the answer."""
    return Target(target).api_version


def register(app: typer.Typer) -> None:
    @app.command("migrate")
    def migrate(
        paths: list[str] = typer.Argument(..., help="Files or directories (recursive); '-' reads stdin, writes stdout."),
        check: bool = typer.Option(False, "--check", help="Write nothing; exit 1 if anything would change."),
        diff: bool = typer.Option(False, "--diff", help="Print a unified diff; write nothing."),
        output_dir: Path | None = typer.Option(None, "--output-dir", help="Write the migrated tree here."),
        claims_out: Path | None = typer.Option(
            None, "--claims-out", help="Put new ResourceClaimTemplates in this FILE (.yaml) or DIR."
        ),
        target_version: str = typer.Option("1.34", "--target-version", help="Kubernetes version to target."),
        fmt: str = typer.Option("text", "--format", help="Report format: text or json."),
        exclude: list[str] = typer.Option([], "--exclude", help="Glob of paths to skip (repeatable)."),
        rules: list[Path] = typer.Option([], "--rules", help="Extra rule directory (repeatable)."),
        max_file_size: int = typer.Option(8 * 1024 * 1024, "--max-file-size", help="Skip larger files (bytes)."),
        feature_gates: str = typer.Option("", "--feature-gates", help="Override gates: Name=true,Other=false."),
        no_validate: bool = typer.Option(False, "--no-validate", help="Skip official-schema validation."),
        move_cloud_labels: bool = typer.Option(
            False, "--move-cloud-labels", help="Move provider GPU labels (GKE, Karpenter…) into the claim too."
        ),
        strategy: str = typer.Option(
            "rewrite", "--strategy",
            help="rewrite (GPU requests → claims) or extended-resource (bridge: keep requests, emit DeviceClasses).",
        ),
        bridge_emit_gpu_class: bool = typer.Option(
            False, "--bridge-emit-gpu-class", help="Bridge: also emit a class for nvidia.com/gpu (the chart has one)."
        ),
        verbose: bool = typer.Option(False, "--verbose", "-v", help="Also show informational diagnostics."),
        quiet: bool = typer.Option(False, "--quiet", "-q", help="Only errors."),
    ) -> None:
        """Rewrite GPU requests to DRA claims (in place by default)."""
        if target_version not in SUPPORTED_TARGETS:
            typer.echo(f"error: --target-version must be one of {', '.join(SUPPORTED_TARGETS)}", err=True)
            raise typer.Exit(2)
        if strategy not in STRATEGIES:
            typer.echo(f"error: --strategy must be one of {', '.join(STRATEGIES)}", err=True)
            raise typer.Exit(2)
        if fmt not in ("text", "json"):
            typer.echo("error: --format must be text or json", err=True)
            raise typer.Exit(2)
        try:
            from dra_migrate.features import parse_feature_gates

            gates = parse_feature_gates(feature_gates) if feature_gates else {}
        except ValueError as exc:
            typer.echo(f"error: --feature-gates: {exc}", err=True)
            raise typer.Exit(2) from None
        mode = "diff" if diff else "check" if check else "write"
        stdin_mode = list(paths) == ["-"]
        cfg = RunConfig(
            paths,
            mode="check" if stdin_mode and mode == "write" else mode,
            output_dir=output_dir,
            claims_out=claims_out,
            options=Options(
                target_version=target_version,
                api_version=Target(target_version).api_version,
                move_cloud_labels=move_cloud_labels,
                feature_gates=gates,
                validate=not no_validate,
                strategy=strategy,
                bridge_emit_gpu_class=bridge_emit_gpu_class,
            ),
            excludes=exclude,
            max_file_size=max_file_size,
            rule_dirs=rules,
        )
        result = run_migration(cfg)
        if stdin_mode and mode == "write" and result.files:
            f = result.files[0]
            sys.stdout.buffer.write(f.output if f.output is not None else f.original)
        for d in result.diffs:
            sys.stdout.write(d)
        if fmt == "json":
            sys.stdout.write(report_json(cfg, result) + "\n")
        else:
            _text_report(result, verbose, quiet, mode)
        raise typer.Exit(result.exit_code)


def _text_report(result, verbose: bool, quiet: bool, mode: str) -> None:  # type: ignore[no-untyped-def]
    out = sys.stderr
    shown = 0
    for d in result.all_diagnostics:
        if d.severity is Severity.INFO and not verbose:
            continue
        if quiet and d.severity is not Severity.ERROR:
            continue
        out.write(d.render() + "\n")
        shown += 1
    if quiet:
        return
    changed = [f for f in result.files if f.changed]
    failed = [f for f in result.files if f.failed]
    verb = {"write": "changed", "check": "would change", "diff": "would change"}[mode]
    out.write(
        f"{result.scanned} file(s) scanned, {len(result.files)} with GPU keys, {len(changed)} {verb}, "
        f"{len(result.new_files)} new file(s), {len(failed)} left untouched because of errors\n"
    )
