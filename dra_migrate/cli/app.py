"""The typer application; every sub-command module registers itself here, in one place."""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Mapping

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


# Command name → module registering it. A run imports only the module of the command it invokes: the others
# pull in the planner, the simulator and the CEL environment, which a pre-commit `migrate` never uses.
COMMANDS = {
    "migrate": "migrate_cmd",
    "explain": "explain_cmd",
    "rules": "rules_cmd",
    "pr": "pr_cmd",
    "plan": "plan_cmd",
    "simulate": "simulate_cmd",
    "cel": "cel_cmd",  # optional: registered only when its module imports
}
_OPTIONAL = {"cel"}
_registered: set[str] = set()


def _register(only: str | None = None) -> None:
    """Register command `only`, or every command. Idempotent, so tests and `run` may both call it."""
    for name in (only,) if only is not None else COMMANDS:
        if name in _registered:
            continue
        try:
            module = importlib.import_module(f"dra_migrate.cli.{COMMANDS[name]}")
        except ImportError:
            if name in _OPTIONAL:
                continue
            raise
        module.register(app)
        _registered.add(name)


def invoked_command(argv: list[str], environ: Mapping[str, str]) -> str | None:
    """The sub-command `argv` runs, when it is certain; None (register everything) for --help, --version,
    an unknown name (click lists the commands in its error) and shell completion."""
    if not argv or any(k.startswith("_DRA_MIGRATE_COMPLETE") for k in environ):
        return None
    return argv[0] if argv[0] in COMMANDS else None


def run() -> None:
    # Each command resolves its own settings (dra_migrate.cli.declare): command line > DRA_MIGRATE_* > file.
    _register(invoked_command(sys.argv[1:], os.environ))
    try:
        app(standalone_mode=True)
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.exit(130)
