"""Placing pods that use ResourceClaims onto nodes.

Scheduler model (what the DynamicResources plugin does, simplified):
* all claims of a pod are allocated together on one node (one `Allocate` call per node);
* a ResourceClaimTemplate yields a new claim per pod; a named ResourceClaim is allocated once, then every
  consumer is pinned to that node and shares its devices (at most 256 consumers, `reservedFor` limit);
* a fatal allocator error (CEL runtime/compile error, >32 devices, unknown class, ...) aborts the pod's
  scheduling attempt as a whole instead of excluding one node;
* pod `nodeName`, `nodeSelector` and required node affinity filter nodes when Node objects are known.
Not modelled: node taints/tolerations, other resources (CPU, memory, extended resources), scoring;
replicas are placed first-fit in node-name order.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dra_migrate.simulate.allocator import AllocationResult, Allocator, ClaimAllocation, diagnose_requests
from dra_migrate.simulate.claims import ClaimSpec, ClaimSpecError, parse_claim_spec
from dra_migrate.simulate.engine import SelectorEngine
from dra_migrate.simulate.inventory import DeviceId, Inventory
from dra_migrate.simulate.nodes import label_selector_matches, node_selector_matches

MAX_RESERVED_FOR = 256  # ResourceClaimReservedForMaxSize since 1.33


@dataclass(slots=True)
class SharedClaim:
    name: str
    node: str
    allocation: ClaimAllocation
    consumers: int = 0


@dataclass(slots=True)
class ClusterState:
    """What is allocated so far. Device ids are cluster-unique (driver/pool/device)."""

    allocated: set[DeviceId] = field(default_factory=set)
    shared: dict[str, SharedClaim] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class PodClaim:
    pod_claim_name: str  # spec.resourceClaims[].name
    template: str | None = None
    claim: str | None = None


@dataclass(slots=True)
class PodSimulation:
    candidates: list[AllocationResult] = field(default_factory=list)  # nodes where the pod fits, by name
    rejected: dict[str, AllocationResult | str] = field(default_factory=dict)  # node -> why not
    error: str | None = None  # the pod cannot be scheduled at all (fatal error, missing object)
    pod_claims: list[PodClaim] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def fits(self) -> bool:
        return bool(self.candidates)

    @property
    def nodes(self) -> list[str]:
        return [c.node for c in self.candidates]


@dataclass(frozen=True, slots=True)
class ReplicaPlacement:
    index: int
    node: str
    # (pod claim name, request name) -> chosen firstAvailable subrequest (None for `exactly` requests)
    subrequests: Mapping[tuple[str, str], str | None]
    devices: Mapping[str, tuple[DeviceId, ...]]  # pod claim name -> devices


@dataclass(slots=True)
class ReplicaReport:
    requested: int
    placed: list[ReplicaPlacement] = field(default_factory=list)
    failure: PodSimulation | None = None  # why the first unplaced replica did not fit

    @property
    def fit(self) -> int:
        return len(self.placed)


def _pod_spec(pod: Mapping[str, Any]) -> Mapping[str, Any]:
    """Accept a Pod, a pod template ({metadata, spec}) or a bare PodSpec."""
    if "containers" not in pod and isinstance(pod.get("spec"), Mapping):
        return pod["spec"]
    return pod


def pod_claims(spec: Mapping[str, Any]) -> list[PodClaim]:
    out: list[PodClaim] = []
    for rc in spec.get("resourceClaims") or []:
        source = rc.get("source") or {}  # 1.26-1.27 nested shape
        template = rc.get("resourceClaimTemplateName") or source.get("resourceClaimTemplateName")
        claim = rc.get("resourceClaimName") or source.get("resourceClaimName")
        out.append(PodClaim(str(rc.get("name", "")), template, claim))
    return out


def _claim_spec_body(obj: Mapping[str, Any], template: bool) -> Mapping[str, Any]:
    spec = obj.get("spec") or {}
    if template and "devices" not in spec:
        spec = spec.get("spec") or {}
    return spec


def _node_filter(spec: Mapping[str, Any], inventory: Inventory, sim: PodSimulation) -> list[str]:
    nodes = inventory.node_names()
    if spec.get("nodeName"):
        nodes = [n for n in nodes if n == spec["nodeName"]]
    selector = spec.get("nodeSelector") or {}
    affinity = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    )
    if not (selector or affinity):
        return nodes
    if not inventory.nodes:
        sim.notes.append("pod nodeSelector/affinity not checked: no Node objects were given")
        return nodes
    kept = []
    for name in nodes:
        node = inventory.node(name)
        if selector and not label_selector_matches(selector, node):
            sim.rejected[name] = "node does not match the pod's nodeSelector"
        elif affinity and not node_selector_matches(affinity, node):
            sim.rejected[name] = "node does not match the pod's required node affinity"
        else:
            kept.append(name)
    return kept


def simulate_pod(
    pod_spec: Mapping[str, Any],
    claim_templates: Mapping[str, Mapping[str, Any]],
    named_claims: Mapping[str, Mapping[str, Any]],
    inventory: Inventory,
    state: ClusterState,
    *,
    allocator: Allocator | None = None,
    engine: SelectorEngine | None = None,
) -> PodSimulation:
    """Nodes where all the pod's claims can be allocated now. Does not change `state` (see `commit`)."""
    allocator = allocator or Allocator(inventory, engine)
    spec = _pod_spec(pod_spec)
    sim = PodSimulation(pod_claims=pod_claims(spec))
    to_allocate: list[ClaimSpec] = []
    pinned: dict[str, str] = {}  # node -> shared claim pinning it
    for pc in sim.pod_claims:
        if pc.claim:
            shared = state.shared.get(pc.claim)
            if shared is not None:
                if shared.consumers >= MAX_RESERVED_FOR:
                    sim.error = (
                        f"resourceclaim {pc.claim} in use by {shared.consumers} pods "
                        f"(limit {MAX_RESERVED_FOR})"
                    )
                    return sim
                pinned.setdefault(shared.node, pc.claim)
                if len(pinned) > 1:
                    sim.error = "the pod's shared claims are allocated on different nodes"
                    return sim
                continue
            source, template = named_claims.get(pc.claim), False
        elif pc.template:
            source, template = claim_templates.get(pc.template), True
        else:
            sim.error = f"pod claim {pc.pod_claim_name} names neither a template nor a claim"
            return sim
        if source is None:
            kind = "resourceclaimtemplate" if template else "resourceclaim"
            sim.error = f'{kind} "{pc.template or pc.claim}" not found'
            return sim
        try:
            to_allocate.append(parse_claim_spec(_claim_spec_body(source, template), pc.pod_claim_name))
        except ClaimSpecError as exc:
            sim.error = f"pod claim {pc.pod_claim_name}: {exc}"
            return sim

    for node in _node_filter(spec, inventory, sim):
        if pinned and node not in pinned:
            ((pin_node, claim),) = pinned.items()
            sim.rejected[node] = f"resourceclaim {claim} is allocated on node {pin_node}"
            continue
        result = allocator.allocate(to_allocate, node, state.allocated, diagnose=False)
        if result.error and result.error.fatal:
            sim.error = result.error.message
            sim.candidates.clear()
            sim.rejected[node] = result
            return sim
        if result.success:
            sim.candidates.append(result)
        else:
            sim.rejected[node] = result
    if not sim.candidates:
        for node, why in sim.rejected.items():
            if isinstance(why, AllocationResult) and not why.diagnoses:
                why.diagnoses = diagnose_requests(allocator, to_allocate, node, state.allocated)
    return sim


def commit(sim: PodSimulation, result: AllocationResult, state: ClusterState) -> None:
    """Record a placement: devices become allocated, newly allocated named claims become shared."""
    state.allocated |= result.devices
    for pc in sim.pod_claims:
        if not pc.claim:
            continue
        shared = state.shared.get(pc.claim)
        if shared is None:
            allocation = result.claim(pc.pod_claim_name)
            assert allocation is not None
            shared = state.shared[pc.claim] = SharedClaim(pc.claim, result.node, allocation)
        shared.consumers += 1


def place_replicas(
    n: int,
    pod_spec: Mapping[str, Any],
    claim_templates: Mapping[str, Mapping[str, Any]],
    named_claims: Mapping[str, Mapping[str, Any]],
    inventory: Inventory,
    state: ClusterState | None = None,
    *,
    allocator: Allocator | None = None,
    engine: SelectorEngine | None = None,
) -> ReplicaReport:
    """Place up to `n` identical pods first-fit (node-name order); stops at the first that does not fit."""
    state = state if state is not None else ClusterState()
    allocator = allocator or Allocator(inventory, engine)
    report = ReplicaReport(requested=n)
    for index in range(n):
        sim = simulate_pod(pod_spec, claim_templates, named_claims, inventory, state, allocator=allocator)
        if not sim.fits:
            report.failure = sim
            break
        chosen = sim.candidates[0]
        commit(sim, chosen, state)
        report.placed.append(placement(index, sim, chosen, state))
    return report


def placement(
    index: int, sim: PodSimulation, chosen: AllocationResult, state: ClusterState
) -> ReplicaPlacement:
    """Where replica `index` went: its node, each claim's devices and the firstAvailable choice per request."""
    subrequests: dict[tuple[str, str], str | None] = {}
    devices: dict[str, tuple[DeviceId, ...]] = {}
    for pc in sim.pod_claims:
        allocation = chosen.claim(pc.pod_claim_name)
        if allocation is None and pc.claim:
            allocation = state.shared[pc.claim].allocation
        if allocation is None:
            continue
        devices[pc.pod_claim_name] = allocation.devices
        for r in allocation.requests:
            subrequests[(pc.pod_claim_name, r.request)] = r.subrequest
    return ReplicaPlacement(index, chosen.node, subrequests, devices)
