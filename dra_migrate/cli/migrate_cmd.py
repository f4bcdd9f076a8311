"""`dra-migrate migrate`: the main job.

The command itself (`execute`) takes plain `MigrateArgs` and returns the exit code, so the pre-commit entry
(dra_migrate.entry) can run it on the hook's usual command line without typer, whose import and option
parsing cost about a third of a second; `register` wraps the same function as the typer command.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from dra_migrate.features import SUPPORTED_VERSIONS as SUPPORTED_TARGETS
from dra_migrate.features import Target
from dra_migrate.filescan import DEFAULT_MAX_BYTES
from dra_migrate.lower.context import Options
from dra_migrate.run import RunConfig, run_migration

if TYPE_CHECKING:
    import typer

STRATEGIES = ("rewrite", "extended-resource")


def api_version_for(target: str) -> str:
    """Kept for callers written before `Target`; rules/features.yaml is the one source of the answer."""
    return Target(target).api_version


@dataclasses.dataclass
class MigrateArgs:
    """The command's options; the defaults here are the CLI defaults (the typer options read them)."""

    paths: list[str]
    check: bool = False
    diff: bool = False
    output_dir: Path | None = None
    claims_out: Path | None = None
    target_version: str = "1.34"
    fmt: str = "text"
    reports: list[str] = dataclasses.field(default_factory=list)
    no_gitignore: bool = False
    strict: bool = False
    no_progress: bool = False
    exclude: list[str] = dataclasses.field(default_factory=list)
    rules: list[Path] = dataclasses.field(default_factory=list)
    max_file_size: int = DEFAULT_MAX_BYTES
    feature_gates: str = ""
    no_validate: bool = False
    move_cloud_labels: bool = False
    sharing: str = "shared-claim"
    sharing_config: list[Path] = dataclasses.field(default_factory=list)
    share_within_pod: bool = False
    no_dra_quota: bool = False
    strategy: str = "rewrite"
    bridge_emit_gpu_class: bool = False
    jobs: int | None = None
    verbose: bool = False
    quiet: bool = False


_D = MigrateArgs(paths=[])


def _error(message: str) -> int:
    sys.stderr.write(f"error: {message}\n")
    sys.stderr.flush()
    return 2


def execute(a: MigrateArgs) -> int:
    """Run the command; the exit code."""
    if a.target_version not in SUPPORTED_TARGETS:
        return _error(f"--target-version must be one of {', '.join(SUPPORTED_TARGETS)}")
    if a.strategy not in STRATEGIES:
        return _error(f"--strategy must be one of {', '.join(STRATEGIES)}")
    from dra_migrate import reports as report_writers
    from dra_migrate.cli.progress import ProgressBar, stderr_is_tty, summary_table

    if a.fmt not in report_writers.FORMATS:
        return _error(f"--format must be one of {', '.join(report_writers.FORMATS)}")
    try:
        from dra_migrate.features import parse_feature_gates

        gates = parse_feature_gates(a.feature_gates) if a.feature_gates else {}
    except ValueError as exc:
        return _error(f"--feature-gates: {exc}")
    if a.sharing not in ("shared-claim", "exclusive"):
        return _error("--sharing must be shared-claim or exclusive")
    try:
        extra_reports = [report_writers.parse_report_spec(r) for r in a.reports]
    except ValueError as exc:
        return _error(str(exc))
    tty = stderr_is_tty() and not a.no_progress
    progress = ProgressBar(tty)
    mode = "diff" if a.diff else "check" if a.check else "write"
    stdin_mode = list(a.paths) == ["-"]
    cfg = RunConfig(
        a.paths,
        mode="check" if stdin_mode and mode == "write" else mode,
        output_dir=a.output_dir,
        claims_out=a.claims_out,
        options=Options(
            target_version=a.target_version,
            api_version=Target(a.target_version).api_version,
            move_cloud_labels=a.move_cloud_labels,
            feature_gates=gates,
            validate=not a.no_validate,
            extra={
                "sharing_strategy": a.sharing,
                "share_within_pod": a.share_within_pod,
                "dra_quota": not a.no_dra_quota,
            },
            strategy=a.strategy,
            bridge_emit_gpu_class=a.bridge_emit_gpu_class,
        ),
        excludes=a.exclude,
        max_file_size=a.max_file_size,
        rule_dirs=a.rules,
        sharing_configs=a.sharing_config,
        gitignore=not a.no_gitignore,
        progress=progress if tty else None,  # without a bar the run streams its walk
        jobs=a.jobs,
        keep_ir=False,  # the reports need counts and diagnostics only
    )
    cfg.options.extra["strict"] = a.strict
    try:
        result = run_migration(cfg)
    finally:
        progress.close()
    if stdin_mode and mode == "write" and result.files:
        f = result.files[0]
        sys.stdout.buffer.write(f.output if f.output is not None else f.original)
    for d in result.diffs:
        sys.stdout.write(d)
    verbose, quiet = a.verbose, a.quiet
    for rfmt, rpath in extra_reports:
        text = report_writers.render(rfmt, cfg, result, verbose=verbose, quiet=quiet)
        try:
            Path(rpath).write_text(text if text.endswith("\n") or not text else text + "\n", encoding="utf-8")
        except OSError as exc:
            return _error(f"cannot write report {rpath}: {exc.strerror}")
    if a.fmt == "text":
        if tty and not quiet:
            sys.stderr.write(report_writers.text.render(cfg, result, verbose=verbose, quiet=quiet, summary=False))
            sys.stderr.write(summary_table(result, mode))
        else:
            sys.stderr.write(report_writers.render("text", cfg, result, verbose=verbose, quiet=quiet))
    else:
        out = report_writers.render(a.fmt, cfg, result, verbose=verbose, quiet=quiet)
        sys.stdout.write(out if out.endswith("\n") or not out else out + "\n")
    return result.exit_code


def register(app: typer.Typer) -> None:
    import typer

    @app.command("migrate")
    def migrate(
        paths: list[str] = typer.Argument(
            ..., help="Files or directories (recursive); '-' reads stdin, writes stdout."
        ),
        check: bool = typer.Option(_D.check, "--check", help="Write nothing; exit 1 if anything would change."),
        diff: bool = typer.Option(_D.diff, "--diff", help="Print a unified diff; write nothing."),
        output_dir: Path | None = typer.Option(_D.output_dir, "--output-dir", help="Write the migrated tree here."),
        claims_out: Path | None = typer.Option(
            _D.claims_out, "--claims-out", help="Put new ResourceClaimTemplates in this FILE (.yaml) or DIR."
        ),
        target_version: str = typer.Option(_D.target_version, "--target-version", help="Kubernetes version to target."),
        fmt: str = typer.Option(_D.fmt, "--format", help="Report format on stdout: text, json, sarif, github."),
        reports: list[str] = typer.Option([], "--report", help="Also write FORMAT=FILE (repeatable)."),
        no_gitignore: bool = typer.Option(_D.no_gitignore, "--no-gitignore", help="Also walk into .gitignore'd paths."),
        strict: bool = typer.Option(_D.strict, "--strict", help="A dra-migrate.io/skip annotation is an error."),
        no_progress: bool = typer.Option(_D.no_progress, "--no-progress", help="No progress bar or summary table."),
        exclude: list[str] = typer.Option([], "--exclude", help="Glob of paths to skip (repeatable)."),
        rules: list[Path] = typer.Option([], "--rules", help="Extra rule directory (repeatable)."),
        max_file_size: int = typer.Option(_D.max_file_size, "--max-file-size", help="Skip larger files (bytes)."),
        feature_gates: str = typer.Option(
            _D.feature_gates, "--feature-gates", help="Override gates: Name=true,Other=false."
        ),
        no_validate: bool = typer.Option(_D.no_validate, "--no-validate", help="Skip official-schema validation."),
        move_cloud_labels: bool = typer.Option(
            _D.move_cloud_labels,
            "--move-cloud-labels",
            help="Move provider GPU labels (GKE, Karpenter…) into the claim too.",
        ),
        sharing: str = typer.Option(
            _D.sharing,
            "--sharing",
            help="Time-sliced/MPS GPUs: shared-claim (one named ResourceClaim per sharing group) or exclusive.",
        ),
        sharing_config: list[Path] = typer.Option(
            [], "--sharing-config", help="A device plugin config (ConfigMap, values or config file) kept elsewhere."
        ),
        share_within_pod: bool = typer.Option(
            _D.share_within_pod, "--share-within-pod", help="Containers of one pod share one GPU request."
        ),
        no_dra_quota: bool = typer.Option(
            _D.no_dra_quota,
            "--no-dra-quota",
            help="Report GPU ResourceQuotas but do not add the DRA device-class entry.",
        ),
        strategy: str = typer.Option(
            _D.strategy,
            "--strategy",
            help="rewrite (GPU requests → claims) or extended-resource (bridge: keep requests, emit DeviceClasses).",
        ),
        bridge_emit_gpu_class: bool = typer.Option(
            _D.bridge_emit_gpu_class,
            "--bridge-emit-gpu-class",
            help="Bridge: also emit a class for nvidia.com/gpu (the chart has one).",
        ),
        jobs: int | None = typer.Option(
            _D.jobs,
            "--jobs",
            "-j",
            min=1,
            help="Worker processes (default: one per CPU when over 200 files have GPU keys; 1: serial).",
        ),
        verbose: bool = typer.Option(_D.verbose, "--verbose", "-v", help="Also show informational diagnostics."),
        quiet: bool = typer.Option(_D.quiet, "--quiet", "-q", help="Only errors."),
    ) -> None:
        """Rewrite GPU requests to DRA claims (in place by default)."""
        raise typer.Exit(execute(MigrateArgs(
            paths=paths, check=check, diff=diff, output_dir=output_dir, claims_out=claims_out,
            target_version=target_version, fmt=fmt, reports=reports, no_gitignore=no_gitignore, strict=strict,
            no_progress=no_progress, exclude=exclude, rules=rules, max_file_size=max_file_size,
            feature_gates=feature_gates, no_validate=no_validate, move_cloud_labels=move_cloud_labels,
            sharing=sharing, sharing_config=sharing_config, share_within_pod=share_within_pod,
            no_dra_quota=no_dra_quota, strategy=strategy, bridge_emit_gpu_class=bridge_emit_gpu_class, jobs=jobs,
            verbose=verbose, quiet=quiet,
        )))
