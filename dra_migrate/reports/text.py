"""The human report: one line per diagnostic, a code seen many times summarised (one line with its count,
then its first locations; -v shows every one), then a one-line summary."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING

from dra_migrate.diagnostics.model import Diagnostic, Severity

if TYPE_CHECKING:
    from dra_migrate.run.model import RunConfig, RunResult

GROUP_OVER = 5  # a code reported more often than this is summarised...
GROUP_SHOW = 3  # ...with its first GROUP_SHOW diagnostics


def render(
    cfg: RunConfig, result: RunResult, *, verbose: bool = False, quiet: bool = False, summary: bool = True
) -> str:
    shown = [
        d for d in result.all_diagnostics
        if (verbose or d.severity is not Severity.INFO) and (not quiet or d.severity is Severity.ERROR)
    ]
    lines = diagnostic_lines(shown, every=verbose)
    if summary and not quiet:
        lines.append(summary_line(cfg.mode, result))
    return "".join(line + "\n" for line in lines)


def diagnostic_lines(diagnostics: Sequence[Diagnostic], every: bool = False) -> list[str]:
    """One line per diagnostic, in order; unless `every`, a code seen more than GROUP_OVER times is folded into
    one block where it first occurs: a header with its count, its first GROUP_SHOW diagnostics, the rest
    counted."""
    if every:
        return [d.render() for d in diagnostics]
    by_code: dict[str, list[Diagnostic]] = defaultdict(list)
    for d in diagnostics:
        by_code[d.code].append(d)
    lines: list[str] = []
    for d in diagnostics:
        group = by_code[d.code]
        if len(group) <= GROUP_OVER:
            lines.append(d.render())
        elif d is group[0]:
            n = len(group)
            lines.append(f"{d.severity.value} {d.code} {_name(d.code)}: {n} times; the first {GROUP_SHOW} "
                         "(-v shows all):")
            lines.extend("  " + g.render() for g in group[:GROUP_SHOW])
            lines.append(f"  … and {n - GROUP_SHOW} more {d.code}")
    return lines


def _name(code: str) -> str:
    # lazy: start-up (diagnostics.codes: ~1 ms, only _name() needs it)
    from dra_migrate.diagnostics.codes import CODES

    c = CODES.get(code)
    return f"({c.name})" if c is not None else ""


def summary_line(mode: str, result: RunResult) -> str:
    changed = sum(1 for f in result.files if f.changed)
    failed = sum(1 for f in result.files if f.failed)
    verb = {"write": "changed", "check": "would change", "diff": "would change"}.get(mode, "changed")
    return (
        f"{result.scanned} file(s) scanned, {len(result.files)} with GPU keys, {changed} {verb}, "
        f"{len(result.new_files)} new file(s), {failed} left untouched because of errors"
    )


def named_changes(mode: str, result: RunResult) -> list[str]:
    """`would migrate apps/train.yaml` (check, diff) or `migrated apps/train.yaml` (write) for every file the run
    changes, and `would create` / `created` for every new file, as black names the files it reformats."""
    would = mode != "write"
    lines = [f"{'would migrate' if would else 'migrated'} {f.path}" for f in result.files if f.changed]
    lines.extend(f"{'would create' if would else 'created'} {p}" for p in sorted(result.new_files))
    return lines
