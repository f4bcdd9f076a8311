"""Plain init containers reuse devices, as the kubelet's device manager let them.

Under the device plugin a plain init container's devices went back to the pod's reuse pool when it finished,
and the containers started after it (app containers, and sidecars declared after it) took them from there: a
pod held its effective demand (dra_migrate.lower.demand), not the sum of its containers. In DRA every request
of a claim stays allocated for the pod's life and distinct requests get distinct devices, but a container may
reference several requests. So, per device plugin resource:

- app containers and sidecars keep the one request per container the earlier passes made;
- a plain init container references requests of containers that are not running while it runs (app
  containers, sidecars declared after it) whose counts sum to its own count, or, when no set sums to it
  exactly, the smallest sum above it (it then sees more devices: DRA209);
- where those are too few, ONE extra request, sized for the largest shortfall, makes up the difference; init
  containers run one at a time, so they all may use it.

The claim then totals exactly the effective demand and every container sees at least its own count.

A pass that translates a resource makes the requests of app containers and sidecars (recording the resource in
`tl.request_resources`) and leaves plain init containers in `tl.init_demands`; this pass places them. It runs
before selection, which gives every request of a device class the same selectors and alternatives (counts
unchanged), so the reuse holds whichever alternative each request gets.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from dra_migrate.ir import Container
from dra_migrate.lower.backends import DeviceChoice, Request
from dra_migrate.lower.context import InitDemand, RunContext, TemplateLowering
from dra_migrate.lower.demand import effective_demand, running_beside
from dra_migrate.lower.names import dns_label, unique
from dra_migrate.lower.pass_spec import Pass

MAX_EXACT_SUM = 4096  # the subset search is O(requests × sum); pods ask for tens of devices at most


def run(tl: TemplateLowering, ctx: RunContext) -> None:
    if tl.skip or not tl.init_demands:
        return
    by_resource: dict[str, list[InitDemand]] = {}
    for d in tl.init_demands:
        by_resource.setdefault(d.resource, []).append(d)
    for resource, demands in by_resource.items():
        _place(tl, resource, demands)
    tl.init_demands = []


def _users(tl: TemplateLowering) -> dict[str, list[Container]]:
    by_path = {c.path: c for c in tl.template.containers}
    out: dict[str, list[Container]] = {}
    for path, names in tl.container_refs.items():
        for n in names:
            out.setdefault(n, []).append(by_path[path])
    return out


def request_count(r: Request) -> int | None:
    """Devices the request gets, or None when that depends on the alternative chosen."""
    counts = {c.count for _, c in r.alternatives} if r.alternatives else {r.choice.count} if r.choice else set()
    return counts.pop() if len(counts) == 1 else None


def _place(tl: TemplateLowering, resource: str, demands: list[InitDemand]) -> None:
    users = _users(tl)
    own = [
        (r, n)
        for r in tl.requests
        if tl.request_resources.get(r.name) == resource and (n := request_count(r)) is not None
    ]

    def free_while(d: InitDemand) -> list[tuple[Request, int]]:
        """Requests of containers that are not running while d's container runs."""
        return [(r, n) for r, n in own if not any(running_beside(d.container, u) for u in users.get(r.name, []))]

    pools = {id(d): free_while(d) for d in demands}
    shortfalls = [(d.count - sum(n for _, n in pools[id(d)]), d) for d in demands]
    short = [(gap, d) for gap, d in shortfalls if gap > 0]
    extra: Request | None = None
    gap = max((g for g, _ in short), default=0)
    if short:
        first = short[0][1]
        name = unique(dns_label(first.name), {r.name for r in tl.requests})
        extra = Request(
            name,
            _sized(first.kind, gap),
            [(alt, _sized(choice, gap)) for alt, choice in first.alternatives],
        )
        tl.requests.append(extra)
        tl.request_resources[name] = resource
    for d in demands:
        pool = pools[id(d)] + ([(extra, request_count(extra) or 0)] if extra is not None else [])
        chosen = pick([n for _, n in pool], d.count)
        refs = [pool[i][0] for i in chosen]
        tl.container_refs.setdefault(d.container.path, []).extend(r.name for r in refs)
        seen = sum(pool[i][1] for i in chosen)
        names = ", ".join(repr(r.name) for r in refs)
        what = f"{d.count} {resource}"
        if seen > d.count:
            tl.diag(
                "DRA209",
                f"init container {d.container.name!r} asked for {what} and now sees the {seen} of request(s) "
                f"{names}: no set of the requests it may reuse sums to exactly {d.count}",
                0,
                d.container,
            )
        elif reused := [r for r in refs if r is not extra]:  # (the extra request alone is DRA205's to report)
            plus = f" plus the extra request {extra.name!r}" if extra is not None and extra in refs else ""
            tl.diag(
                "DRA204",
                f"init container {d.container.name!r} ({what}) reuses request(s) "
                f"{', '.join(repr(r.name) for r in reused)}{plus}",
                0,
                d.container,
            )
    if extra is not None:
        total = sum(n for _, n in own) + gap
        needed = effective_demand(tl.template.containers, _counts(tl, resource, demands))
        if total != needed:  # the construction guarantees equality; never emit a claim that breaks it
            raise RuntimeError(f"init container placement gives {total} {resource} where the pod needs {needed}")
        who = ", ".join(repr(d.container.name) for _, d in short)
        tl.diag(
            "DRA205",
            f"init container(s) {who} need more {resource} than the containers not running beside them hold: "
            f"request {extra.name!r} adds the {gap} missing (init containers run one at a time and share it); "
            f"the claim holds {total}, the pod's effective demand",
            0,
            short[0][1].container,
        )


def _sized(choice: DeviceChoice, count: int) -> DeviceChoice:
    return replace(choice, count=count, selectors=list(choice.selectors))


def _counts(tl: TemplateLowering, resource: str, demands: list[InitDemand]) -> Callable[[Container], int]:
    """Each container's count of `resource` as translated: init containers their demand, the others the
    devices of the requests they reference."""
    init = {d.container.path: d.count for d in demands}
    sizes = {r.name: request_count(r) or 0 for r in tl.requests if tl.request_resources.get(r.name) == resource}

    def count(c: Container) -> int:
        if c.path in init:
            return init[c.path]
        return sum(sizes.get(n, 0) for n in tl.container_refs.get(c.path, []))

    return count


def pick(counts: list[int], need: int) -> list[int]:
    """Indexes into `counts` whose sum is exactly `need`, with the fewest items (the earliest on a tie); when no
    subset sums to `need`, the one with the smallest sum above it. sum(counts) must be at least `need`."""
    total = sum(counts)
    if total > MAX_EXACT_SUM:
        return _greedy(counts, need)
    best: dict[int, tuple[int, ...]] = {0: ()}
    for i, n in enumerate(counts):
        for s, chosen in list(best.items()):
            t = s + n
            cand = (*chosen, i)
            old = best.get(t)
            if old is None or (len(cand), cand) < (len(old), old):
                best[t] = cand
    target = need if need in best else min(s for s in best if s >= need)
    return list(best[target])


def _greedy(counts: list[int], need: int) -> list[int]:
    chosen: list[int] = []
    left = need
    for i in sorted(range(len(counts)), key=lambda i: -counts[i]):
        if left <= 0:
            break
        chosen.append(i)
        left -= counts[i]
    return sorted(chosen)


PASS = Pass(name="init-containers", run=run, after=("gpu-requests",), codes=("DRA204", "DRA205", "DRA209"))
