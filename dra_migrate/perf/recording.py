"""A worker's namer that records what each file takes from the run, and the replay of that record.

A file's translation takes three things from the rest of the run, all through its TemplateNamer
(lower.names): the names the pre-pass gave its pod templates, the existing claim templates it reserves, the
shared ResourceClaim names it is given. A worker process translates its files with a RecordingNamer, which
notes each call with what it returned; the run replays the calls on its own namer in file order (`replay`).
When every call returns there what it returned in the worker, the worker's result is the serial result;
otherwise (a worker forked before the pre-pass gave names, a shared claim name an earlier file took) the file
is translated again in the run. So a parallel run is byte-identical to a serial one, and lower/ knows
nothing of workers.
"""

from __future__ import annotations

from typing import Any

from dra_migrate.lower.names import FileEntry, FileNames, TemplateNamer

TraceEntry = tuple[str, tuple[Any, ...], Any]  # (call, its arguments, what it returned)


class RecordingNamer(TemplateNamer):
    def __init__(self, facts: Any = None) -> None:
        super().__init__(facts)
        self.trace: list[TraceEntry] = []
        self.given: dict[str, FileEntry] = {}  # what the table says of files a worker got before it existed

    def table_entry(self, path: str) -> FileEntry | None:
        entry = self.given.get(path)
        return entry if entry is not None else super().table_entry(path)

    def file_names(self, path: str, local: FileNames, local_merged: FileNames) -> FileNames:
        names = super().file_names(path, local, local_merged)
        self.trace.append(("file_names", (path, local, local_merged), names))
        return names

    def reserve(self, namespace: str | None, name: str) -> None:
        super().reserve(namespace, name)
        self.trace.append(("reserve", (namespace, name), None))

    def claim_name(self, namespace: str | None, workload_name: str, kind: str, suffix: str) -> str:
        name = super().claim_name(namespace, workload_name, kind, suffix)
        self.trace.append(("claim_name", (namespace, workload_name, kind, suffix), name))
        return name


def replay(namer: TemplateNamer, trace: list[TraceEntry]) -> bool:
    """Make a worker's calls on `namer`; False, and `namer` as it was, when any returns something else."""
    undo: list[tuple[str, Any, Any]] = []  # ("name", namespace, name) | ("claim", key, None): what was added
    for op, args, observed in trace:
        if op == "reserve":
            namespace, name = (args[0] or ""), args[1]
            if name not in namer.taken.get(namespace, ()):
                undo.append(("name", namespace, name))
            namer.reserve(*args)
            got = None
        elif op == "claim_name":
            key = (args[0] or "", *args[1:])
            fresh = key not in namer.claims
            got = namer.claim_name(*args)
            if fresh:  # a new claim takes a name nobody held (claim_name makes it unique)
                undo.extend((("claim", key, None), ("name", key[0], got)))
        else:
            got = getattr(namer, op)(*args)
        if got != observed:
            _rollback(namer, undo)
            return False
    return True


def _rollback(namer: TemplateNamer, undo: list[tuple[str, Any, Any]]) -> None:
    for what, key, name in reversed(undo):
        if what == "name":
            namer.taken[key].discard(name)
        else:
            del namer.claims[key]
