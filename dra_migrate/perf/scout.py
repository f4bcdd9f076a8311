"""Reading a repository in a second process while the first one starts (the scout).

A large run spends its first quarter second on one core: the compiler's imports and the translation of a
first file, before the worker processes are forked. The run's read of the repository (the walk, then one
read and one search of every file: ~0.4 s of CPU per 10,000 files) needs none of that. So when a command line
will walk a directory on a machine with more than one CPU, dra_migrate.entry forks a scout before the
compiler is imported: it walks the paths, scans every file (dra_migrate.source.filescan) and sends the run, in walk
order, what the run's own walk and read would have given it: the walk's diagnostics, every file the run
keeps with its scan, and only the displayed path of the others (nothing in them concerns the run, unless it
copies every file to an --output-dir: then every file comes with its scan). The run
takes these records instead of walking (run._run): same files, same order, same outcome; each file read once.

On the wire: frames of a 4-byte length and a pickled list of records (a Diagnostic, a str for a file of no
concern, or (Found, scan)); a frame holding None ends the walk. The scout holds what the run has not taken yet
in its own memory up to AHEAD bytes, then waits: it is most useful while the run imports, and a slow run must
not make it hold the repository.

A scout that ends without its last frame (killed, out of memory) costs time, not the result: the run walks
the paths again itself and reads the files the scout did not send.
"""

from __future__ import annotations

import os

# Forked before the compiler is imported: what the scout alone needs is imported in the scout.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections import deque
    from collections.abc import Iterator, Sequence
    from typing import Any

    from dra_migrate.diagnostics.model import Diagnostic
    from dra_migrate.source.discover import Found
    from dra_migrate.source.filescan import Scan

AHEAD = 8 << 20  # bytes of records the scout holds for the run at most
_FRAME = 256 << 10  # a frame is sent once its records hold this many bytes of files...
_FRAME_FILES = 512  # ...or this many files
_HEADER = 4  # bytes of a frame's length, little-endian
_F_SETPIPE_SZ = 1031  # Linux: a 1 MiB pipe, so the scout blocks less often than with the default 64 KiB

# paths, excludes, gitignore, max bytes per file, every file's bytes (--output-dir copies even the plain ones)
Params = tuple[tuple[str, ...], tuple[str, ...], bool, int, bool]
_pending: Scout | None = None


def usable_cpus() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def start(paths: Sequence[str], excludes: Sequence[str], gitignore: bool, max_bytes: int, full: bool = False
          ) -> None:
    """Fork a scout for this walk, if it is worth one: a directory to walk, more than one CPU, fork available,
    no other thread (a forked thread-holding process could deadlock on a lock another thread held)."""
    global _pending
    # lazy: start-up (forked before the compiler is imported: each part imports what it uses)
    import threading

    if _pending is not None or not hasattr(os, "fork") or threading.active_count() > 1 or usable_cpus() < 2:
        return
    if not any(os.path.isdir(p) for p in paths):
        return
    params: Params = (tuple(paths), tuple(excludes), gitignore, max_bytes, full)
    try:
        rfd, wfd = os.pipe()
    except OSError:
        return
    try:
        pid = os.fork()
    except OSError:
        os.close(rfd)
        os.close(wfd)
        return
    if pid == 0:  # pragma: no cover - the child (coverage does not follow a fork)
        code = 1
        try:
            os.close(rfd)
            _scout(wfd, params)
            code = 0
        except BaseException:  # noqa: BLE001, S110 - the run falls back to its own walk; nothing to say here
            pass
        finally:
            os._exit(code)
    os.close(wfd)
    _pending = Scout(pid, rfd, params)
    # lazy: start-up (forked before the compiler is imported: each part imports what it uses)
    import atexit

    atexit.register(_pending.close)  # a run that never took it (bad options, another command) stops it


def take(paths: Sequence[str], excludes: Sequence[str], gitignore: bool, max_bytes: int, full: bool = False
         ) -> Scout | None:
    """The scout started for exactly this walk (and, `full`, sending every file's bytes), once; a scout
    started for another walk is stopped."""
    global _pending
    scout, _pending = _pending, None
    if scout is None:
        return None
    if scout.params != (tuple(paths), tuple(excludes), gitignore, max_bytes, full):
        scout.close()
        return None
    return scout


class Scout:
    def __init__(self, pid: int, rfd: int, params: Params) -> None:
        self.pid, self.params = pid, params
        self._file = os.fdopen(rfd, "rb", buffering=1 << 16)
        self._ended = False  # the last frame came
        self._reaped = False

    def reads(self, diagnostics: list[Diagnostic]) -> Iterator[tuple[Found | str, Scan]]:
        """(file, scan) in walk order, as the run's own walk and read would give them: a str for a file of no
        concern to the run (its displayed path; its scan says "plain" with no bytes). The walk's
        diagnostics go to `diagnostics` where the walk would have put them: before the next file."""
        files = diagnosed = 0
        try:
            while (records := self._frame()) is not None:
                for record in records:
                    if isinstance(record, str):
                        files += 1
                        yield record, ("plain", b"")
                    elif isinstance(record, tuple):
                        files += 1
                        yield record
                    else:
                        diagnosed += 1
                        diagnostics.append(record)
            if self._ended:
                return
        finally:
            self.close()
        yield from _walk_rest(self.params, files, diagnosed, diagnostics)  # the scout stopped early

    def _frame(self) -> list[Any] | None:
        header = self._file.read(_HEADER)
        if len(header) < _HEADER:
            return None
        size = int.from_bytes(header, "little")
        data = self._file.read(size)
        if len(data) < size:
            return None
        # lazy: start-up (forked before the compiler is imported: each part imports what it uses)
        import pickle

        records = pickle.loads(data)  # noqa: S301 - from our own forked child, over a private pipe
        if records is None:
            self._ended = True
        return records

    def close(self) -> None:
        """Stop the scout if it is still walking, and reap it."""
        # lazy: start-up (forked before the compiler is imported: each part imports what it uses)
        import contextlib

        if self._reaped:
            return
        self._reaped = True
        self._file.close()
        if not self._ended:
            # lazy: start-up (forked before the compiler is imported: each part imports what it uses)
            import signal

            with contextlib.suppress(OSError):
                os.kill(self.pid, signal.SIGKILL)  # it only reads: nothing to leave half done
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self.pid, 0)


def _walk_rest(params: Params, files: int, diagnosed: int, diagnostics: list[Diagnostic]
               ) -> Iterator[tuple[Found, Scan]]:
    """What the scout did not send: the same walk again, its first `files` files and `diagnosed`
    diagnostics skipped (they were received)."""
    # lazy: start-up (forked before the compiler is imported: each part imports what it uses)
    from dra_migrate.source.discover import discover
    from dra_migrate.source.filescan import scan

    paths, excludes, gitignore, max_bytes, _full = params
    seen: list[Diagnostic] = []
    for n, found in enumerate(discover(paths, excludes, seen, gitignore=gitignore)):
        diagnostics.extend(seen[diagnosed:])
        diagnosed = max(diagnosed, len(seen))
        if n >= files:
            yield found, scan(os.fspath(found), max_bytes)
    diagnostics.extend(seen[diagnosed:])


def _scout(wfd: int, params: Params) -> None:  # pragma: no cover - runs in the forked child
    # lazy: start-up (forked before the compiler is imported: each part imports what it uses)
    import signal

    # lazy: start-up (forked before the compiler is imported: each part imports what it uses)
    from dra_migrate.perf import frozen_pickle
    from dra_migrate.source.discover import KUSTOMIZATION_NAMES, discover
    from dra_migrate.source.filescan import scan

    frozen_pickle.register_walk()  # (in the scout only: the run unpickles without it)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole group: the run decides, then stops us
    paths, excludes, gitignore, max_bytes, full = params
    out = _Sender(wfd)
    diagnostics: list[Diagnostic] = []
    batch: list[object] = []
    held = sent = 0
    for found in discover(paths, excludes, diagnostics, gitignore=gitignore):
        if len(diagnostics) > sent:
            batch.extend(diagnostics[sent:])
            sent = len(diagnostics)
        scanned = scan(os.fspath(found), max_bytes)
        if scanned[0] == "plain" and not full and found.name not in KUSTOMIZATION_NAMES:
            batch.append(found.display)  # (the layout notes kustomizations; --output-dir copies every file)
        else:
            batch.append((found, scanned))
            held += len(scanned[1]) if isinstance(scanned[1], bytes) else 0
        if held >= _FRAME or len(batch) >= _FRAME_FILES:
            out.send(batch)
            batch, held = [], 0
    batch.extend(diagnostics[sent:])
    out.send(batch)
    out.send(None)
    out.flush()


class _Sender:  # pragma: no cover - runs in the forked child
    """Frames to the pipe without waiting for the reader while it holds less than AHEAD bytes."""

    def __init__(self, fd: int) -> None:
        # lazy: start-up (forked before the compiler is imported: each part imports what it uses)
        from collections import deque

        try:
            # lazy: start-up (forked before the compiler is imported: each part imports what it uses)
            import fcntl

            fcntl.fcntl(fd, _F_SETPIPE_SZ, 1 << 20)
        except (ImportError, OSError):
            pass
        os.set_blocking(fd, False)
        self.fd = fd
        self.frames: deque[bytes] = deque()
        self.offset = 0  # into the first frame
        self.held = 0

    def send(self, records: list[object] | None) -> None:
        # lazy: start-up (forked before the compiler is imported: each part imports what it uses)
        import pickle

        data = pickle.dumps(records, pickle.HIGHEST_PROTOCOL)
        self.frames.append(len(data).to_bytes(_HEADER, "little") + data)
        self.held += _HEADER + len(data)
        self._push(AHEAD)

    def flush(self) -> None:
        self._push(0)

    def _push(self, keep: int) -> None:
        """Write what the pipe takes; wait for the reader while more than `keep` bytes are held."""
        # lazy: start-up (forked before the compiler is imported: each part imports what it uses)
        import select

        while self.frames:
            frame = self.frames[0]
            try:
                self.offset += os.write(self.fd, memoryview(frame)[self.offset:])
            except BlockingIOError:
                if self.held <= keep:
                    return
                select.select([], [self.fd], [])
                continue
            if self.offset == len(frame):
                self.frames.popleft()
                self.held -= len(frame)
                self.offset = 0
