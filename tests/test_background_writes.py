"""Writes on the background thread: in submission order, every one finished by close(), failures reported;
in-place rewrites renamed in durable batches."""

from __future__ import annotations

import errno
import stat
import threading
from pathlib import Path

import pytest

from dra_migrate.diagnostics import Location, make
from dra_migrate.emit import background
from dra_migrate.emit.background import BackgroundWrites
from dra_migrate.emit.writer import StagedReplace


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


def _tree(tmp_path: Path, n: int) -> list[Path]:
    files = []
    for i in range(n):
        p = tmp_path / f"d{i % 3}" / f"f{i}.yaml"
        p.parent.mkdir(exist_ok=True)
        p.write_bytes(b"old\n")
        files.append(p)
    return files


def test_rewrites_are_renamed_in_batches_and_all_by_close(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(background, "BATCH", 4)
    synced: list[str] = []
    sync = StagedReplace.sync
    monkeypatch.setattr(StagedReplace, "sync", lambda self: (synced.append(self.tmp), sync(self))[1])
    files = _tree(tmp_path, 10)
    files[0].chmod(0o640)
    writes = BackgroundWrites()
    for i, p in enumerate(files):
        writes.replace(str(p), p, f"new {i}\n".encode())
    writes.drain()  # a batch not yet full is committed too: drain leaves nothing pending
    assert [p.read_bytes() for p in files] == [f"new {i}\n".encode() for i in range(10)]
    assert writes.close() == []
    assert len(synced) == 10  # every file made durable before its rename
    assert stat.S_IMODE(files[0].stat().st_mode) == 0o640  # the mode is kept
    assert not [p for p in tmp_path.rglob("*") if p.name.endswith(".dra-migrate.tmp")]


def test_what_is_left_at_close_goes_in_one_last_batch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(background, "BATCH", 2)
    batches: list[int] = []
    commit = background.BackgroundWrites._commit

    def counted(self: BackgroundWrites) -> None:
        if self._staged:
            batches.append(len(self._staged))
        commit(self)

    monkeypatch.setattr(background.BackgroundWrites, "_commit", counted)
    files = _tree(tmp_path, 5)
    writes = BackgroundWrites()
    hold = threading.Event()
    writes.submit("hold", lambda: (hold.wait(10), [])[1])  # the thread is busy while the rewrites queue up
    for i, p in enumerate(files):
        writes.replace(str(p), p, f"new {i}\n".encode())
    closing = threading.Thread(target=writes.close)
    closing.start()
    while not writes._closing and closing.is_alive():
        threading.Event().wait(0.001)
    hold.set()
    closing.join()
    assert batches == [5]  # not 2 + 2 + 1: the last files do not wait for batches before theirs
    assert [p.read_bytes() for p in files] == [f"new {i}\n".encode() for i in range(5)]


def test_a_rewrite_that_cannot_be_made_durable_leaves_the_original(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = _tree(tmp_path, 3)
    sync = StagedReplace.sync

    def failing(self: StagedReplace) -> None:
        if self.path == files[1]:
            raise OSError(errno.EIO, "Input/output error")
        sync(self)

    monkeypatch.setattr(StagedReplace, "sync", failing)
    files[2].chmod(0o444)  # read-only: refused before anything is written
    writes = BackgroundWrites()
    for p in files:
        writes.replace(p.name, p, b"new\n")
    diags = writes.close()
    assert [p.read_bytes() for p in files] == [b"new\n", b"old\n", b"old\n"]
    assert sorted((d.code, d.location.file) for d in diags) == [("DRA106", "f1.yaml"), ("DRA111", "f2.yaml")]
    assert "Input/output error" in next(d.message for d in diags if d.code == "DRA106")
    assert not [p for p in tmp_path.rglob("*") if p.name.endswith(".dra-migrate.tmp")]
