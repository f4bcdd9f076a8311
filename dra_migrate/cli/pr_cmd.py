"""`dra-migrate pr`: a migration branch with one commit and a pull request body. It takes every option that
shapes the migration, declared once with `migrate`'s (dra_migrate.cli.options)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from dra_migrate import reports as report_writers
from dra_migrate.cli.config import ConfigError
from dra_migrate.cli.settings import Settings, run_config

if TYPE_CHECKING:
    import typer


def execute(s: Settings) -> int:
    # lazy: start-up (cli.declare: ~19 ms, only execute() needs it)
    from dra_migrate.cli.declare import error
    from dra_migrate.cli.pr import PrError, PrRequest, create_pr
    from dra_migrate.reports.policy import Policy

    if s.template is not None and not s.template.is_file():
        raise ConfigError(f"{s.where('template')} {s.template}: no such file")
    try:
        extra_reports = [report_writers.parse_report_spec(r) for r in s.report]
    except ValueError as exc:
        raise ConfigError(f"{s.where('report')}: {exc}") from None
    cfg = run_config(s, "write", keep_ir=True)
    assert s.branch is not None  # settings.settle requires it
    req = PrRequest(s.paths, s.branch, s.base, s.push, s.template, s.allow_dirty, s.message, cfg,
                    Policy(s.select, s.ignore, s.strict, s.fail_on))
    try:
        outcome = create_pr(req)
    except PrError as exc:
        return error(str(exc))
    for rfmt, rpath in extra_reports:
        doc = report_writers.render(rfmt, cfg, outcome.result)
        try:
            Path(rpath).write_text(doc if doc.endswith("\n") or not doc else doc + "\n", encoding="utf-8")
        except OSError as exc:
            return error(f"cannot write report {rpath}: {exc.strerror}")
    if outcome.nothing_new:
        if outcome.existed:
            sys.stderr.write(f"branch {outcome.branch} is up to date: nothing new to migrate, no commit made\n")
        else:
            sys.stderr.write("nothing to migrate: no file would change; no branch was created\n")
        return 0
    if s.body_file is not None:
        s.body_file.write_text(outcome.body, encoding="utf-8")
    else:
        sys.stdout.write(outcome.body)
    where = f", pushed to {s.push}" if outcome.pushed else ""
    added = " (added to the existing branch)" if outcome.existed else ""
    sys.stderr.write(f"branch {outcome.branch} at {outcome.commit[:12]}: {len(outcome.changed_files)} file(s)"
                     f"{added}{where}\n")
    return 0


def register(app: typer.Typer) -> None:
    # lazy: start-up (cli.declare: ~16 ms, only register() needs it)
    from dra_migrate.cli.declare import command

    command(app, "pr", execute, argument="paths", argument_help="Files or directories inside one git repository.",
            doc="Migrate on a branch (new, or existing: what is still to migrate), commit, print a pull request "
            "body.")
