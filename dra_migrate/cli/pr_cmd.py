"""`dra-migrate pr`: a migration branch with one commit and a pull request body."""

from __future__ import annotations

import sys
from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    @app.command("pr")
    def pr(
        paths: list[str] = typer.Argument(..., help="Files or directories inside one git repository."),
        branch: str = typer.Option(..., "--branch", help="Name of the new branch."),
        base: str = typer.Option("HEAD", "--base", help="Start the branch from this ref."),
        push: str | None = typer.Option(None, "--push", help="Push the branch to this remote."),
        body_file: Path | None = typer.Option(
            None, "--body-file", help="Write the PR body here (not stdout)."
        ),
        template: Path | None = typer.Option(None, "--template", help="Jinja2 template for the PR body."),
        allow_dirty: bool = typer.Option(False, "--allow-dirty", help="Proceed with uncommitted changes."),
        message: str | None = typer.Option(None, "--message", help="Commit subject."),
        target_version: str = typer.Option("1.34", "--target-version", help="Kubernetes version to target."),
        claims_out: Path | None = typer.Option(None, "--claims-out", help="As for migrate."),
        exclude: list[str] = typer.Option([], "--exclude", help="Glob of paths to skip (repeatable)."),
    ) -> None:
        """Migrate on a new branch, commit, and print a pull request body."""
        from dra_migrate.cli.migrate_cmd import SUPPORTED_TARGETS, api_version_for
        from dra_migrate.integrations.pr import PrError, PrRequest, create_pr
        from dra_migrate.lower.context import Options
        from dra_migrate.run import RunConfig

        if target_version not in SUPPORTED_TARGETS:
            typer.echo(f"error: --target-version must be one of {', '.join(SUPPORTED_TARGETS)}", err=True)
            raise typer.Exit(2)
        if template is not None and not template.is_file():
            typer.echo(f"error: --template {template}: no such file", err=True)
            raise typer.Exit(2)
        cfg = RunConfig(
            paths,
            claims_out=claims_out,
            excludes=exclude,
            options=Options(target_version=target_version, api_version=api_version_for(target_version)),
        )
        req = PrRequest(paths, branch, base, push, template, allow_dirty, message, cfg)
        try:
            outcome = create_pr(req)
        except PrError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from None
        if body_file is not None:
            body_file.write_text(outcome.body, encoding="utf-8")
        else:
            sys.stdout.write(outcome.body)
        where = f", pushed to {push}" if outcome.pushed else ""
        typer.echo(
            f"branch {outcome.branch} at {outcome.commit[:12]}: {len(outcome.changed_files)} file(s){where}",
            err=True,
        )
        raise typer.Exit(0)
