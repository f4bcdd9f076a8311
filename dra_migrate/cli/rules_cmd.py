"""`dra-migrate rules`: every diagnostic code, or every covered kind."""

from __future__ import annotations

from pathlib import Path

import typer

from dra_migrate.diagnostics.codes import CODES, REGISTERED

# lazy: start-up (run.driver: ~52 ms, only register() needs it)
from dra_migrate.ruleset._paths import display_name
from dra_migrate.ruleset.kinds import KindRuleSet, format_path


def register(app: typer.Typer) -> None:
    @app.command("rules")
    def rules(
        kinds: bool = typer.Option(False, "--kinds", help="List the workload kinds the rules cover."),
        rule_dirs: list[str] = typer.Option([], "--rules", help="Extra rule directory (repeatable)."),
    ) -> None:
        """List diagnostic codes (or covered kinds) with a one-line summary; retired codes are left out."""
        if kinds:
            # lazy: start-up (run.driver: ~52 ms, only rules() needs it)
            from dra_migrate.run.driver import load_rules

            ruleset, problem = load_rules([Path(d) for d in rule_dirs])
            if ruleset is None:
                assert problem is not None
                typer.echo(problem.render(), err=True)
                raise typer.Exit(2)
            for line in kinds_table(ruleset):
                typer.echo(line)
            return
        for code in CODES.values():
            mark = "  [unmigrated]" if code.unmigrated else ""
            typer.echo(f"{code.code}  {code.severity.value:<7}  {code.name:<32}  {code.summary}{mark}")


def kinds_table(ruleset: KindRuleSet) -> list[str]:
    """One line per covered kind: group/kind, versions, claims-support min version, side effects, embedded
    object paths, rule; then the non-workloads and the documents recognised by their keys."""
    rows = [("GROUP/KIND", "VERSIONS", "CLAIMS-FROM", "SIDE-EFFECTS", "EMBEDS", "RULE")]
    for r in sorted(ruleset.all(), key=lambda r: (r.group, r.kind, r.versions)):
        embeds = ",".join(format_path(e.path) for e in r.embedded) or "-"
        rows.append((f"{r.group or 'core'}/{r.kind}", ",".join(r.versions) or "*", r.claims_min_version,
                     ",".join(r.side_effects) or "-", embeds, _short(r.source)))
    for n in sorted(ruleset.non_workloads(), key=lambda r: (r.group, r.kind)):
        rows.append((f"{n.group or 'core'}/{n.kind}", ",".join(n.versions) or "*", "(not a workload)",
                     ",".join(n.side_effects) or "-", "-", _short(n.source)))
    for d in sorted(ruleset.documents(), key=lambda d: d.name):
        rows.append((f"(document)/{d.name}", "*", "(not a workload)", "-", "-", _short(d.source)))
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    return ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=False)) + "  " + row[5] for row in rows]


def _short(source: str) -> str:
    return display_name(source)


def explain_code(code: str) -> str | None:
    c = REGISTERED.get(code.upper())  # a retired code is still documented
    if c is None:
        return None
    left = ("\n\nUnmigrated: the GPU request stays as the device plugin's. --strict (and the dra-migrate-check "
            "hook) reports it as an error.") if c.unmigrated else ""
    retired = f"\n\nRetired: {c.retired}." if c.retired else ""
    return f"{c.code} ({c.name}, {c.severity.value})\n\n{c.summary}\n\n{c.explanation}{left}{retired}\n"
