"""Writes on the background thread: in submission order, every one finished by close(), failures reported."""

from __future__ import annotations

import threading

from dra_migrate.diagnostics import Location, make
from dra_migrate.emit.background import BackgroundWrites


def test_jobs_run_in_order_off_the_calling_thread_and_report_in_order() -> None:
    done: list[int] = []
    threads: set[str] = set()
    writes = BackgroundWrites(max_pending=2)  # a small queue: submit blocks instead of growing

    def job(n: int):  # type: ignore[no-untyped-def]
        def run():  # type: ignore[no-untyped-def]
            threads.add(threading.current_thread().name)
            done.append(n)
            return [make("DRA106", f"failed {n}", Location(f"f{n}"))] if n % 3 == 0 else []
        return run

    for n in range(10):
        writes.submit(f"f{n}", job(n))
    writes.drain()
    assert done == list(range(10))
    diags = writes.close()
    assert [d.message for d in diags] == ["failed 0", "failed 3", "failed 6", "failed 9"]
    assert threads == {"dra-migrate-writes"}


def test_a_job_that_raises_is_reported_and_the_rest_still_run() -> None:
    writes = BackgroundWrites()
    done: list[str] = []

    def boom():  # type: ignore[no-untyped-def]
        raise RuntimeError("disk on fire")

    writes.submit("a.yaml", boom)
    writes.submit("b.yaml", lambda: done.append("b") or [])
    diags = writes.close()
    assert done == ["b"]
    assert [(d.code, d.location.file) for d in diags] == [("DRA106", "a.yaml")]
    assert "disk on fire" in diags[0].message
    assert writes.close() == []  # closing twice is harmless
