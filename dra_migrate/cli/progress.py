"""Terminal comforts for long runs: a progress bar and a closing summary table (only on a TTY)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dra_migrate.run.model import RunResult

PROGRESS_MIN_FILES = 20  # below this a run is over before a bar is worth drawing


def stderr_is_tty() -> bool:
    return sys.stderr.isatty()


class ProgressBar:
    """The RunConfig.progress callback; draws nothing unless enabled and the run is long enough."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self._progress: Any = None
        self._task: Any = None

    def __call__(self, index: int, total: int, name: str) -> None:
        if not self.enabled or total < PROGRESS_MIN_FILES:
            return
        if self._progress is None:
            # lazy: start-up (rich.console: ~21 ms, only __call__() needs it)
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self._progress = Progress(
                TextColumn("migrating"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TextColumn("{task.description}"),
                console=Console(stderr=True),
                transient=True,
            )
            self._progress.start()
            self._task = self._progress.add_task("", total=total)
        self._progress.update(self._task, completed=index, description=name[-50:])

    def close(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None


def summary_table(result: RunResult, mode: str) -> str:
    # lazy: start-up (rich.console: ~21 ms, only summary_table() needs it)
    from rich.console import Console
    from rich.table import Table

    # lazy: start-up (diagnostics.model: ~7 ms, only summary_table() needs it)
    from dra_migrate.diagnostics.model import Severity

    diags = result.all_diagnostics
    verb = "changed" if mode == "write" else "would change"
    rows = [
        ("files scanned", result.scanned),
        ("files with GPU keys", len(result.files)),
        (f"files {verb}", sum(1 for f in result.files if f.changed)),
        ("new files", len(result.new_files)),
        ("workloads migrated", sum(f.migrated_workloads for f in result.files)),
        ("errors", sum(1 for d in diags if d.severity is Severity.ERROR)),
        ("warnings", sum(1 for d in diags if d.severity is Severity.WARNING)),
        ("left untouched (errors)", sum(1 for f in result.files if f.failed)),
    ]
    table = Table(title="dra-migrate summary", show_header=False)
    table.add_column("what")
    table.add_column("count", justify="right")
    for what, n in rows:
        table.add_row(what, str(n))
    console = Console(stderr=True, force_terminal=True)
    with console.capture() as cap:
        console.print(table)
    return cap.get()
