"""Writes on one background thread, in the order they were asked for.

A run's writes wait on the disk (a flush per batch of rewritten files, a file creation per --output-dir
copy); the interpreter lets other threads run meanwhile, so translation goes on while the disk works. An
in-place rewrite (`replace`) is written beside its file at once and renamed over it with its batch of
BATCH, once the batch's fsyncs (run together, see emit.writer.commit_durably) are done: each file is still
atomic and durable on its own. The run waits for all of them (`close`) before it reports, and its interrupt
handling stops only between files, so an interrupted run leaves every file old or new.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from dra_migrate.diagnostics import Diagnostic, Location, make

if TYPE_CHECKING:
    from dra_migrate.emit.writer import StagedReplace

Job = Callable[[], list[Diagnostic]]
_STOP = None
_COMMIT = "commit"
BATCH = 128  # rewrites made durable together


def write_problem(where: str, exc: OSError) -> Diagnostic:
    if isinstance(exc, PermissionError):
        return make("DRA111", "permission denied; the file is unchanged", Location(where))
    return make("DRA106", f"cannot write: {exc.strerror or exc}", Location(where))


class _Replace:
    __slots__ = ("data", "path", "where")

    def __init__(self, where: str, path: Path, data: bytes) -> None:
        self.where, self.path, self.data = where, path, data


class BackgroundWrites:
    def __init__(self, max_pending: int = 1024) -> None:
        # bounded, so a slow disk holds back the run instead of the run holding every file's bytes
        self._jobs: queue.Queue[tuple[str, Job | _Replace] | str | None] = queue.Queue(max_pending)
        self._diagnostics: list[Diagnostic] = []
        self._thread: threading.Thread | None = None
        self._staged: list[tuple[str, StagedReplace]] = []  # (where, staged rewrite), on the thread only
        self._closing = False  # close() was called: what is left is staged, then made durable in one batch

    def _put(self, item: tuple[str, Job | _Replace] | str | None) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._work, name="dra-migrate-writes", daemon=True)
            self._thread.start()
        self._jobs.put(item)

    def submit(self, where: str, job: Job) -> None:
        """Run `job` (it returns the diagnostics of its failures) after every job submitted before it."""
        self._put((where, job))

    def replace(self, where: str, path: Path, data: bytes) -> None:
        """Rewrite `path` in place with `data`, atomically and durably (see the module's docstring)."""
        self._put((where, _Replace(where, path, data)))

    def drain(self) -> None:
        """Wait until every submitted job is done; the thread then sleeps holding no lock (safe to fork)."""
        if self._thread is not None:
            self._jobs.put(_COMMIT)
            self._jobs.join()

    def close(self) -> list[Diagnostic]:
        """Finish every job, stop the thread; the diagnostics of all jobs in submission order."""
        if self._thread is not None:
            self._closing = True
            self._jobs.put(_STOP)
            self._thread.join()
            self._thread = None
            self._closing = False
        out, self._diagnostics = self._diagnostics, []
        return out

    def _work(self) -> None:
        while True:
            item = self._jobs.get()
            try:
                if item is _STOP or item == _COMMIT:
                    self._commit()
                    if item is _STOP:
                        return
                    continue
                assert isinstance(item, tuple)
                where, job = item
                try:
                    if isinstance(job, _Replace):
                        self._stage(job)
                    else:
                        self._diagnostics.extend(job())
                except Exception as exc:  # noqa: BLE001 - reported like any failed write, never lost
                    self._diagnostics.append(make("DRA106", f"cannot write: {exc}", Location(where)))
            finally:
                self._jobs.task_done()

    def _stage(self, job: _Replace) -> None:
        from dra_migrate.emit.writer import stage_replace

        try:
            self._staged.append((job.where, stage_replace(job.path, job.data)))
        except OSError as exc:
            self._diagnostics.append(write_problem(job.where, exc))
            return
        # Once the run is closing, one more batch would only make the last files wait for it: they all
        # go in the final one.
        if len(self._staged) >= BATCH and not self._closing:
            self._commit()

    def _commit(self) -> None:
        from dra_migrate.emit.writer import commit_durably

        if not self._staged:
            return
        batch, self._staged = self._staged, []
        for i, exc in commit_durably([s for _where, s in batch]):
            self._diagnostics.append(write_problem(batch[i][0], exc))
