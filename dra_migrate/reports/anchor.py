"""Where a finding about the run as a whole is shown: reports that need a file for every finding (SARIF: code
scanning rejects a whole upload when one result has no location; GitHub annotations) attach findings located
at `<run>`, `<rules>` or `<stdin>` to the configuration file, else to the first path of the run when it is a
file, else to the first file the run parsed, else to the first path (a directory)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dra_migrate.run.model import RunConfig, RunResult


def is_pseudo(file: str) -> bool:
    return not file or file.startswith("<")


def run_anchor(cfg: RunConfig, result: RunResult) -> str:
    if cfg.config_file:
        return relative(cfg.config_file)
    first = next((p for p in cfg.paths if p != "-"), None)
    if first is not None and os.path.isfile(first):
        return first
    parsed = next((f.path for f in result.files if not is_pseudo(f.path)), None)
    return parsed or first or "."


def relative(path: str) -> str:
    """`path` as short as the working directory allows (displayed in reports)."""
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return path
    return path if rel.startswith(".." + os.sep + "..") else rel
