"""Replay of a Deployment's rolling update: old pods keep their devices while new ones are scheduled.

Follows the deployment controller's arithmetic (kubernetes pkg/controller/deployment/util
ResolveFenceposts, NewRSNewReplicas, rolling.go reconcileOldReplicaSets): maxSurge rounds up, maxUnavailable
rounds down, both default to 25%, and when both resolve to 0 maxUnavailable becomes 1. New pods are
assumed ready as soon as they are scheduled; a new pod that does not fit stays Pending and is retried after
old pods are removed. Old pods are removed newest first (the controller's ranking is not modelled).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dra_migrate.frontend.replicas import surge_and_unavailable
from dra_migrate.simulate.allocator import Allocator
from dra_migrate.simulate.cluster import ClusterState, ReplicaPlacement, commit, placement, simulate_pod
from dra_migrate.simulate.inventory import Inventory

__all__ = ["surge_and_unavailable"]  # kept importable from here


@dataclass(slots=True)
class RolloutResult:
    surge: int
    unavailable: int
    new: list[ReplicaPlacement] = field(default_factory=list)
    pending: int = 0  # new pods that never fit: the rollout stalls
    old_left: int = 0
    steps: int = 0

    @property
    def complete(self) -> bool:
        return self.pending == 0 and self.old_left == 0


def replay(
    replicas: int,
    old: list[ReplicaPlacement],
    state: ClusterState,
    pod_spec: Mapping[str, Any],
    templates: Mapping[str, Mapping[str, Any]],
    claims: Mapping[str, Mapping[str, Any]],
    inventory: Inventory,
    allocator: Allocator,
    surge: int,
    unavailable: int,
) -> RolloutResult:
    """`old` and `state`: the placed old replicas and what they hold (both are consumed)."""
    result = RolloutResult(surge, unavailable)
    old = list(old)
    pending = 0
    for _ in range(4 * replicas + 8):
        result.steps += 1
        progressed = False
        total = len(old) + len(result.new) + pending
        create = min(replicas + surge - total, replicas - len(result.new) - pending)
        if create > 0:
            pending += create
            progressed = True
        while pending:
            sim = simulate_pod(pod_spec, templates, claims, inventory, state, allocator=allocator)
            if not sim.fits:
                break
            chosen = sim.candidates[0]
            commit(sim, chosen, state)
            result.new.append(placement(len(result.new), sim, chosen, state))
            pending -= 1
            progressed = True
        removable = min(len(old), len(old) + len(result.new) - (replicas - unavailable))
        for _ in range(max(removable, 0)):
            _release(old.pop(), state)
            progressed = True
        if not old and not pending:
            break
        if not progressed:
            break
    result.pending, result.old_left = pending, len(old)
    return result


def _release(pod: ReplicaPlacement, state: ClusterState) -> None:
    shared_devices = {d for s in state.shared.values() for d in s.allocation.devices}
    for devices in pod.devices.values():
        state.allocated -= set(devices) - shared_devices
    for shared in state.shared.values():
        if set(shared.allocation.devices) & {d for ds in pod.devices.values() for d in ds}:
            shared.consumers -= 1
