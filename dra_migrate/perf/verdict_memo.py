"""Verdicts of the pre-write selector check (check.prewrite.check_selector), remembered across runs.

A verdict is a pure function of the device class, the expression, our CEL environment and the NVIDIA
device fixture. A pre-commit run on one GPU file asks for a handful of selectors it has almost always
seen before; remembering them spares it importing the CEL interpreter at all (~0.2 s of a ~0.8 s run).
The memo's file name is a hash of everything a verdict can depend on: every file the dra_migrate package
ships (its sources, rule files and device data, a few milliseconds to read), the dra-migrate version and
the versions of the CEL libraries, so an upgrade or a local change never reads a stale verdict. (No
hand-kept list of the files that matter: a module that starts to matter is covered without anyone
remembering to add it.) The workers of a parallel run hand the verdicts they reach back to the run's
process (`take_learned`, `merge`), which saves them with its own. It is JSON (never code) in the private
per-user cache (perf.usercache), and any failure to read or write it just means the selectors are
evaluated, as without it. cel.verdicts is the hook it is installed in (perf.caches.install).
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import sys
from pathlib import Path
from typing import IO, Any

from dra_migrate import __version__
from dra_migrate.cel import verdicts
from dra_migrate.cel.verdicts import MISSING, Verdict
from dra_migrate.perf import usercache
from dra_migrate.ruleset import _paths

_PREFIX = "selector-verdicts-"
_MAX_ENTRIES = 20_000
# The libraries a verdict depends on besides our own files: celpy's evaluator and lark's parser.
_LIBRARIES = ("cel-python", "lark")


def source_files(root: Path) -> list[Path]:
    """Every file under `root` (symbolic links followed: a checkout links the rule files in), in a stable
    order, byte-code caches left out."""
    out: list[Path] = []
    for directory, subdirs, files in os.walk(root, followlinks=True):
        subdirs[:] = sorted(d for d in subdirs if d != "__pycache__")
        out.extend(Path(directory, f) for f in sorted(files) if not f.endswith((".pyc", ".pyo")))
    return out


def memo_key(root: Path = _paths.PACKAGE_DIR) -> str:
    h = hashlib.sha256(__version__.encode() + b"\0")
    for f in source_files(root):
        h.update(f.relative_to(root).as_posix().encode() + b"\0")
        h.update(f.read_bytes() + b"\0")
    for dist in _LIBRARIES:
        h.update(f"{dist}={installed_version(dist)}".encode() + b"\0")
    return h.hexdigest()[:32]


def installed_version(dist: str) -> str:
    """The version of the installed distribution `dist` ("?" if none), read off its `.dist-info` directory
    name as importlib.metadata finds it (first on sys.path): importing and asking importlib.metadata costs
    ~30 ms, a sizeable part of a pre-commit run on one GPU file."""
    prefix = dist.replace("-", "_").replace(".", "_").lower() + "-"
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:  # a zip file, a missing directory
            continue
        for name in names:
            if name.endswith(".dist-info") and name.lower().startswith(prefix):
                return name[len(prefix):-len(".dist-info")]
    from importlib import metadata  # lazy: start-up (~30 ms, for other layouts: .egg-info, zip files)

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "?"


class _Memo:
    """The file holds {"verdicts": {class NUL expression: [code, message] | null}, "derived": {name: [str]}}."""

    def __init__(self) -> None:
        self._path: Path | None = None
        self._known: dict[str, dict[str, Any]] | None = None
        self._new: dict[str, dict[str, Any]] = {"verdicts": {}, "derived": {}}
        self._pid = os.getpid()

    def _read(self) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {"verdicts": {}, "derived": {}}
        try:
            if self._path is not None and usercache.own_private_file(self._path):
                data = json.loads(self._path.read_bytes())
                if isinstance(data, dict):
                    verdicts = data.get("verdicts")
                    if isinstance(verdicts, dict):
                        out["verdicts"] = {k: _verdict(v) for k, v in verdicts.items() if isinstance(k, str)}
                    derived = data.get("derived")
                    if isinstance(derived, dict):
                        out["derived"] = {k: v for k, v in derived.items()
                                          if isinstance(v, list) and all(isinstance(x, str) for x in v)}
        except (OSError, ValueError):
            pass  # no cache, or one we cannot read: compute
        return out

    def _load(self) -> dict[str, dict[str, Any]]:
        if self._known is None:
            try:
                directory = usercache.cache_dir()
                if directory is not None:
                    self._path = directory / f"{_PREFIX}{memo_key()}.json"
            except OSError:
                self._path = None
            self._known = self._read()
        return self._known

    def get(self, section: str, key: str) -> Any:
        return self._load()[section].get(key, MISSING)

    def put(self, section: str, key: str, value: Any) -> None:
        self._load()[section][key] = value
        self._new[section][key] = value

    def take_new(self) -> dict[str, dict[str, Any]]:
        """What was put since the last call (a worker's: it hands them over instead of saving them)."""
        new, self._new = self._new, {"verdicts": {}, "derived": {}}
        return {section: entries for section, entries in new.items() if entries}

    def save(self) -> None:
        # forked workers share the memo object but not the duty to write it
        if not any(self._new.values()) or self._path is None or os.getpid() != self._pid:
            return
        merged = self._read()  # another run may have saved meanwhile: keep its entries too
        for section, entries in self._new.items():
            merged[section].update(entries)
        if len(merged["verdicts"]) > _MAX_ENTRIES:
            merged["verdicts"] = dict(list(merged["verdicts"].items())[-_MAX_ENTRIES:])

        def write(f: IO[bytes]) -> None:
            f.write(json.dumps(merged, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))

        if usercache.save(self._path.parent, self._path, write, f"{_PREFIX}*.json"):
            self._new = {"verdicts": {}, "derived": {}}


def _verdict(value: Any) -> Verdict:
    if isinstance(value, list) and len(value) == 2 and all(isinstance(v, str) for v in value):
        return (value[0], value[1])
    return None


_opened: list[_Memo] = []  # the memo open_memo gave this process (and the workers forked from it)


def open_memo() -> _Memo:
    """The memo of this process (what cel.verdicts.use builds on first use): saved when the process exits."""
    memo = _Memo()
    atexit.register(memo.save)
    _opened[:] = [memo]
    return memo


Learned = dict[str, dict[str, Any]]  # section -> key -> value


def take_learned() -> Learned:
    """What a worker process learned since it last said (its memo is never saved: workers exit without it), for
    the run's process to `merge`; empty when no memo is open."""
    return _opened[0].take_new() if _opened else {}


def merge(learned: Learned) -> None:
    """A worker's verdicts into this process's memo (opened now if nothing here asked it yet), saved with its own
    when the run ends: a parallel run leaves the verdicts of every selector it checked, as a serial one does."""
    store = verdicts.current() if learned else None
    if store is not None:
        for section, entries in learned.items():
            for key, value in entries.items():
                store.put(section, key, value)
