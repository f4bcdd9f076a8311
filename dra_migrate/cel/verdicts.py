"""Where the pre-write selector check (check.prewrite.check_selector) may find verdicts it gave before.

A verdict is a pure function of the device class, the expression, our CEL environment and the NVIDIA
device fixture, so a store may remember it across runs and spare a run the CEL interpreter's import. cel/
only defines the hook: by default nothing is remembered (every selector is evaluated); perf/ installs its
memo (dra_migrate.perf.verdict_memo) with `use`, from the entry point and the run driver.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

Verdict = tuple[str, str] | None
MISSING: Any = object()  # what `lookup` returns for a verdict the store does not hold


class VerdictStore(Protocol):
    def get(self, section: str, key: str) -> Any:
        """The stored value, or MISSING. Sections: "verdicts" and "derived"."""

    def put(self, section: str, key: str, value: Any) -> None: ...


_make_store: Callable[[], VerdictStore] | None = None
_store: VerdictStore | None = None


def use(make_store: Callable[[], VerdictStore] | None) -> None:
    """Take verdicts from the store `make_store` builds on first use (None: remember nothing)."""
    global _make_store, _store
    if make_store is not _make_store:
        _make_store, _store = make_store, None


def current() -> VerdictStore | None:
    """The store `use` installed, built on first use (None: nothing is remembered)."""
    global _store
    if _store is None and _make_store is not None:
        _store = _make_store()
    return _store


def lookup(device_class: str, expression: str) -> Any:
    """The remembered verdict, or MISSING."""
    store = current()
    return MISSING if store is None else store.get("verdicts", f"{device_class}\0{expression}")


def record(device_class: str, expression: str, verdict: Verdict) -> None:
    store = current()
    if store is not None:
        store.put("verdicts", f"{device_class}\0{expression}", verdict)


def derived(name: str, compute: Callable[[], list[str]]) -> list[str]:
    """A list of strings computed from the same inputs as the verdicts (e.g. the attribute names the
    fixture publishes), remembered the same way."""
    store = current()
    found = MISSING if store is None else store.get("derived", name)
    if found is MISSING:
        found = list(compute())
        if store is not None:
            store.put("derived", name, found)
    return list(found)
