"""`dra-migrate migrate`: the main job."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from dra_migrate.features import SUPPORTED_VERSIONS as SUPPORTED_TARGETS
from dra_migrate.features import Target
from dra_migrate.lower.context import Options
from dra_migrate.run import RunConfig, run_migration

STRATEGIES = ("rewrite", "extended-resource")


def api_version_for(target: str) -> str:
    """Kept for callers written before `Target`; rules/features.yaml is the one source of the answer."""
    return Target(target).api_version


def register(app: typer.Typer) -> None:
    @app.command("migrate")
    def migrate(
        paths: list[str] = typer.Argument(
            ..., help="Files or directories (recursive); '-' reads stdin, writes stdout."
        ),
        check: bool = typer.Option(False, "--check", help="Write nothing; exit 1 if anything would change."),
        diff: bool = typer.Option(False, "--diff", help="Print a unified diff; write nothing."),
        output_dir: Path | None = typer.Option(None, "--output-dir", help="Write the migrated tree here."),
        claims_out: Path | None = typer.Option(
            None, "--claims-out", help="Put new ResourceClaimTemplates in this FILE (.yaml) or DIR."
        ),
        target_version: str = typer.Option("1.34", "--target-version", help="Kubernetes version to target."),
        fmt: str = typer.Option("text", "--format", help="Report format on stdout: text, json, sarif, github."),
        reports: list[str] = typer.Option([], "--report", help="Also write FORMAT=FILE (repeatable)."),
        no_gitignore: bool = typer.Option(False, "--no-gitignore", help="Also walk into .gitignore'd paths."),
        strict: bool = typer.Option(False, "--strict", help="A dra-migrate.io/skip annotation is an error."),
        no_progress: bool = typer.Option(False, "--no-progress", help="No progress bar or summary table."),
        exclude: list[str] = typer.Option([], "--exclude", help="Glob of paths to skip (repeatable)."),
        rules: list[Path] = typer.Option([], "--rules", help="Extra rule directory (repeatable)."),
        max_file_size: int = typer.Option(8 * 1024 * 1024, "--max-file-size", help="Skip larger files (bytes)."),
        feature_gates: str = typer.Option("", "--feature-gates", help="Override gates: Name=true,Other=false."),
        no_validate: bool = typer.Option(False, "--no-validate", help="Skip official-schema validation."),
        move_cloud_labels: bool = typer.Option(
            False, "--move-cloud-labels", help="Move provider GPU labels (GKE, Karpenter…) into the claim too."
        ),
        sharing: str = typer.Option(
            "shared-claim",
            "--sharing",
            help="Time-sliced/MPS GPUs: shared-claim (one named ResourceClaim per sharing group) or exclusive.",
        ),
        sharing_config: list[Path] = typer.Option(
            [], "--sharing-config", help="A device plugin config (ConfigMap, values or config file) kept elsewhere."
        ),
        share_within_pod: bool = typer.Option(
            False, "--share-within-pod", help="Containers of one pod share one GPU request."
        ),
        no_dra_quota: bool = typer.Option(
            False, "--no-dra-quota", help="Report GPU ResourceQuotas but do not add the DRA device-class entry."
        ),
        strategy: str = typer.Option(
            "rewrite",
            "--strategy",
            help="rewrite (GPU requests → claims) or extended-resource (bridge: keep requests, emit DeviceClasses).",
        ),
        bridge_emit_gpu_class: bool = typer.Option(
            False, "--bridge-emit-gpu-class", help="Bridge: also emit a class for nvidia.com/gpu (the chart has one)."
        ),
        jobs: int | None = typer.Option(
            None,
            "--jobs",
            "-j",
            min=1,
            help="Worker processes (default: one per CPU when over 200 files have GPU keys; 1: serial).",
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
        from dra_migrate import reports as report_writers
        from dra_migrate.cli.progress import ProgressBar, stderr_is_tty, summary_table

        if fmt not in report_writers.FORMATS:
            typer.echo(f"error: --format must be one of {', '.join(report_writers.FORMATS)}", err=True)
            raise typer.Exit(2)
        try:
            from dra_migrate.features import parse_feature_gates

            gates = parse_feature_gates(feature_gates) if feature_gates else {}
        except ValueError as exc:
            typer.echo(f"error: --feature-gates: {exc}", err=True)
            raise typer.Exit(2) from None
        if sharing not in ("shared-claim", "exclusive"):
            typer.echo("error: --sharing must be shared-claim or exclusive", err=True)
            raise typer.Exit(2)
        try:
            extra_reports = [report_writers.parse_report_spec(r) for r in reports]
        except ValueError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from None
        tty = stderr_is_tty() and not no_progress
        progress = ProgressBar(tty)
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
                extra={
                    "sharing_strategy": sharing,
                    "share_within_pod": share_within_pod,
                    "dra_quota": not no_dra_quota,
                },
                strategy=strategy,
                bridge_emit_gpu_class=bridge_emit_gpu_class,
            ),
            excludes=exclude,
            max_file_size=max_file_size,
            rule_dirs=rules,
            sharing_configs=sharing_config,
            gitignore=not no_gitignore,
            progress=progress,
            jobs=jobs,
            keep_ir=False,  # the reports need counts and diagnostics only
        )
        cfg.options.extra["strict"] = strict
        try:
            result = run_migration(cfg)
        finally:
            progress.close()
        if stdin_mode and mode == "write" and result.files:
            f = result.files[0]
            sys.stdout.buffer.write(f.output if f.output is not None else f.original)
        for d in result.diffs:
            sys.stdout.write(d)
        for rfmt, rpath in extra_reports:
            text = report_writers.render(rfmt, cfg, result, verbose=verbose, quiet=quiet)
            try:
                Path(rpath).write_text(text if text.endswith("\n") or not text else text + "\n", encoding="utf-8")
            except OSError as exc:
                typer.echo(f"error: cannot write report {rpath}: {exc.strerror}", err=True)
                raise typer.Exit(2) from None
        if fmt == "text":
            if tty and not quiet:
                sys.stderr.write(report_writers.text.render(cfg, result, verbose=verbose, quiet=quiet, summary=False))
                sys.stderr.write(summary_table(result, mode))
            else:
                sys.stderr.write(report_writers.render("text", cfg, result, verbose=verbose, quiet=quiet))
        else:
            out = report_writers.render(fmt, cfg, result, verbose=verbose, quiet=quiet)
            sys.stdout.write(out if out.endswith("\n") or not out else out + "\n")
        raise typer.Exit(result.exit_code)
