"""Report writers, one module per format. Each exposes `render(cfg, result, **opts) -> str`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dra_migrate.reports import text

if TYPE_CHECKING:
    from dra_migrate.run.model import RunConfig, RunResult

FORMATS = ("text", "json", "sarif", "github")


def render(fmt: str, cfg: RunConfig, result: RunResult, *, verbose: bool = False, quiet: bool = False) -> str:
    """The report in format `fmt` as one string (text goes to stderr, the others to stdout or a file)."""
    if fmt == "json":
        # lazy: start-up (reports: ~1 ms, only render() needs it)
        from dra_migrate.reports import json as json_report

        return json_report.render(cfg, result)
    if fmt == "sarif":
        # lazy: start-up (reports: ~1 ms, only render() needs it)
        from dra_migrate.reports import sarif

        return sarif.render(cfg, result)
    if fmt == "github":
        # lazy: start-up (reports: ~1 ms, only render() needs it)
        from dra_migrate.reports import github

        return github.render(cfg, result, verbose=verbose)
    if fmt == "text":
        return text.render(cfg, result, verbose=verbose, quiet=quiet)
    raise ValueError(f"unknown report format {fmt!r}; one of {', '.join(FORMATS)}")


def parse_report_spec(spec: str) -> tuple[str, str]:
    """'sarif=out.sarif' → ('sarif', 'out.sarif'); raises ValueError on a bad spec."""
    fmt, sep, path = spec.partition("=")
    if not sep or not path or fmt not in FORMATS:
        raise ValueError(f"--report takes FORMAT=FILE with FORMAT one of {', '.join(FORMATS)} (got {spec!r})")
    return fmt, path
