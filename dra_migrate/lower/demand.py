"""A pod's device demand as the kubelet counts it (the scheduler's effective request, per resource).

`Σ app + Σ sidecars`, or the peak of the init phase if higher: walking initContainers in order, a sidecar
(restartPolicy: Always) uses the sum of the sidecars up to and including it, a plain init container its own
count plus the sidecars declared before it (k8s.io/component-helpers resource.PodRequests; see
shared/reference/scheduling-semantics.md §1). The device plugin handed a pod exactly this many devices.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from dra_migrate.ir import Container, ContainerRole


def effective_demand(containers: Iterable[Container], count: Callable[[Container], int]) -> int:
    """The pod's effective demand of one resource; `count` gives each container's own count of it."""
    running = 0  # app containers and sidecars: all of them run together once the pod is up
    sidecars_so_far = 0
    init_peak = 0
    for c in sorted(containers, key=lambda c: (c.role is ContainerRole.APP, c.index)):
        n = count(c)
        if c.role is ContainerRole.APP:
            running += n
        elif c.role is ContainerRole.SIDECAR:
            sidecars_so_far += n
            running += n
            init_peak = max(init_peak, sidecars_so_far)
        else:
            init_peak = max(init_peak, n + sidecars_so_far)
    return max(running, init_peak)


def running_beside(init: Container, other: Container) -> bool:
    """Whether `other` runs while the plain init container `init` runs: only the sidecars declared before it
    (app containers start after the last init container; later sidecars start after it finished)."""
    return other.role is ContainerRole.SIDECAR and other.index < init.index


def count_of(resource: str, at_most: int | None = None) -> Callable[[Container], int]:
    """A container's count of `resource` (capped at `at_most` when given)."""

    def count(c: Container) -> int:
        n = sum(d.count for d in c.demands if d.resource == resource)
        return n if at_most is None else min(n, at_most)

    return count
