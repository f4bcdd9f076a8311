"""The typer application; every sub-command module registers itself here, in one place."""

from __future__ import annotations

import sys

import typer

from dra_migrate import __version__

app = typer.Typer(
    name="dra-migrate",
    help="Migrate Kubernetes manifests from the NVIDIA device plugin to Dynamic Resource Allocation.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"dra-migrate {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version."),
) -> None:
    """dra-migrate: device plugin → DRA."""


def _register() -> None:
    from dra_migrate.cli import explain_cmd, migrate_cmd, plan_cmd, pr_cmd, rules_cmd, simulate_cmd

    for module in (migrate_cmd, explain_cmd, rules_cmd, pr_cmd, plan_cmd, simulate_cmd):
        module.register(app)
    try:  # commands contributed by optional modules
        from dra_migrate.cli import cel_cmd

        cel_cmd.register(app)
    except ImportError:
        pass


def run() -> None:
    import os

    from dra_migrate.cli.config import ConfigError, build_default_map

    _register()
    try:
        default_map = build_default_map(typer.main.get_command(app), sys.argv[1:], os.environ)
    except ConfigError as exc:
        sys.stderr.write(f"error: {exc}\n")
        sys.exit(2)
    try:
        app(standalone_mode=True, default_map=default_map)
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.exit(130)
