"""The human report: one line per diagnostic, then a one-line summary."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dra_migrate.diagnostics import Severity

if TYPE_CHECKING:
    from dra_migrate.run import RunConfig, RunResult


def render(
    cfg: RunConfig, result: RunResult, *, verbose: bool = False, quiet: bool = False, summary: bool = True
) -> str:
    lines: list[str] = []
    for d in result.all_diagnostics:
        if d.severity is Severity.INFO and not verbose:
            continue
        if quiet and d.severity is not Severity.ERROR:
            continue
        lines.append(d.render())
    if summary and not quiet:
        lines.append(summary_line(cfg.mode, result))
    return "".join(line + "\n" for line in lines)


def summary_line(mode: str, result: RunResult) -> str:
    changed = sum(1 for f in result.files if f.changed)
    failed = sum(1 for f in result.files if f.failed)
    verb = {"write": "changed", "check": "would change", "diff": "would change"}.get(mode, "changed")
    return (
        f"{result.scanned} file(s) scanned, {len(result.files)} with GPU keys, {changed} {verb}, "
        f"{len(result.new_files)} new file(s), {failed} left untouched because of errors"
    )
