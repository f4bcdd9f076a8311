"""GitHub Actions workflow commands: each diagnostic becomes an annotation on the file and line."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from dra_migrate.diagnostics.model import Diagnostic, Severity
from dra_migrate.reports.anchor import is_pseudo, run_anchor

if TYPE_CHECKING:
    from dra_migrate.run.model import RunConfig, RunResult

_COMMAND = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def _escape_data(s: str) -> str:
    # The runner's own escaping rules (toolkit/packages/core/src/command.ts).
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(s: str) -> str:
    return _escape_data(s).replace(":", "%3A").replace(",", "%2C")


def annotation(d: Diagnostic, anchor: str | None = None) -> str:
    """One workflow command. A finding about the run as a whole goes on `anchor` (the configuration file or
    the first path) when that is a file, else on the workflow run itself (no file)."""
    props = []
    if not is_pseudo(d.location.file):
        props.append(f"file={_escape_property(d.location.file)}")
    elif anchor is not None and os.path.isfile(anchor):
        props.append(f"file={_escape_property(anchor)}")
    if d.location.line > 0 and not is_pseudo(d.location.file):
        props.append(f"line={d.location.line}")
        props.append(f"col={max(d.location.col, 1)}")
    props.append(f"title={_escape_property(d.code)}")
    obj = f"[{d.object}] " if d.object else ""
    return f"::{_COMMAND[d.severity]} {','.join(props)}::{_escape_data(obj + d.message)}"


def render(cfg: RunConfig, result: RunResult, *, verbose: bool = False) -> str:
    # Notices for every migrated workload drown the real findings: like the text report, only with -v.
    anchor = run_anchor(cfg, result)
    return "".join(
        annotation(d, anchor) + "\n" for d in result.all_diagnostics if verbose or d.severity is not Severity.INFO
    )
