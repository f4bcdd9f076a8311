"""What a lowering pass says about itself (`PASS = Pass(...)` in its module of dra_migrate.lower.passes), and how
the passes are collected from those declarations and put in order.

Collection follows pyupgrade's plugins: every module of the package is imported and its `PASS` taken, so a new
pass is one new module and nothing else. Modules whose name starts with `_` are helpers the passes share.
"""

from __future__ import annotations

import heapq
import importlib
import pkgutil
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dra_migrate.lower.context import RunContext, TemplateLowering

PassRun = Callable[["TemplateLowering", "RunContext"], None]


class PassRegistryError(Exception):
    """A pass module's declaration is missing, not a Pass, or contradicts another's (a name twice, an unknown
    or cyclic `after`). A programming error: raised when dra_migrate.lower.passes is imported."""


@dataclass(frozen=True, slots=True)
class Pass:
    """One lowering pass, as its module declares it."""

    name: str  # shown in tests and traces; what other passes name in `after`
    run: PassRun  # on each pod template that requests device plugin resources, in pass order
    after: tuple[str, ...] = ()  # the passes whose work this one needs done first
    # Side effects a kind rule may name (`sideEffects`) that this pass implements; the pass checks the
    # workload's own list (Workload.side_effects) itself. The object-level ones are dra_migrate.frontend.effects.
    side_effects: tuple[str, ...] = ()
    codes: tuple[str, ...] = ()  # the diagnostic codes the pass reports (tests check them against the registry)
    options: type | None = None  # the typed options it reads (a group of dra_migrate.config.Options), if any
    # run on pod templates without device plugin resources too (schemes that ask for GPUs by annotation)
    non_gpu: PassRun | None = None


def collect(package: str, path: Iterable[str]) -> tuple[Pass, ...]:
    """The passes declared by the modules of `package` (found on `path`), in pass order."""
    declared: list[tuple[str, Pass]] = []
    for info in pkgutil.iter_modules(list(path)):
        if info.name.startswith("_"):
            continue
        declared.append((info.name, declaration(importlib.import_module(f"{package}.{info.name}"))))
    return order(declared)


def declaration(module: ModuleType) -> Pass:
    found = getattr(module, "PASS", None)
    if found is None:
        raise PassRegistryError(f"{module.__name__} declares no `PASS = Pass(...)`; a helper module of the "
                                "passes is named with a leading underscore")
    if not isinstance(found, Pass):
        raise PassRegistryError(f"{module.__name__}.PASS is a {type(found).__name__}, not a Pass")
    return found


def order(declared: Sequence[tuple[str, Pass]]) -> tuple[Pass, ...]:
    """Topological order of `after`; among the passes ready at the same time, the smallest name first, so the
    order depends on the declarations only (never on the file system's listing order)."""
    by_name: dict[str, Pass] = {}
    module_of: dict[str, str] = {}
    for module, p in declared:
        if p.name in by_name:
            raise PassRegistryError(f"pass {p.name!r} is declared twice: in {module_of[p.name]} and in {module}")
        by_name[p.name] = p
        module_of[p.name] = module
    waiting: dict[str, set[str]] = {}
    followers: dict[str, list[str]] = {n: [] for n in by_name}
    for p in by_name.values():
        for before in dict.fromkeys(p.after):  # (a name given twice counts once)
            if before not in by_name:
                raise PassRegistryError(f"pass {p.name!r} ({module_of[p.name]}) runs after {before!r}, "
                                        "which no module declares")
            followers[before].append(p.name)
        waiting[p.name] = set(p.after)
    ready = [n for n, w in waiting.items() if not w]
    heapq.heapify(ready)
    out: list[Pass] = []
    while ready:
        name = heapq.heappop(ready)
        out.append(by_name[name])
        for f in followers[name]:
            waiting[f].discard(name)
            if not waiting[f]:
                heapq.heappush(ready, f)
    if len(out) < len(by_name):
        stuck = sorted(n for n in by_name if waiting[n])
        raise PassRegistryError(f"the `after` declarations of passes {', '.join(stuck)} form a cycle")
    return tuple(out)
