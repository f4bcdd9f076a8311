"""Writes on one background thread, in the order they were asked for.

A run's writes wait on the disk (an fsync per rewritten file, a file creation per --output-dir copy); the
interpreter lets other threads run meanwhile, so translation goes on while the disk works. Each write is
still atomic and durable on its own; the run waits for all of them (`close`) before it reports, and its
interrupt handling stops only between files, so an interrupted run leaves every file old or new.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable

from dra_migrate.diagnostics import Diagnostic, Location, make

Job = Callable[[], list[Diagnostic]]
_STOP = None


class BackgroundWrites:
    def __init__(self, max_pending: int = 1024) -> None:
        # bounded, so a slow disk holds back the run instead of the run holding every file's bytes
        self._jobs: queue.Queue[tuple[str, Job] | None] = queue.Queue(max_pending)
        self._diagnostics: list[Diagnostic] = []
        self._thread: threading.Thread | None = None

    def submit(self, where: str, job: Job) -> None:
        """Run `job` (it returns the diagnostics of its failures) after every job submitted before it."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._work, name="dra-migrate-writes", daemon=True)
            self._thread.start()
        self._jobs.put((where, job))

    def drain(self) -> None:
        """Wait until every submitted job is done; the thread then sleeps holding no lock (safe to fork)."""
        if self._thread is not None:
            self._jobs.join()

    def close(self) -> list[Diagnostic]:
        """Finish every job, stop the thread; the diagnostics of all jobs in submission order."""
        if self._thread is not None:
            self._jobs.put(_STOP)
            self._thread.join()
            self._thread = None
        out, self._diagnostics = self._diagnostics, []
        return out

    def _work(self) -> None:
        while True:
            item = self._jobs.get()
            try:
                if item is _STOP:
                    return
                where, job = item
                try:
                    self._diagnostics.extend(job())
                except Exception as exc:  # noqa: BLE001 - reported like any failed write, never lost
                    self._diagnostics.append(make("DRA106", f"cannot write: {exc}", Location(where)))
            finally:
                self._jobs.task_done()
