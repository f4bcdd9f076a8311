"""GitHub Actions workflow commands: each diagnostic becomes an annotation on the file and line."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dra_migrate.diagnostics import Diagnostic, Severity

if TYPE_CHECKING:
    from dra_migrate.run import RunConfig, RunResult

_COMMAND = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def _escape_data(s: str) -> str:
    # The runner's own escaping rules (toolkit/packages/core/src/command.ts).
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(s: str) -> str:
    return _escape_data(s).replace(":", "%3A").replace(",", "%2C")


def annotation(d: Diagnostic) -> str:
    props = [f"file={_escape_property(d.location.file)}"]
    if d.location.line > 0:
        props.append(f"line={d.location.line}")
        props.append(f"col={max(d.location.col, 1)}")
    props.append(f"title={_escape_property(d.code)}")
    obj = f"[{d.object}] " if d.object else ""
    return f"::{_COMMAND[d.severity]} {','.join(props)}::{_escape_data(obj + d.message)}"


def render(cfg: RunConfig, result: RunResult, *, verbose: bool = False) -> str:
    # Notices for every migrated workload drown the real findings: like the text report, only with -v.
    return "".join(
        annotation(d) + "\n" for d in result.all_diagnostics if verbose or d.severity is not Severity.INFO
    )
