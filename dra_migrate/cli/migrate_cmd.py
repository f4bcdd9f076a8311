"""`dra-migrate migrate`: the main job.

`execute` takes the resolved settings and returns the exit code, so the pre-commit entry (dra_migrate.entry)
runs it without typer, whose import and option parsing cost about a third of a second; `register` makes the
same function the typer command (dra_migrate.cli.declare).

The output contract: with `--format json|sarif|github` stdout carries that document and nothing else (a diff
goes into the JSON report, or to stderr); with `-` stdout carries the migrated text (a filter: exit 0 unless
--check) or, with --diff, the diff; every file that changes (or would) is named on stderr.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from dra_migrate import reports as report_writers
from dra_migrate.cli.config import ConfigError
from dra_migrate.cli.settings import Settings, run_config
from dra_migrate.reports.text import named_changes, summary_line
from dra_migrate.ruleset.features import Target
from dra_migrate.run.driver import run_migration

if TYPE_CHECKING:
    import typer

def api_version_for(target: str) -> str:
    """Kept for callers written before `Target`; rules/features.yaml is the one source of the answer."""
    return Target(target).api_version


def execute(s: Settings) -> int:
    """Run the command; the exit code. Raises ConfigError for a setting found unusable on the way."""
    # lazy: start-up (cli.progress: ~1 ms, only execute() needs it)
    from dra_migrate.cli.progress import ProgressBar, stderr_is_tty, summary_table
    from dra_migrate.reports import policy

    try:
        extra_reports = [report_writers.parse_report_spec(r) for r in s.report]
    except ValueError as exc:
        raise ConfigError(f"{s.where('report')}: {exc}") from None
    tty = stderr_is_tty() and not s.no_progress
    progress = ProgressBar(tty)
    mode = s.mode
    cfg = run_config(s, mode, progress=progress if tty else None)  # without a bar the run streams its walk
    try:
        result = run_migration(cfg)
    finally:
        progress.close()
    policy.apply(policy.Policy(s.select, s.ignore, s.strict, s.fail_on), result)
    filter_mode = s.stdin and mode == "write"
    if filter_mode:
        result.changes_fail = False  # the migrated text is the filter's output, not a finding
    text = s.format == "text"
    out = sys.stdout
    if filter_mode and text:
        out.flush()
        out.buffer.write(result.stdin_output or b"")
    if result.diffs and s.format != "json":  # the JSON report carries them itself
        stream = out if text else sys.stderr
        for d in result.diffs:
            stream.write(d)
    for rfmt, rpath in extra_reports:
        doc = report_writers.render(rfmt, cfg, result, verbose=s.verbose, quiet=s.quiet)
        try:
            Path(rpath).write_text(doc if doc.endswith("\n") or not doc else doc + "\n", encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"cannot write report {rpath}: {exc.strerror}") from None
    names = "" if s.quiet or filter_mode else "".join(line + "\n" for line in named_changes(mode, result))
    err = sys.stderr
    if text:
        err.write(report_writers.text.render(cfg, result, verbose=s.verbose, quiet=s.quiet, summary=False))
        err.write(names)
        if not s.quiet:
            err.write(summary_table(result, mode) if tty else summary_line(mode, result) + "\n")
    else:
        err.write(names)
        doc = report_writers.render(s.format, cfg, result, verbose=s.verbose, quiet=s.quiet)
        out.write(doc if doc.endswith("\n") or not doc else doc + "\n")
    return result.exit_code


def register(app: typer.Typer) -> None:
    # lazy: start-up (cli.declare: ~14 ms, only register() needs it)
    from dra_migrate.cli.declare import command

    command(app, "migrate", execute, argument="paths",
            argument_help="Files or directories (recursive); '-' reads stdin and writes stdout.",
            doc="Rewrite GPU requests to DRA claims (in place by default).")
