"""Writes on one background thread, in the order they were asked for.

A run's writes wait on the disk (a flush per rewritten file, a file creation per --output-dir copy); the
interpreter lets other threads run meanwhile, so translation goes on while the disk works. An in-place
rewrite (`replace`) is written beside its file at once and its fsync starts at once, on one of a few sync
threads (emit.writer.SYNC_THREADS: the filesystem commits concurrent flushes together), while the run goes on
translating; the file is renamed over its original with its batch of BATCH, once every fsync of the batch is
done, and each directory the batch's renames touched is then fsynced once (emit.writer.commit_synced). Each
file is still atomic and durable on its own: its bytes reach the disk before the rename makes them visible,
and the rename before the run reports. The run waits for all of them (`close`) before it reports, and its
interrupt handling stops only between files, so an interrupted run leaves every file old or new. What the
run waits for at the end is only the fsyncs still in flight and the last batch's renames.

It implements run.writes.Writes; run.executor.select picks it unless perf/ is absent or the run is forced
serial (then run.writes.DirectWrites writes each file at once).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from dra_migrate.diagnostics.model import Diagnostic, Location, make
from dra_migrate.emit.writer import SYNC_THREADS, StagedReplace, commit_synced, stage_replace, sync_staged

if TYPE_CHECKING:
    from concurrent.futures import Future, ThreadPoolExecutor

Job = Callable[[], list[Diagnostic]]
Problem = Callable[[str, OSError], Diagnostic]  # a failed write as a diagnostic (run.writes.write_problem)
_STOP = None
_COMMIT = "commit"
BATCH = 128  # rewrites made durable together


class _Replace:
    __slots__ = ("data", "path", "where")

    def __init__(self, where: str, path: Path, data: bytes) -> None:
        self.where, self.path, self.data = where, path, data


class BackgroundWrites:
    def __init__(self, problem: Problem, max_pending: int = 1024) -> None:
        self._problem = problem
        # bounded, so a slow disk holds back the run instead of the run holding every file's bytes
        self._jobs: queue.Queue[tuple[str, Job | _Replace] | str | None] = queue.Queue(max_pending)
        self._diagnostics: list[Diagnostic] = []
        self._thread: threading.Thread | None = None
        # (where, staged rewrite, its fsync under way), on the thread only
        self._staged: list[tuple[str, StagedReplace, Future[OSError | None]]] = []
        self._syncs: ThreadPoolExecutor | None = None  # started with the first rewrite, stopped by each commit
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
                    self._stop_syncs()  # no thread but this one left idle (drain: the run may fork now)
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
        try:
            staged = stage_replace(job.path, job.data, keep_open=True)
        except OSError as exc:
            self._diagnostics.append(self._problem(job.where, exc))
            return
        if self._syncs is None:
            # lazy: start-up (concurrent.futures: ~5 ms, for runs that rewrite a file only)
            from concurrent.futures import ThreadPoolExecutor

            self._syncs = ThreadPoolExecutor(SYNC_THREADS, thread_name_prefix="dra-migrate-sync")
        try:
            syncing = self._syncs.submit(sync_staged, staged)
        except BaseException:
            staged.discard()
            raise
        self._staged.append((job.where, staged, syncing))
        # Once the run is closing, one more batch would only make the last files wait for it: they all
        # go in the final one.
        if len(self._staged) >= BATCH and not self._closing:
            self._commit()

    def _commit(self) -> None:
        """Rename the batch's files once all their fsyncs are done (a failed one: not renamed), then fsync
        the directories the renames touched."""
        if not self._staged:
            return
        batch, self._staged = self._staged, []
        problems = [syncing.result() for _where, _staged, syncing in batch]
        mapper = self._syncs.map if self._syncs is not None else None
        for i, exc in commit_synced([s for _where, s, _syncing in batch], problems, mapper):
            self._diagnostics.append(self._problem(batch[i][0], exc))

    def _stop_syncs(self) -> None:
        if self._syncs is not None:
            self._syncs.shutdown(wait=True)
            self._syncs = None
