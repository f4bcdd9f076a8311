"""`dra-migrate rules`: every diagnostic code, or every covered kind."""

from __future__ import annotations

import typer

from dra_migrate.codes import CODES
from dra_migrate.kinds import KindRuleSet


def register(app: typer.Typer) -> None:
    @app.command("rules")
    def rules(
        kinds: bool = typer.Option(False, "--kinds", help="List the workload kinds the rules cover."),
        rule_dirs: list[str] = typer.Option([], "--rules", help="Extra rule directory (repeatable)."),
    ) -> None:
        """List diagnostic codes (or covered kinds) with a one-line summary."""
        if kinds:
            from pathlib import Path

            from dra_migrate.run import load_rules

            ruleset, problem = load_rules([Path(d) for d in rule_dirs])
            if ruleset is None:
                assert problem is not None
                typer.echo(problem.render(), err=True)
                raise typer.Exit(2)
            for line in kinds_table(ruleset):
                typer.echo(line)
            return
        for code in CODES.values():
            typer.echo(f"{code.code}  {code.severity.value:<7}  {code.name:<32}  {code.summary}")


def kinds_table(ruleset: KindRuleSet) -> list[str]:
    """One line per covered kind: group/kind, versions, claims-support min version, side effects, rule."""
    rows = [("GROUP/KIND", "VERSIONS", "CLAIMS-FROM", "SIDE-EFFECTS", "RULE")]
    for r in sorted(ruleset.all(), key=lambda r: (r.group, r.kind, r.versions)):
        rows.append((f"{r.group or 'core'}/{r.kind}", ",".join(r.versions) or "*", r.claims_min_version,
                     ",".join(r.side_effects) or "-", _short(r.source)))
    for n in sorted(ruleset.non_workloads(), key=lambda r: (r.group, r.kind)):
        rows.append((f"{n.group or 'core'}/{n.kind}", ",".join(n.versions) or "*", "(not a workload)",
                     ",".join(n.side_effects) or "-", _short(n.source)))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    return ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=False)) + "  " + row[4] for row in rows]


def _short(source: str) -> str:
    from dra_migrate.kinds import RULES_DIR

    prefix = str(RULES_DIR.parent) + "/"
    return source[len(prefix):] if source.startswith(prefix) else source


def explain_code(code: str) -> str | None:
    c = CODES.get(code.upper())
    if c is None:
        return None
    return f"{c.code} ({c.name}, {c.severity.value})\n\n{c.summary}\n\n{c.explanation}\n"
