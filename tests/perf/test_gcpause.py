"""The collector is paused from CLI start to the end of the run's first translation, and only then."""

from __future__ import annotations

import gc
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dra_migrate.perf import gcpause, parallel
from dra_migrate.run.driver import RunConfig, run_migration
from tests.perf.test_parallel import make_tree


@pytest.fixture(autouse=True)
def _collector_on() -> Iterator[None]:
    yield
    gcpause.resume()
    gc.enable()


def _collector_during_translations(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    seen: list[bool] = []
    translate = parallel.process_source

    def recording(*args: Any, **kwargs: Any) -> Any:
        seen.append(gc.isenabled())
        return translate(*args, **kwargs)

    monkeypatch.setattr(parallel, "process_source", recording)
    return seen


def test_paused_for_the_first_translation_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_tree(tmp_path / "repo", files=40)  # too few for worker processes: the fork executor translates here
    seen = _collector_during_translations(monkeypatch)
    gcpause.pause()
    run_migration(RunConfig(paths=[str(tmp_path / "repo")], mode="check"))
    assert len(seen) > 2 and seen[0] is False and all(seen[1:])
    assert gc.isenabled()


def test_the_serial_executor_runs_with_the_collector_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from dra_migrate.run import executor

    make_tree(tmp_path / "repo", files=5)
    seen: list[bool] = []
    translate = executor.process_source
    monkeypatch.setattr(executor, "process_source",
                        lambda *a, **k: (seen.append(gc.isenabled()), translate(*a, **k))[1])
    gcpause.pause()
    run_migration(RunConfig(paths=[str(tmp_path / "repo")], mode="check", jobs=1))
    assert len(seen) > 2 and all(seen)


def test_a_run_that_translates_nothing_ends_with_the_collector_on(tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n")
    gcpause.pause()
    run_migration(RunConfig(paths=[str(tmp_path)], mode="check", jobs=1))
    assert gc.isenabled()


def test_a_collector_the_caller_turned_off_stays_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_tree(tmp_path / "repo", files=10)
    gc.disable()
    gcpause.pause()  # nothing to pause: resume() must not turn it on behind the caller's back
    run_migration(RunConfig(paths=[str(tmp_path / "repo")], mode="check", jobs=1))
    assert not gc.isenabled()


def _cli(argv: list[str], fast_path: str) -> str:
    code = ("import gc, sys, atexit; from dra_migrate import entry; "
            f"entry._fast_path = {fast_path}; sys.argv = ['dra-migrate', *{argv!r}]; "
            "atexit.register(lambda: print('at exit', 'on' if gc.isenabled() else 'paused')); entry.main()")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_cli_starts_a_migrate_run_with_it_paused() -> None:
    out = _cli(["migrate", "x.yaml"], "lambda argv: print('at start', 'on' if gc.isenabled() else 'paused') or 0")
    assert "at start paused" in out


def test_commands_handed_to_typer_run_with_it_on() -> None:
    out = _cli(["rules"], "lambda argv: None")
    assert "DRA" in out and out.strip().endswith("at exit on")


def test_workers_are_forked_with_the_collector_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_tree(tmp_path / "repo", files=60)
    monkeypatch.setattr(parallel, "LARGE_WALK", 10)  # the pool starts at once, after a warm-up here
    seen = _collector_during_translations(monkeypatch)
    forked_with: list[bool] = []
    start = parallel.Processor._start

    def recording_start(self: parallel.Processor) -> Any:
        fresh = self.executor is None
        executor = start(self)
        if fresh:
            forked_with.append(gc.isenabled())
        return executor

    monkeypatch.setattr(parallel.Processor, "_start", recording_start)
    gcpause.pause()
    run_migration(RunConfig(paths=[str(tmp_path / "repo")], mode="check", jobs=2))
    assert seen[0] is False  # the warm-up translation, in this process
    assert forked_with == [True]
    assert gc.isenabled()
