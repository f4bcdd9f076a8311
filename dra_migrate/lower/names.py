"""Deterministic, valid, collision-free names for claim templates, pod claims and requests."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

_INVALID = re.compile(r"[^a-z0-9-]+")


def dns_label(text: str, max_len: int = 63) -> str:
    s = _INVALID.sub("-", text.lower()).strip("-")
    s = re.sub("-{2,}", "-", s) or "x"
    if len(s) > max_len:
        digest = hashlib.sha256(text.encode()).hexdigest()[:6]
        s = s[: max_len - 7].rstrip("-") + "-" + digest
    if not s[0].isalpha():
        s = ("r-" + s)[:max_len].rstrip("-")
    return s


def dns_subdomain(text: str, max_len: int = 253) -> str:
    parts = [dns_label(p, 63) for p in text.lower().split(".") if p]
    s = ".".join(parts) or "x"
    if len(s) > max_len:
        digest = hashlib.sha256(text.encode()).hexdigest()[:6]
        s = s[: max_len - 7].rstrip("-.") + "-" + digest
    return s


def unique(base: str, taken: set[str], max_len: int = 63) -> str:
    if base not in taken:
        return base
    n = 2
    while True:
        suffix = f"-{n}"
        cand = base[: max_len - len(suffix)].rstrip("-") + suffix
        if cand not in taken:
            return cand
        n += 1


@dataclass(slots=True)
class SharedGroup:
    """One shared ResourceClaim of a run: its name and the pods that reference it so far."""

    name: str
    pods: int = 0
    unknown_pods: bool = False
    emitted: bool = False


# (name, this workload emits the claim, pods so far, some workload had an unknown pod count)
GroupView = tuple[str, bool, int, bool]
TraceEntry = tuple[str, tuple[Any, ...], Any]


class TemplateNamer:
    """Run-wide names: ResourceClaimTemplates unique per namespace across a whole run (files in sorted
    order), and the shared ResourceClaim groups of the sharing pass.

    Everything a file's translation learns from earlier files goes through reserve / assign / join_group.
    With `trace` set, each call is recorded with what it returned: a worker process translates its files
    against its own namer and the parent replays the calls on the run's namer in file order (`replay`); when
    a call would return something else there, the file is translated again serially. So a parallel run is
    byte-identical to a serial one without the workers sharing state."""

    def __init__(self) -> None:
        self.taken: dict[str, set[str]] = {}
        self.groups: dict[tuple[str, str], SharedGroup] = {}
        self.trace: list[TraceEntry] | None = None
        self._undo: list[tuple[Any, ...]] | None = None

    def _take(self, namespace: str, name: str) -> None:
        taken = self.taken.setdefault(namespace, set())
        if name not in taken:
            taken.add(name)
            if self._undo is not None:
                self._undo.append(("name", namespace, name))

    def reserve(self, namespace: str | None, name: str) -> None:
        self._take(namespace or "", name)
        if self.trace is not None:
            self.trace.append(("reserve", (namespace, name), None))

    def assign(self, namespace: str | None, workload_name: str, kind: str, suffix: str) -> str:
        taken = self.taken.setdefault(namespace or "", set())
        base = dns_subdomain(f"{workload_name}-{suffix}")
        if base in taken:
            base = dns_subdomain(f"{workload_name}-{kind.lower()}-{suffix}")
        name = unique(base, taken, 253)
        self._take(namespace or "", name)
        if self.trace is not None:
            self.trace.append(("assign", (namespace, workload_name, kind, suffix), name))
        return name

    def join_group(self, namespace: str | None, base: str, pods: int | None) -> GroupView:
        """Join the shared claim group `base` of a namespace with `pods` pods (None: unknown)."""
        key = (namespace or "", base)
        group = self.groups.get(key)
        if group is None:
            name = unique(base, self.taken.setdefault(key[0], set()), 253)
            self._take(key[0], name)
            group = self.groups[key] = SharedGroup(name)
            if self._undo is not None:
                self._undo.append(("new-group", key))
        elif self._undo is not None:
            self._undo.append(("group", key, group.pods, group.unknown_pods, group.emitted))
        first = not group.emitted
        group.emitted = True
        if pods is None:
            group.unknown_pods = True
        else:
            group.pods += pods
        view = (group.name, first, group.pods, group.unknown_pods)
        if self.trace is not None:
            self.trace.append(("join_group", (namespace, base, pods), view))
        return view

    def replay(self, trace: list[TraceEntry]) -> bool:
        """Apply a worker's calls here; False (and nothing applied) when any would return something else."""
        self._undo = []
        try:
            for op, args, observed in trace:
                if getattr(self, op)(*args) != observed:
                    self._rollback(self._undo)
                    return False
            return True
        finally:
            self._undo = None

    def _rollback(self, undo: list[tuple[Any, ...]]) -> None:
        for entry in reversed(undo):
            if entry[0] == "name":
                self.taken[entry[1]].discard(entry[2])
            elif entry[0] == "new-group":
                del self.groups[entry[1]]
            else:
                group = self.groups[entry[1]]
                group.pods, group.unknown_pods, group.emitted = entry[2], entry[3], entry[4]
