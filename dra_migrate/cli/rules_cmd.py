"""`dra-migrate rules`: every diagnostic code, or every covered kind."""

from __future__ import annotations

import typer

from dra_migrate.codes import CODES


def register(app: typer.Typer) -> None:
    @app.command("rules")
    def rules(
        kinds: bool = typer.Option(False, "--kinds", help="List the workload kinds the rules cover."),
        rule_dirs: list[str] = typer.Option([], "--rules", help="Extra rule directory (repeatable)."),
    ) -> None:
        """List diagnostic codes (or covered kinds) with a one-line summary."""
        if kinds:
            from pathlib import Path

            from dra_migrate.kinds import load_kind_rules

            for r in sorted(load_kind_rules(tuple(Path(d) for d in rule_dirs)).all(), key=lambda r: (r.group, r.kind)):
                typer.echo(f"{r.group or 'core'}/{r.kind}")
            return
        for code in CODES.values():
            typer.echo(f"{code.code}  {code.severity.value:<7}  {code.name:<32}  {code.summary}")


def explain_code(code: str) -> str | None:
    c = CODES.get(code.upper())
    if c is None:
        return None
    return f"{c.code} ({c.name}, {c.severity.value})\n\n{c.summary}\n\n{c.explanation}\n"
