"""The run's one read of a file: what the file is to the run, decided from its bytes alone.

Every file of the repository comes through here once, so this is the one place where per-file cost is
counted in microseconds: the bytes are read with the fewest system calls and searched once (RE2) for
everything that makes the run keep a file.
"""

from __future__ import annotations

import os
from typing import Any

import re2

from dra_migrate.bridge import PREFILTER as CLASS_PREFILTER
from dra_migrate.diagnostics import Location, make
from dra_migrate.pipeline import PREFILTER as MIGRATION_PREFILTER
from dra_migrate.pipeline import FileResult, might_need_migration
from dra_migrate.sharing.discover import PREFILTER as SHARING_PREFILTER
from dra_migrate.source.reader import is_helm_template_path

# What makes a file hold a repo-wide setting (the pre-pass reads only such files).
REPO_SETTINGS = (CLASS_PREFILTER, *SHARING_PREFILTER)
# What makes the read keep a file: it may need migration, or hold a repo-wide setting for the pre-pass.
_KEEP = tuple(dict.fromkeys([*(p.encode() for p in MIGRATION_PREFILTER), CLASS_PREFILTER, *SHARING_PREFILTER]))
# ...searched for without the patterns that contain another one
KEEP = tuple(p for p in _KEEP if not any(q != p and q in p for q in _KEEP))
# Every file of the repository is searched for all of them: one linear-time pass of RE2 over the bytes costs a
# third of fifteen `in` tests (RE2 is here for CEL's matches() anyway).
_KEEP_RE = re2.compile(b"|".join(re2.escape(p) for p in KEEP))

# ("error", diagnostic): unreadable; ("too-big", result or None): over --max-file-size (a failed result when
# it may need migration); ("kept", bytes): may need migration or holds a repo-wide setting; ("plain", bytes):
# neither.
ReadOutcome = tuple[str, Any]


def read_file(path: str, display: str, max_bytes: int) -> ReadOutcome:
    try:
        raw, size = _read(path, max_bytes)
    except OSError as exc:
        return "error", make("DRA106", f"cannot read: {exc.strerror}", Location(display))
    if size > max_bytes:
        if might_need_migration(raw):
            return "too-big", FileResult(display, b"", None, [make(
                "DRA105", f"{size} bytes is over the {max_bytes}-byte limit (--max-file-size)",
                Location(display))], failed=True)
        return "too-big", None
    if _KEEP_RE.search(raw) is not None:
        return "kept", raw
    return "plain", raw


def _read(path: str, max_bytes: int) -> tuple[bytes, int]:
    """The file's bytes (its first 64 KiB when over max_bytes) and its size, with as few system calls and
    objects as the kernel allows: every file of the repository is read here."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        size = os.fstat(fd).st_size
        if size > max_bytes:
            return os.read(fd, 1 << 16), size
        raw = os.read(fd, size + 1)
        if len(raw) != size:  # a short read, or a file that changed size since fstat: read to the end
            rest = []
            while chunk := os.read(fd, 1 << 16):
                rest.append(chunk)
            raw += b"".join(rest)
        return raw, size
    finally:
        os.close(fd)


def holds_repo_setting(raw: bytes) -> bool:
    return any(p in raw for p in REPO_SETTINGS)


def likely_reported(path: str) -> bool:
    """Chart templates, and files named like kustomize patches: the layout probably reports them instead of
    letting them be translated, so they are not worth translating before the layout is known."""
    return "patch" in os.path.basename(path).lower() or is_helm_template_path(path)


def worth_starting_early(path: str, raw: bytes) -> bool:
    """A kept file to translate before the read is over (speculatively: see run._run)."""
    return might_need_migration(raw) and not holds_repo_setting(raw) and not likely_reported(path)
