"""The run's writes: what the run asks of a writer, and the direct writer that does each write at once.

perf.background.BackgroundWrites is the other writer (one thread, in-place rewrites synced in batches);
run.executor.select picks one. Every write is atomic and durable with either.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from dra_migrate.diagnostics.model import Diagnostic, Location, make
from dra_migrate.emit.claims_file import ClaimsFileError, claims_files, verify_claims_file
from dra_migrate.emit.writer import write_atomic

if TYPE_CHECKING:
    from dra_migrate.run.model import RunConfig, RunResult

Job = Callable[[], list[Diagnostic]]  # a write; it returns the diagnostics of its failures


def write_problem(where: str, exc: OSError) -> Diagnostic:
    if isinstance(exc, PermissionError):
        return make("DRA111", "permission denied; the file is unchanged", Location(where))
    return make("DRA106", f"cannot write: {exc.strerror or exc}", Location(where))


def write_in_place(path: Path, display: str, data: bytes) -> list[Diagnostic]:
    """Write `data` over `path` at once, atomically and durably; the diagnostics of a refused write."""
    try:
        write_atomic(path, data)
    except OSError as exc:
        return [write_problem(display, exc)]
    return []


def in_output_dir(paths: Sequence[str], output_dir: Path, target: Path) -> Path | None:
    """Where a file the run writes goes under --output-dir: its path relative to the given path (a directory,
    or a file's directory) that holds it, as the walked files are copied; None when none holds it."""
    real = Path(os.path.realpath(target))
    for given in paths:
        root = Path(os.path.realpath(given))
        base = root if root.is_dir() else root.parent
        if real == base or base in real.parents:
            return output_dir / real.relative_to(base)
    return None


def output_path(paths: Sequence[str], output_dir: Path, target: Path) -> Path:
    """Where a new file of the run goes with --output-dir (in_output_dir, else at its top), its directory made."""
    dest = in_output_dir(paths, output_dir, target) or output_dir / target.name
    dest.parent.mkdir(parents=True, exist_ok=True)
    return dest


def settle_new_objects(cfg: RunConfig, result: RunResult, dest: Path | None,
                       objects: list[tuple[str, dict[str, Any]]], what: str) -> None:
    """New objects the run emits (claim templates, DeviceClasses: `what`), each with the source it comes from,
    into the files emit.claims_file plans for them (`dest`: --claims-out or bridge mode's file). A plan that
    cannot be made (an unreadable existing file) writes nothing, and says so."""
    try:
        planned = claims_files(dest, objects)
    except ClaimsFileError as exc:
        result.diagnostics.append(make(exc.code, f"{exc.message}; no {what} was written", Location(exc.path)))
        return
    new = [o for _src, o in objects]
    for target, data in planned.items():
        _settle_file(cfg, result, target, data, new)


def _settle_file(cfg: RunConfig, result: RunResult, target: Path, data: bytes, objects: list[dict[str, Any]]
                 ) -> None:
    """One planned file: checked first (the old content kept, only `objects` added: emit.claims_file.
    verify_claims_file), then recorded as a new file and shown as a diff or written, as the run's mode says. A
    refused write counts as what it is, an error, not a new file."""
    display = str(target)
    existing = target.read_bytes() if target.exists() else b""
    if data == existing:
        return
    problem = verify_claims_file(target, existing, data, objects)
    if problem:
        result.diagnostics.append(make("DRA901", f"self-check failed: {problem}; the file is untouched",
                                       Location(display)))
        return
    result.new_files[display] = data
    if cfg.mode == "diff":
        result.diffs.append(unified_diff(display, existing, data))
    elif cfg.mode == "write":
        # with --output-dir: beside its source's copy, as the source sits in the given path
        dest = target if cfg.output_dir is None else output_path(cfg.paths, cfg.output_dir, target)
        problems = write_in_place(dest, display, data)
        result.diagnostics.extend(problems)
        if problems:
            del result.new_files[display]


def unified_diff(name: str, before: bytes, after: bytes) -> str:
    a = before.decode("utf-8", "replace").splitlines(keepends=True)
    b = after.decode("utf-8", "replace").splitlines(keepends=True)
    lines = difflib.unified_diff(a, b, "a/" + name.lstrip("/"), "b/" + name.lstrip("/"))
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


class Writes(Protocol):
    def submit(self, where: str, job: Job) -> None:
        """Run `job` after every write asked for before it."""

    def replace(self, where: str, path: Path, data: bytes) -> None:
        """Rewrite `path` in place with `data`, atomically and durably."""

    def drain(self) -> None:
        """Wait until every write asked for is done."""

    def close(self) -> list[Diagnostic]:
        """Finish every write; the diagnostics of their failures, in the order they were asked for."""


class DirectWrites:
    """Each write done when it is asked for (emit.writer.write_atomic for rewrites)."""

    def __init__(self) -> None:
        self._diagnostics: list[Diagnostic] = []

    def submit(self, where: str, job: Job) -> None:
        try:
            self._diagnostics.extend(job())
        except Exception as exc:  # noqa: BLE001 - reported like any failed write, never lost
            self._diagnostics.append(make("DRA106", f"cannot write: {exc}", Location(where)))

    def replace(self, where: str, path: Path, data: bytes) -> None:
        try:
            write_atomic(path, data)
        except OSError as exc:
            self._diagnostics.append(write_problem(where, exc))

    def drain(self) -> None:
        pass

    def close(self) -> list[Diagnostic]:
        out, self._diagnostics = self._diagnostics, []
        return out
