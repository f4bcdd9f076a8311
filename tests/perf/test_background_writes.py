"""Writes on the background thread: in submission order, every one finished by close(), failures reported;
in-place rewrites renamed in durable batches."""

from __future__ import annotations

import errno
import os
import stat
import threading
from pathlib import Path

import pytest

from dra_migrate.diagnostics.model import Location, make
from dra_migrate.emit import writer
from dra_migrate.emit.writer import StagedReplace
from dra_migrate.perf import background
from dra_migrate.perf.background import BackgroundWrites
from dra_migrate.run.writes import write_problem


def test_jobs_run_in_order_off_the_calling_thread_and_report_in_order() -> None:
    done: list[int] = []
    threads: set[str] = set()
    writes = BackgroundWrites(write_problem, max_pending=2)  # a small queue: submit blocks instead of growing

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
    writes = BackgroundWrites(write_problem)
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
    writes = BackgroundWrites(write_problem)
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
    writes = BackgroundWrites(write_problem)
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
    writes = BackgroundWrites(write_problem)
    for p in files:
        writes.replace(p.name, p, b"new\n")
    diags = writes.close()
    assert [p.read_bytes() for p in files] == [b"new\n", b"old\n", b"old\n"]
    assert sorted((d.code, d.location.file) for d in diags) == [("DRA106", "f1.yaml"), ("DRA111", "f2.yaml")]
    assert "Input/output error" in next(d.message for d in diags if d.code == "DRA106")
    assert not [p for p in tmp_path.rglob("*") if p.name.endswith(".dra-migrate.tmp")]


def test_each_rewrite_is_synced_before_its_rename_and_each_directory_once_per_batch_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The durability order: a file's bytes are fsynced before the rename makes them visible (its sync
    starts when it is staged, on the sync threads), and every directory a batch renamed in is fsynced once,
    after the batch's renames."""
    monkeypatch.setattr(background, "BATCH", 4)
    events: list[tuple[str, str]] = []
    lock = threading.Lock()

    def record(kind: str, what: object) -> None:
        with lock:
            events.append((kind, str(what)))

    sync, commit, sync_dir = StagedReplace.sync, StagedReplace.commit, writer.sync_directory
    monkeypatch.setattr(StagedReplace, "sync", lambda self: (sync(self), record("sync", self.path))[0])
    monkeypatch.setattr(StagedReplace, "commit", lambda self: (commit(self), record("rename", self.path))[0])
    monkeypatch.setattr(writer, "sync_directory", lambda d: (sync_dir(d), record("dir", d))[0])
    files = _tree(tmp_path, 10)
    writes = BackgroundWrites(write_problem)
    for i, p in enumerate(files):
        writes.replace(str(p), p, f"new {i}\n".encode())
    writes.drain()
    assert writes.close() == []
    assert [p.read_bytes() for p in files] == [f"new {i}\n".encode() for i in range(10)]
    where = {e: n for n, e in enumerate(events)}
    for p in files:
        assert where[("sync", str(p))] < where[("rename", str(p))]
    # batches of 4, 4 and 2 files (files i and i+3 share a directory): each batch's directories once, after
    # all of the batch's renames and before the next batch's
    batches: list[list[tuple[str, str]]] = [[]]
    for kind, what in events:
        if kind == "rename" and batches[-1] and batches[-1][-1][0] == "dir":
            batches.append([])
        if kind != "sync":
            batches[-1].append((kind, what))
    assert [[w for k, w in b if k == "rename"] for b in batches] == [
        [str(p) for p in files[0:4]], [str(p) for p in files[4:8]], [str(p) for p in files[8:10]]]
    for b in batches:
        renamed = [k for k, _w in b].index("dir")
        assert all(k == "dir" for k, _w in b[renamed:])
        dirs = [w for k, w in b if k == "dir"]
        assert sorted(dirs) == sorted({str(Path(w).parent) for k, w in b if k == "rename"})


def test_a_single_atomic_write_syncs_its_bytes_then_renames_then_syncs_its_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    events: list[str] = []
    real_fsync, real_replace = os.fsync, os.replace
    monkeypatch.setattr(os, "fsync", lambda fd: (real_fsync(fd), events.append(
        "dir" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file"))[0])
    monkeypatch.setattr(os, "replace", lambda a, b: (real_replace(a, b), events.append("rename"))[0])
    target = tmp_path / "f.yaml"
    target.write_bytes(b"old\n")
    target.chmod(0o640)
    writer.write_atomic(target, b"new\n")
    assert events == ["file", "rename", "dir"]
    assert target.read_bytes() == b"new\n" and stat.S_IMODE(target.stat().st_mode) == 0o640
    events.clear()
    writer.write_atomic(tmp_path / "out.yaml", b"x\n", durable=False)  # (--output-dir copies): no sync
    assert events == ["rename"]
