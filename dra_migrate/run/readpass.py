"""The run's one read of a file: what the file is to the run, decided from its bytes alone.

The read itself and the search of the bytes are dra_migrate.source.filescan's (a scout process runs them too);
this module turns what they found into what the run acts on.
"""

from __future__ import annotations

import os
from typing import Any

from dra_migrate.diagnostics.model import Location, make
from dra_migrate.pipeline import FileResult, might_need_migration
from dra_migrate.ruleset.prefilters import CLASS, SHARING
from dra_migrate.source.filescan import KEEP, Scan, scan
from dra_migrate.source.reader import is_helm_template_path

__all__ = ["KEEP", "ReadOutcome", "holds_repo_setting", "likely_reported", "outcome", "read_file",
           "worth_starting_early"]

# What makes a file hold a repo-wide setting (the pre-pass reads only such files).
REPO_SETTINGS = (CLASS, *SHARING)

# ("error", diagnostic): unreadable; ("too-big", result or None): over --max-file-size (a failed result when
# it may need migration); ("kept", bytes): may need migration or holds a repo-wide setting; ("plain", bytes):
# neither.
ReadOutcome = tuple[str, Any]


def read_file(path: str, display: str, max_bytes: int) -> ReadOutcome:
    return outcome(display, max_bytes, scan(path, max_bytes))


def outcome(display: str, max_bytes: int, scanned: Scan) -> ReadOutcome:
    """What the run does with what a scan of the file found."""
    kind, value = scanned
    if kind == "error":
        return "error", make("DRA106", f"cannot read: {value}", Location(display))
    if kind == "too-big":
        assert isinstance(value, tuple)
        size, head = value
        if might_need_migration(head):
            return "too-big", FileResult(display, b"", None, [make(
                "DRA105", f"{size} bytes is over the {max_bytes}-byte limit (--max-file-size)",
                Location(display))], failed=True)
        return "too-big", None
    return kind, value


def holds_repo_setting(raw: bytes) -> bool:
    return any(p in raw for p in REPO_SETTINGS)


def likely_reported(path: str) -> bool:
    """Chart templates, and files named like kustomize patches: the layout probably reports them instead of
    letting them be translated, so they are not worth translating before the layout is known."""
    return "patch" in os.path.basename(path).lower() or is_helm_template_path(path)


def worth_starting_early(path: str, raw: bytes) -> bool:
    """A kept file to translate before the read is over (speculatively: see run._run)."""
    return might_need_migration(raw) and not holds_repo_setting(raw) and not likely_reported(path)
