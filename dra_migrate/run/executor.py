"""How a run's files are translated: the executor protocol, the serial reference executor, and the choice.

The run (run.driver) submits each file it will translate (a ticket back) and then asks for every result in
file order. An executor decides only where and when a file is translated, never what comes out: the serial
executor below is the reference, and any other must give its results byte for byte. perf.parallel.Processor
(worker processes, files started while the run still reads, the scout's walk) is the other one; `select`
takes it when perf/ can be imported, unless DRA_MIGRATE_EXECUTOR=serial or --jobs 1 says otherwise. Deleting
perf/ leaves a correct serial tool.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from dra_migrate.config import Options
from dra_migrate.pipeline import FileResult, process_source
from dra_migrate.run.writes import DirectWrites, Writes, write_problem

if TYPE_CHECKING:
    from dra_migrate.lower.context import RunContext
    from dra_migrate.ruleset.kinds import KindRuleSet

# "serial": none of perf/'s machinery (as if it were deleted): the serial executor, direct writes, no GC pause,
# no scout, no CEL caches. dra_migrate.entry reads it too (it imports nothing it can avoid).
EXECUTOR_ENV = "DRA_MIGRATE_EXECUTOR"


class RunSettings(Protocol):
    """What an executor reads of the run's settings (run.driver.RunConfig, which imports this module)."""

    @property
    def jobs(self) -> int | None: ...
    @property
    def claims_out(self) -> Path | None: ...
    @property
    def options(self) -> Options: ...  # (perf.parallel's workers are started with them)
    @property
    def keep_ir(self) -> bool: ...


class Executor(Protocol):
    large: bool  # set by the run when its walk holds at least `large_walk` files

    @property
    def jobs(self) -> int:
        """Processes translating at once (1: the run's own only; the run then starts nothing early)."""

    @property
    def large_walk(self) -> int | None:
        """How many files of the walk the run looks at first to tell `large` (None: it does not ask)."""

    @property
    def early_files(self) -> int:
        """How far into the walk files may be submitted while the run still reads."""

    def submit(self, display: str, raw: bytes, helm: bool, position: int) -> int:
        """A file to translate; `position` is its place in file order (any increasing numbering)."""

    def flush(self) -> None:
        """Everything is submitted."""

    def result(self, ticket: int, display: str, raw: bytes, helm: bool) -> FileResult:
        """The file's translation, asked for in file order."""

    def skip(self, ticket: int) -> None:
        """The run will not ask for this file's result after all (its names are not taken)."""

    def reset(self) -> None:
        """Forget everything submitted (translated with settings the pre-pass then changed)."""

    def close(self) -> None: ...


class SerialExecutor:
    """Each file translated in this process when its result is asked for, in file order: the reference."""

    jobs = 1
    large_walk = None
    early_files = 0

    def __init__(self, cfg: RunSettings, rules: KindRuleSet, ctx: RunContext) -> None:
        self.rules, self.ctx = rules, ctx
        self.claims_elsewhere = cfg.claims_out is not None
        self.large = False
        self.submitted = 0

    def submit(self, display: str, raw: bytes, helm: bool, position: int) -> int:
        self.submitted += 1
        return self.submitted

    def result(self, ticket: int, display: str, raw: bytes, helm: bool) -> FileResult:
        return process_source(display, raw, self.ctx, rules=self.rules, claims_elsewhere=self.claims_elsewhere,
                              helm_template=helm)

    def flush(self) -> None:
        pass

    def skip(self, ticket: int) -> None:
        pass

    def reset(self) -> None:
        pass

    def close(self) -> None:
        pass


def forced_serial() -> bool:
    return os.environ.get(EXECUTOR_ENV, "").strip().lower() == "serial"


def select(cfg: RunSettings, rules: KindRuleSet, ctx: RunContext) -> tuple[Executor, Writes]:
    """The run's executor and writer: perf/'s when it is there and wanted, else the serial ones. --jobs 1
    translates serially but keeps perf/'s background writer (its batched syncs serve any executor)."""
    if forced_serial():
        return SerialExecutor(cfg, rules, ctx), DirectWrites()
    try:
        # lazy: optional (perf/ may be deleted)
        from dra_migrate.perf import switches
        from dra_migrate.perf.background import BackgroundWrites
        from dra_migrate.perf.parallel import Processor
    except ImportError:  # perf/ removed: a serial tool
        return SerialExecutor(cfg, rules, ctx), DirectWrites()
    # (DRA_MIGRATE_PERF_OFF turns one mechanism off, for benchmarks/run.py --ablate: perf.switches)
    writes: Writes = DirectWrites() if switches.off("background") else BackgroundWrites(write_problem)
    if cfg.jobs == 1 or switches.off("workers"):
        return SerialExecutor(cfg, rules, ctx), writes
    return Processor(cfg, rules, ctx, before_fork=writes.drain), writes


def install_caches() -> None:
    """perf/'s CEL parser cache and selector-verdict memo in cel/'s hooks, if perf/ is there and the run is
    not forced serial (idempotent)."""
    if forced_serial():
        return
    try:
        from dra_migrate.perf import caches, switches  # lazy: optional (perf/ may be deleted)
    except ImportError:  # perf/ removed: CEL builds its parser and evaluates every selector
        return
    if not switches.off("caches"):
        caches.install()
