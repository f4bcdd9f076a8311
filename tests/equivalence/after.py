"""AFTER: the migrated pod through the simulator (dra_migrate.simulate, the project's model of the upstream
allocator) with the real CEL environment. A fatal allocator error (a CEL runtime error aborts scheduling) is
reported, never read as "does not fit".

Selector verdicts are memoised by device content: the synthetic cluster repeats the same device on many
nodes, and celpy evaluation dominates the run time otherwise.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dra_migrate.simulate.allocator import AllocationResult, Allocator
from dra_migrate.simulate.claims import EXACT_COUNT, ClaimSpec, ClaimSpecError, parse_claim_spec
from dra_migrate.simulate.cluster import ClusterState, simulate_pod
from dra_migrate.simulate.engine import CelEngine
from dra_migrate.simulate.inventory import Device, DeviceClass, Inventory
from tests.equivalence.cluster import Cluster
from tests.equivalence.manifests import Obj, mapping


class _Memo:
    def __init__(self, engine: MemoEngine, expression: str, compiled: Any) -> None:
        self._engine, self._expr, self._compiled = engine, expression, compiled

    def evaluate(self, view: tuple[str, Any]) -> bool:
        key = (self._expr, view[0])
        results = self._engine.results
        if key not in results:
            try:
                results[key] = self._compiled.evaluate(view[1])
            except self._engine.runtime_errors as exc:
                results[key] = exc
        value = results[key]
        if isinstance(value, BaseException):
            raise value
        return bool(value)


class MemoEngine:
    """dra_migrate's CEL engine, with compiled selectors and verdicts cached by device content."""

    def __init__(self) -> None:
        self._inner = CelEngine()
        self.compile_errors = self._inner.compile_errors
        self.runtime_errors = self._inner.runtime_errors
        self._compiled: dict[str, Any] = {}
        self._keys: dict[int, tuple[Device, str]] = {}
        self.results: dict[tuple[str, str], Any] = {}

    def compile(self, expression: str) -> _Memo:
        if expression not in self._compiled:
            try:
                self._compiled[expression] = self._inner.compile(expression)
            except self.compile_errors as exc:
                self._compiled[expression] = exc
        compiled = self._compiled[expression]
        if isinstance(compiled, BaseException):
            raise compiled
        return _Memo(self, expression, compiled)

    def to_device(self, device: Device) -> tuple[str, Any]:
        entry = self._keys.get(id(device))
        if entry is None:
            body = {k: v for k, v in device.raw.items() if k != "name"}  # CEL does not see the name
            key = json.dumps([device.driver, body], sort_keys=True, default=str)
            entry = self._keys[id(device)] = (device, key)
        return entry[1], self._inner.to_device(device)


_ENGINE: MemoEngine | None = None
_ALLOCATORS: dict[tuple[int, tuple[str, ...]], tuple[Inventory, Allocator]] = {}


def engine() -> MemoEngine:
    global _ENGINE
    if _ENGINE is None:
        _ENGINE = MemoEngine()
    return _ENGINE


def allocator(cluster: Cluster, classes: Mapping[str, Obj]) -> Allocator:
    """One allocator per (cluster, DeviceClasses the migration emitted): its selector cache is kept."""
    key = (id(cluster.inventory), tuple(sorted(json.dumps(c, sort_keys=True) for c in classes.values())))
    hit = _ALLOCATORS.get(key)
    if hit is None or hit[0] is not cluster.inventory:
        inv = cluster.inventory
        if classes:
            extra = {dc.name: dc for dc in (DeviceClass.from_object(o) for o in classes.values())}
            inv = Inventory(slices=inv.slices, classes={**inv.classes, **extra}, nodes=inv.nodes)
        hit = _ALLOCATORS[key] = (cluster.inventory, Allocator(inv, engine()))
    return hit[1]


# --- the migrated pod ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ClaimSource:
    pod_claim: str  # spec.resourceClaims[].name
    kind: str  # ResourceClaimTemplate | ResourceClaim
    name: str
    spec: ClaimSpec


def claim_body(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = obj.get("spec") or {}
    return (spec.get("spec") or {}) if obj.get("kind") == "ResourceClaimTemplate" else spec


def new_claims(
    before: Mapping[str, Any], after: Mapping[str, Any], objects: Mapping[tuple[str, str], Obj]
) -> tuple[dict[str, ClaimSource], list[str]]:
    """The pod claims the migration added (name -> source), and problems finding their objects."""
    old = {str(rc.get("name")) for rc in before.get("resourceClaims") or [] if isinstance(rc, dict)}
    out: dict[str, ClaimSource] = {}
    problems: list[str] = []
    for rc in after.get("resourceClaims") or []:
        name = str(rc.get("name"))
        if name in old:
            continue
        if rc.get("resourceClaimTemplateName"):
            kind, obj_name = "ResourceClaimTemplate", str(rc["resourceClaimTemplateName"])
        elif rc.get("resourceClaimName"):
            kind, obj_name = "ResourceClaim", str(rc["resourceClaimName"])
        else:
            problems.append(f"pod claim {name} names neither a template nor a claim")
            continue
        obj = objects.get((kind, obj_name))
        if obj is None:
            problems.append(f"{kind} {obj_name} is not in the output")
            continue
        try:
            out[name] = ClaimSource(name, kind, obj_name, parse_claim_spec(claim_body(obj), name))
        except ClaimSpecError as exc:
            problems.append(f"{kind} {obj_name}: {exc}")
    return out, problems


def without_old_claims(before: Mapping[str, Any], after: Obj) -> Obj:
    """The migrated spec with the claims the pod had before removed (the BEFORE side ignores them too)."""
    old = {str(rc.get("name")) for rc in before.get("resourceClaims") or [] if isinstance(rc, dict)}
    spec = dict(after)
    spec["resourceClaims"] = [rc for rc in after.get("resourceClaims") or [] if str(rc.get("name")) not in old]
    return spec


def refs(container: Mapping[str, Any], claims: Mapping[str, ClaimSource]) -> list[tuple[str, str | None]]:
    """(pod claim, request or None = every request) the container uses, among the migration's claims."""
    res = mapping(container.get("resources"))
    out = []
    for c in res.get("claims") or []:
        if isinstance(c, dict) and str(c.get("name")) in claims:
            out.append((str(c["name"]), str(c["request"]) if c.get("request") else None))
    return out


def _request_counts(spec: ClaimSpec, request: str | None) -> list[set[int] | None]:
    """Per request referenced: the counts its alternatives allocate (None: allocationMode All)."""
    out: list[set[int] | None] = []
    for r in spec.requests:
        if request is not None and r.name != request:
            continue
        variants = list(r.first_available) if r.first_available else [r.exactly] if r.exactly else []
        if any(v.allocation_mode != EXACT_COUNT for v in variants):
            out.append(None)
        else:
            out.append({v.count for v in variants})
    return out


def static_counts(
    used: Sequence[tuple[str, str | None]], claims: Mapping[str, ClaimSource]
) -> set[int] | None:
    """Devices the referenced requests hold together, for every combination of firstAvailable alternatives;
    None where a count depends on the node (allocationMode All)."""
    per: list[set[int]] = []
    seen: set[tuple[str, str | None]] = set()
    for claim, request in used:
        if (claim, request) in seen:
            continue
        seen.add((claim, request))
        for counts in _request_counts(claims[claim].spec, request):
            if counts is None:
                return None
            per.append(counts)
    return {sum(combo) for combo in itertools.product(*per)} if per else {0}


def devices_used(result: AllocationResult, used: Sequence[tuple[str, str | None]]) -> set[str]:
    """Names of the devices (on the result's node) the referenced requests got."""
    out: set[str] = set()
    for claim, request in used:
        allocation = result.claim(claim)
        if allocation is None:
            continue
        for r in allocation.requests:
            if request is None or r.request == request:
                out.update(d.device for d in r.devices)
    return out


def simulate(
    spec: Obj, claims: Mapping[str, ClaimSource], objects: Mapping[tuple[str, str], Obj], cluster: Cluster,
    classes: Mapping[str, Obj],
) -> tuple[dict[str, AllocationResult], str | None]:
    """Nodes where every claim of the pod can be allocated (node -> allocation), or the fatal error."""
    templates = {n: o for (k, n), o in objects.items() if k == "ResourceClaimTemplate"}
    named = {n: o for (k, n), o in objects.items() if k == "ResourceClaim"}
    sim = simulate_pod(spec, templates, named, cluster.inventory, ClusterState(),
                       allocator=allocator(cluster, classes))
    if sim.error is not None:
        return {}, sim.error
    return {c.node: c for c in sim.candidates}, None
