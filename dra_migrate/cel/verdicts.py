"""Verdicts of the pre-write selector check (prewrite.check_selector), remembered across runs.

A verdict is a pure function of the device class, the expression, our CEL environment and the NVIDIA
device fixture. A pre-commit run on one GPU file asks for a handful of selectors it has almost always
seen before; remembering them spares it importing the CEL interpreter at all (~0.2 s of a ~0.8 s run).
The memo's file name is a hash of everything a verdict depends on — the source of dra_migrate/cel, the
fixture and device class data, prewrite.py, the cel-python version — so an upgrade or a local change never
reads a stale verdict. It is JSON (never code) in the private per-user cache (dra_migrate.usercache), and
any failure to read or write it just means the selectors are evaluated, as without it.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from dra_migrate import usercache

_PREFIX = "selector-verdicts-"
_MAX_ENTRIES = 20_000
Verdict = tuple[str, str] | None
MISSING = object()

_PACKAGE = Path(__file__).resolve().parents[1]
# Everything a verdict depends on, besides the (class, expression) asked about.
_INPUTS = ("cel", "data/devices", "prewrite.py", "simulate/inventory.py", "_rules/simulate")


def _key() -> str:
    h = hashlib.sha256()
    for entry in _INPUTS:
        base = _PACKAGE / entry
        files = sorted(p for p in base.rglob("*") if p.is_file() and p.suffix != ".pyc") if base.is_dir() else [base]
        for f in files:
            h.update(str(f.relative_to(_PACKAGE)).encode() + b"\0")
            h.update(f.read_bytes() + b"\0")
    h.update(installed_version("cel-python").encode())
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
    from importlib import metadata  # other layouts (.egg-info, zip files)

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
                    self._path = directory / f"{_PREFIX}{_key()}.json"
            except OSError:
                self._path = None
            self._known = self._read()
        return self._known

    def get(self, section: str, key: str) -> Any:
        return self._load()[section].get(key, MISSING)

    def put(self, section: str, key: str, value: Any) -> None:
        self._load()[section][key] = value
        self._new[section][key] = value

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


_MEMO = _Memo()
atexit.register(_MEMO.save)


def lookup(device_class: str, expression: str) -> Any:
    """The remembered verdict, or MISSING."""
    return _MEMO.get("verdicts", f"{device_class}\0{expression}")


def record(device_class: str, expression: str, verdict: Verdict) -> None:
    _MEMO.put("verdicts", f"{device_class}\0{expression}", verdict)


def derived(name: str, compute: Callable[[], list[str]]) -> list[str]:
    """A list of strings computed from the same inputs as the verdicts (e.g. the attribute names the
    fixture publishes), remembered the same way."""
    found = _MEMO.get("derived", name)
    if found is MISSING:
        found = list(compute())
        _MEMO.put("derived", name, found)
    return list(found)
