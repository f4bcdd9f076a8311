"""Turning one piece of speed machinery off, to measure what it buys (benchmarks/run.py --ablate).

DRA_MIGRATE_PERF_OFF is a comma-separated list of mechanisms; DRA_MIGRATE_EXECUTOR=serial
(run.executor.EXECUTOR_ENV) turns every one off. Each is off only where it is engaged, and the output is the
same either way (each mechanism is behaviour-preserving; tests/perf/test_executors.py):

- workers: the fork executor (perf.parallel.Processor): files translated in this process, as with --jobs 1;
- early: files translated by the workers while the run still reads (the speculation of run.driver._run);
- scout: the second process that walks and reads while the compiler is imported (perf.scout);
- background: the writer thread and its batched syncs (perf.background): each rewrite synced on its own;
- caches: the CEL parser cache and the selector-verdict memo (perf.caches).

Imports nothing: the entry point asks before the compiler is imported.
"""

from __future__ import annotations

import os

OFF_ENV = "DRA_MIGRATE_PERF_OFF"
EXECUTOR_ENV = "DRA_MIGRATE_EXECUTOR"  # (run.executor.EXECUTOR_ENV; perf/ imports nothing from run/)
MECHANISMS = ("workers", "early", "scout", "background", "caches")


def off(mechanism: str) -> bool:
    """Whether `mechanism` (one of MECHANISMS) is switched off for this process."""
    if os.environ.get(EXECUTOR_ENV, "").strip().lower() == "serial":
        return True
    return mechanism in (m.strip().lower() for m in os.environ.get(OFF_ENV, "").split(","))
