"""Translating a run's files in worker processes, with exactly the outcome of a serial run.

Files are sent in chunks to a fork-based process pool; each worker translates its chunk in order with its
own RunContext whose namer records every run-wide name it handed out (see TemplateNamer). The parent
takes the results in file order and replays each file's record on the run's namer: when every name comes
out the same, the worker's result is the serial result; otherwise (a name taken by a file of another chunk,
a shared claim group spanning chunks) the parent translates that file again itself. Without conflicts the
parent only reads, writes and replays; with many it degrades to a serial run, never to a different one.
"""

from __future__ import annotations

import gc
import os
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from dra_migrate.lower.context import RunContext
from dra_migrate.lower.names import TraceEntry
from dra_migrate.pipeline import FileResult, process_source

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

    from dra_migrate.kinds import KindRuleSet
    from dra_migrate.run import RunConfig

AUTO_THRESHOLD = 200  # below this many files to translate, starting processes costs more than it saves
CHUNK = 16

Item = tuple[str, bytes, bool]  # display path, bytes, helm template path
_WORKER: dict[str, Any] = {}  # what a forked worker inherits: options, rules, claims placement


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def _translate_chunk(items: list[Item]) -> list[tuple[FileResult, list[TraceEntry]]]:
    ctx = RunContext(_WORKER["options"])
    out: list[tuple[FileResult, list[TraceEntry]]] = []
    for display, raw, helm in items:
        trace: list[TraceEntry] = []
        ctx.namer.trace = trace
        fr = process_source(display, raw, ctx, rules=_WORKER["rules"], claims_elsewhere=_WORKER["claims_elsewhere"],
                            helm_template=helm)
        fr.original = b""  # the parent has the bytes
        if not _WORKER["keep_ir"]:
            fr.drop_ir()  # the parent would drop it too: spare pickling it
        out.append((fr, trace))
    return out


class Processor:
    """submit() every file to translate in file order, then result() for each in the same order."""

    def __init__(
        self, cfg: RunConfig, rules: KindRuleSet, ctx: RunContext, before_fork: Callable[[], None] | None = None
    ) -> None:
        self.cfg, self.rules, self.ctx = cfg, rules, ctx
        self.before_fork = before_fork  # e.g. let a writer thread go idle: fork only a quiet process
        self.jobs = cfg.jobs if cfg.jobs is not None else default_jobs()
        self.auto = cfg.jobs is None
        self.waiting: list[Item] = []  # submitted, not yet sent to a worker
        self.sent: deque[tuple[Future[list[tuple[FileResult, list[TraceEntry]]]], int]] = deque()
        self.ready: deque[tuple[FileResult, list[TraceEntry] | None] | None] = deque()
        self.submitted = 0
        self.executor: ProcessPoolExecutor | None = None
        self.conflicts = 0  # files translated again in the parent (for benchmarks)

    def _parallel(self) -> bool:
        if self.jobs <= 1:
            return False
        return not self.auto or self.submitted >= AUTO_THRESHOLD

    def submit(self, display: str, raw: bytes, helm: bool) -> None:
        self.submitted += 1
        self.waiting.append((display, raw, helm))
        if self._parallel() and len(self.waiting) >= CHUNK:
            self._send()

    def _send(self) -> None:
        if self.executor is None:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            _WORKER.update(options=self.cfg.options, rules=self.rules,
                           claims_elsewhere=self.cfg.claims_out is not None, keep_ir=self.cfg.keep_ir)
            # The parent translates the first file itself before forking, as a worker would (its result is
            # replayed or skipped in order like theirs): the workers inherit what it loaded (schemas,
            # validators, the CEL environment, compiled selectors) instead of each loading them again.
            self.ready.extend(_translate_chunk([self.waiting.pop(0)]))
            if self.before_fork is not None:
                self.before_fork()
            # What the workers inherit stays shared with them: the collector would otherwise visit (and so
            # copy into each worker) every page of the parent's objects, the walk's file list included.
            gc.freeze()
            self.executor = ProcessPoolExecutor(self.jobs, mp_context=multiprocessing.get_context("fork"))
        while self.waiting:
            chunk, self.waiting = self.waiting[:CHUNK], self.waiting[CHUNK:]
            self.sent.append((self.executor.submit(_translate_chunk, chunk), len(chunk)))

    def _next(self) -> tuple[FileResult, list[TraceEntry] | None] | None:
        """The workers' outcome for the next submitted file (None: translate it here)."""
        if self.waiting:
            self._send()
        if not self.ready and self.sent:
            future, n = self.sent.popleft()
            try:
                self.ready.extend(future.result())
            except Exception:  # noqa: BLE001 - a broken worker costs time, not the result
                self.ready.extend([None] * n)
        return self.ready.popleft() if self.ready else None

    def skip(self) -> None:
        """Drop the next submitted file's outcome: the run decided not to translate it after all (a file
        submitted early that the layout reports instead). Its names are not taken."""
        if self.executor is None and not self._parallel():
            if self.waiting:
                self.waiting.pop(0)
            return
        self._next()

    def reset(self) -> None:
        """Forget everything submitted (translated with settings that turned out to be incomplete)."""
        self.close()
        self.waiting, self.sent, self.ready = [], deque(), deque()
        self.submitted = 0

    def result(self, display: str, raw: bytes, helm: bool) -> FileResult:
        if self.executor is None and not self._parallel():
            if self.waiting:
                self.waiting.pop(0)
            return self._serial(display, raw, helm)
        done = self._next()
        if done is None:
            return self._serial(display, raw, helm)
        fr, trace = done
        if trace is None:  # translated by the parent, in order
            return fr
        if fr.path != display or not self.ctx.namer.replay(trace):
            self.conflicts += 1
            return self._serial(display, raw, helm)
        return fr

    def here(self, display: str, raw: bytes, helm: bool) -> FileResult:
        """Translate a file that was not submitted, in this process, in its turn in file order."""
        return self._serial(display, raw, helm)

    def _serial(self, display: str, raw: bytes, helm: bool) -> FileResult:
        return process_source(display, raw, self.ctx, rules=self.rules,
                              claims_elsewhere=self.cfg.claims_out is not None, helm_template=helm)

    def close(self) -> None:
        if self.executor is not None:
            self.executor.shutdown(wait=True, cancel_futures=True)
            self.executor = None
            gc.unfreeze()
