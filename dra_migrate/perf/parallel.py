"""Translating a run's files in worker processes, with exactly the outcome of a serial run.

The fork executor: it implements run.executor.Executor (the serial executor there is the reference it must
match byte for byte) and run.executor.select takes it when perf/ is there, unless --jobs 1 or
DRA_MIGRATE_EXECUTOR=serial. Files are sent in chunks to a fork-based process pool; each worker translates
its chunk in order with its own RunContext whose namer records what the file took from the run
(perf.recording.RecordingNamer: the names the pre-pass gave it, shared claim groups). The parent takes the
results in file order and replays each file's record on the run's namer: when everything comes out the
same, the worker's result is the serial result; otherwise (a worker forked before the pre-pass gave names,
a shared claim group spanning chunks) the parent translates that file again itself. Without conflicts the
parent only reads, writes and replays; with many it degrades to a serial run, never to a different one.

Results are asked for by ticket, so files submitted after the run's read may be translated before files
started during it; what decides the outcome is the order of the replays, which is file order.
"""

from __future__ import annotations

import gc
import itertools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from dra_migrate.config import Options
from dra_migrate.lower.context import RunContext
from dra_migrate.lower.names import FileEntry, NameTable
from dra_migrate.perf import frozen_pickle, switches, verdict_memo
from dra_migrate.perf.recording import RecordingNamer, TraceEntry, replay
from dra_migrate.perf.scout import usable_cpus
from dra_migrate.pipeline import FileResult, process_source

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

    from dra_migrate.ruleset.kinds import KindRuleSet

AUTO_THRESHOLD = 200  # below this many files to translate, starting processes costs more than it saves
# ...unless the walk found this many files: then the run surely has enough to do, and the workers start with
# the first chunk instead of after AUTO_THRESHOLD submissions (a tenth of a 10,000-file run's read).
LARGE_WALK = 1000
# Files translated while the run still reads (see run._run) are held in the parent until the read is over;
# past this many files into the walk none is started early, so a huge repository cannot pile them up.
EARLY_FILES = 20_000
CHUNK = 16

# display path, bytes, helm template path, position in file order, what the run's pre-pass said of its names
Item = tuple[str, bytes, bool, int, FileEntry | None]
Outcome = tuple[FileResult, list[TraceEntry]]
# A chunk's outcomes, and the selector verdicts its worker learned (perf.verdict_memo: the run's process saves them)
ChunkResult = tuple[list[Outcome], verdict_memo.Learned]
_WORKER: dict[str, Any] = {}  # what a forked worker inherits: options, rules, claims placement

# What crosses back from the workers by the thousand pickles as constructor calls (perf.frozen_pickle).
frozen_pickle.register_results()


class RunSettings(Protocol):
    """What the executor reads of the run's settings (run.driver.RunConfig)."""

    @property
    def jobs(self) -> int | None: ...
    @property
    def options(self) -> Options: ...
    @property
    def claims_out(self) -> Path | None: ...
    @property
    def keep_ir(self) -> bool: ...


def default_jobs() -> int:
    return usable_cpus()


def _translate_chunk(items: list[Item]) -> ChunkResult:
    # A worker keeps its namer from chunk to chunk while they come in file order: the shared claim groups its
    # earlier files joined are then also joined when the parent replays (unless those files were translated
    # again), so files of one group in the same worker replay instead of conflicting. A chunk from earlier in
    # the file order starts afresh: groups of later files would make false conflicts.
    kept: tuple[RunContext, RecordingNamer, int] | None = _WORKER.get("namer")
    if kept is not None and kept[2] < items[0][3]:
        ctx, namer = kept[0], kept[1]
    else:
        namer = RecordingNamer(_WORKER["facts"])
        ctx = RunContext(_WORKER["options"], namer, facts=_WORKER["facts"])
    out: list[Outcome] = []
    for display, raw, helm, _position, names in items:
        trace: list[TraceEntry] = []
        namer.trace = trace
        namer.given = {display: names} if names is not None else {}  # forked before the pre-pass: sent
        fr = process_source(display, raw, ctx, rules=_WORKER["rules"], claims_elsewhere=_WORKER["claims_elsewhere"],
                            helm_template=helm)
        fr.original = b""  # the parent has the bytes
        if not _WORKER["keep_ir"]:
            fr.drop_ir()  # the parent would drop it too: spare pickling it
        out.append((fr, trace))
    _WORKER["namer"] = (ctx, namer, items[-1][3])
    return out, verdict_memo.take_learned()


class Processor:
    """The fork executor (run.executor.Executor): submit() every file to translate (a ticket back), then
    result(ticket, ...) for each in file order."""

    def __init__(
        self, cfg: RunSettings, rules: KindRuleSet, ctx: RunContext, before_fork: Callable[[], None] | None = None
    ) -> None:
        self.cfg, self.rules, self.ctx = cfg, rules, ctx
        self.before_fork = before_fork  # e.g. let a writer thread go idle: fork only a quiet process
        self.jobs = cfg.jobs if cfg.jobs is not None else default_jobs()
        self.auto = cfg.jobs is None
        self.large = False  # set when the walk found LARGE_WALK files or more
        self.waiting: dict[int, Item] = {}  # submitted, not yet sent to a worker
        self.sent: dict[int, Future[ChunkResult]] = {}  # ticket -> the future of its chunk
        self.chunks: dict[Future[ChunkResult], list[int]] = {}
        self.done: dict[int, Outcome | None] = {}  # None: translate it here
        self.skipped: set[int] = set()  # sent, then dropped: its outcome is not kept when it comes
        self.tickets = itertools.count()
        self.submitted = 0
        self.executor: ProcessPoolExecutor | None = None
        self.warm = False  # the parent translated a file already: forks share what it loaded
        self.conflicts = 0  # files translated again in the parent (for benchmarks)

    @property
    def large_walk(self) -> int:
        return LARGE_WALK

    @property
    def early_files(self) -> int:
        return 0 if switches.off("early") else EARLY_FILES

    def _parallel(self) -> bool:
        if self.executor is not None:
            return True
        if self.jobs <= 1:
            return False
        return not self.auto or self.large or self.submitted >= AUTO_THRESHOLD

    def submit(self, display: str, raw: bytes, helm: bool, position: int) -> int:
        """`position`: the file's place in file order (any increasing numbering)."""
        ticket = next(self.tickets)
        self.submitted += 1
        table = self.ctx.facts.names
        self.waiting[ticket] = (display, raw, helm, position, table.entry(display) if isinstance(table, NameTable)
                                else None)
        # On a large walk the first file starts the pool (the warm-up translates it): the workers are
        # forked while the next chunk is read instead of after it.
        if self._parallel() and (len(self.waiting) >= CHUNK or (self.large and not self.warm)):
            self._send()
        return ticket

    def _start(self) -> ProcessPoolExecutor:
        if self.executor is None:
            # lazy: start-up (a run with too few files to fork never imports them)
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            _WORKER.update(options=self.cfg.options, facts=self.ctx.facts, rules=self.rules,
                           claims_elsewhere=self.cfg.claims_out is not None, keep_ir=self.cfg.keep_ir, namer=None)
            if self.waiting and not self.warm:
                # The parent translates the first file itself before forking, as a worker would (its result
                # is replayed in order like theirs): the workers inherit what it loaded (schemas, validators,
                # the CEL environment, compiled selectors) instead of each loading them again.
                ticket = next(iter(self.waiting))
                outcomes, learned = _translate_chunk([self.waiting.pop(ticket)])
                self.done[ticket] = outcomes[0]
                verdict_memo.merge(learned)  # (taken back from this process's memo as from a worker's)
                self.warm = True
            if self.before_fork is not None:
                self.before_fork()
            # What the workers inherit stays shared with them: the collector would otherwise visit (and so
            # copy into each worker) every page of the parent's objects.
            gc.freeze()
            self.executor = ProcessPoolExecutor(self.jobs, mp_context=multiprocessing.get_context("fork"))
        return self.executor

    def flush(self) -> None:
        """Everything is submitted: send what waits now, in chunks small enough that the workers finish
        together (else the leftovers would go out only when their results are asked for, to one worker)."""
        if self.waiting and self._parallel():
            self._send(max(1, min(CHUNK, -(-len(self.waiting) // (2 * self.jobs)))))

    def _send(self, size: int = CHUNK) -> None:
        executor = self._start()
        items = sorted(self.waiting.items(), key=lambda ticket_item: ticket_item[1][3])  # chunks in file order
        self.waiting.clear()
        for i in range(0, len(items), size):
            tickets = [t for t, _item in items[i:i + size]]
            future = executor.submit(_translate_chunk, [item for _t, item in items[i:i + size]])
            self.chunks[future] = tickets
            self.sent.update(dict.fromkeys(tickets, future))

    def _take(self, ticket: int) -> Outcome | None:
        if ticket in self.done:
            return self.done.pop(ticket)
        if ticket in self.waiting:
            if not self._parallel():  # a serial run: translated here, in its turn
                del self.waiting[ticket]
                return None
            self._send()
        future = self.sent.get(ticket)
        if future is None:
            return None
        tickets = self.chunks.pop(future)
        try:
            chunk, learned = future.result()
            outcomes: list[Outcome | None] = list(chunk)
            verdict_memo.merge(learned)
        except Exception:  # noqa: BLE001 - a broken worker costs time, not the result
            outcomes = [None] * len(tickets)
        for t, outcome in zip(tickets, outcomes, strict=True):
            del self.sent[t]
            if t in self.skipped:
                self.skipped.discard(t)
            else:
                self.done[t] = outcome
        return self.done.pop(ticket)

    def skip(self, ticket: int) -> None:
        """Drop a submitted file's outcome: the run decided not to translate it after all (a file started
        early that the layout reports instead). Its names are not taken."""
        self.submitted -= self.waiting.pop(ticket, None) is not None
        self.done.pop(ticket, None)
        if ticket in self.sent:
            self.skipped.add(ticket)

    def reset(self) -> None:
        """Forget everything submitted (translated with settings that turned out to be incomplete)."""
        self.close()
        self.waiting, self.sent, self.chunks, self.done, self.skipped = {}, {}, {}, {}, set()
        self.submitted = 0

    def result(self, ticket: int, display: str, raw: bytes, helm: bool) -> FileResult:
        done = self._take(ticket)
        if done is None:
            return self._serial(display, raw, helm)
        fr, trace = done
        if fr.path != display or not replay(self.ctx.namer, trace):
            self.conflicts += 1
            return self._serial(display, raw, helm)
        return fr

    def _serial(self, display: str, raw: bytes, helm: bool) -> FileResult:
        self.warm = True
        return process_source(display, raw, self.ctx, rules=self.rules,
                              claims_elsewhere=self.cfg.claims_out is not None, helm_template=helm)

    def close(self) -> None:
        if self.executor is not None:
            self.executor.shutdown(wait=True, cancel_futures=True)
            self.executor = None
            gc.unfreeze()
