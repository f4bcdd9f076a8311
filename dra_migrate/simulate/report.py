"""The `simulate` report: per workload, where its claims can be allocated, how many replicas fit at once,
which firstAvailable alternative each replica gets, near misses, and optionally a rolling update replay.

Each workload is simulated on its own, on an empty cluster (the inventory as given, nothing allocated):
the question is "can this workload schedule here", not how workloads compete. Placement is first-fit in
node-name order (see dra_migrate.simulate.cluster). The report is plain data (`--format json`, schema in
schemas/simulate-report.schema.json); `render_text` prints the same content for people.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dra_migrate.simulate import nearmiss
from dra_migrate.simulate.allocator import AllocationResult, Allocator
from dra_migrate.simulate.claims import ClaimSpec, ClaimSpecError, parse_claim_spec
from dra_migrate.simulate.cluster import (
    ClusterState,
    PodSimulation,
    ReplicaPlacement,
    ReplicaReport,
    commit,
    place_replicas,
    pod_claims,
    simulate_pod,
)
from dra_migrate.simulate.engine import SelectorEngine
from dra_migrate.simulate.inventory import Inventory
from dra_migrate.simulate.manifests import Manifests, PodWorkload
from dra_migrate.simulate.rollout import placement, replay, surge_and_unavailable

SCHEMA_VERSION = 1
FITS, PARTIAL, UNSATISFIABLE = "fits", "partial", "unsatisfiable"


@dataclass(frozen=True, slots=True)
class SimulateOptions:
    replicas: int | None = None  # overrides every workload's replica count
    rollout: bool = False


def _claim_body(obj: Mapping[str, Any], template: bool) -> Mapping[str, Any]:
    spec = obj.get("spec") or {}
    if template and "devices" not in spec:
        spec = spec.get("spec") or {}
    return spec


def _pod_claim_specs(
    spec: Mapping[str, Any],
    templates: Mapping[str, Mapping[str, Any]],
    claims: Mapping[str, Mapping[str, Any]],
) -> list[ClaimSpec]:
    out: list[ClaimSpec] = []
    for pc in pod_claims(spec):
        source = templates.get(pc.template or "") if pc.template else claims.get(pc.claim or "")
        if source is None:
            continue
        try:
            out.append(parse_claim_spec(_claim_body(source, bool(pc.template)), pc.pod_claim_name))
        except ClaimSpecError:
            continue
    return out


def _first_alternatives(specs: Sequence[ClaimSpec]) -> dict[tuple[str, str], str]:
    return {
        (c.name, r.name): r.first_available[0].name for c in specs for r in c.requests if r.first_available
    }


def _placement_json(p: ReplicaPlacement, first: Mapping[tuple[str, str], str]) -> dict[str, Any]:
    claims: dict[str, Any] = {}
    fallback = False
    for name, devices in sorted(p.devices.items()):
        claims[name] = {"devices": [str(d) for d in devices], "alternatives": {}}
    for (claim, request), sub in sorted(p.subrequests.items(), key=lambda kv: kv[0]):
        if sub is None:
            continue
        claims.setdefault(claim, {"devices": [], "alternatives": {}})["alternatives"][request] = sub
        fallback = fallback or first.get((claim, request)) != sub
    return {"replica": p.index, "node": p.node, "claims": claims, "fallback": fallback}


def _reason(why: AllocationResult | str) -> str:
    if isinstance(why, str):
        return why
    if why.error:
        return why.error.message
    if why.excluded_pools:
        return "cannot allocate all claims (excluded pools: " + ", ".join(why.excluded_pools) + ")"
    return "cannot allocate all claims"


def _claim_nodes(
    wl: PodWorkload,
    spec: Mapping[str, Any],
    templates: Mapping[str, Mapping[str, Any]],
    claims: Mapping[str, Mapping[str, Any]],
    inventory: Inventory,
    allocator: Allocator,
) -> list[dict[str, Any]]:
    """Per pod claim: the nodes where it alone can be allocated on the empty cluster."""
    out: list[dict[str, Any]] = []
    for pc in pod_claims(spec):
        entry: dict[str, Any] = {"name": pc.pod_claim_name, "nodes": []}
        if pc.template:
            entry["template"] = pc.template
            source = templates.get(pc.template)
        else:
            entry["resourceClaim"] = pc.claim
            source = claims.get(pc.claim or "")
        if source is None:
            kind = "resourceclaimtemplate" if pc.template else "resourceclaim"
            entry["error"] = f'{kind} "{pc.template or pc.claim}" not found'
            out.append(entry)
            continue
        try:
            cs = parse_claim_spec(_claim_body(source, bool(pc.template)), pc.pod_claim_name)
        except ClaimSpecError as exc:
            entry["error"] = str(exc)
            out.append(entry)
            continue
        for node in inventory.node_names():
            result = allocator.allocate([cs], node, diagnose=False)
            if result.error and result.error.fatal:
                entry["error"] = result.error.message
                entry["nodes"] = []
                break
            if result.success:
                entry["nodes"].append(node)
        out.append(entry)
    return out


def _daemon_report(
    spec: Mapping[str, Any],
    templates: Mapping[str, Mapping[str, Any]],
    claims: Mapping[str, Mapping[str, Any]],
    inventory: Inventory,
    allocator: Allocator,
) -> ReplicaReport:
    """One pod per node: each node is tried on its own (a DaemonSet pod is bound to its node)."""
    nodes = inventory.node_names()
    report = ReplicaReport(requested=len(nodes))
    state = ClusterState()
    for node in nodes:
        sim = simulate_pod(
            dict(spec, nodeName=node), templates, claims, inventory, state, allocator=allocator
        )
        if not sim.fits:
            report.failure = report.failure or sim
            continue
        commit(sim, sim.candidates[0], state)
        report.placed.append(placement(len(report.placed), sim, sim.candidates[0], state))
    return report


def _failure_json(
    sim: PodSimulation,
    specs: Sequence[ClaimSpec],
    inventory: Inventory,
    allocator: Allocator,
    state: ClusterState,
) -> dict[str, Any]:
    nodes = {n: _reason(w) for n, w in sorted(sim.rejected.items())}
    eligible = [
        n for n, w in sorted(sim.rejected.items()) if not isinstance(w, str)
    ] or inventory.node_names()
    reports = nearmiss.explain(allocator, specs, eligible, state.allocated)
    lines = nearmiss.sentences(reports)
    if not lines and specs and not sim.error:
        lines = ["every request fits on some node on its own, but not all of the pod's requests together"]
    return {"error": sim.error, "nodes": nodes, "nearMisses": lines}


def simulate_workload(
    wl: PodWorkload,
    manifests: Manifests,
    inventory: Inventory,
    allocator: Allocator,
    options: SimulateOptions,
) -> dict[str, Any]:
    spec = wl.pod_spec
    pcs = pod_claims(spec)
    templates = manifests.resolve(manifests.templates, wl.namespace, [p.template for p in pcs if p.template])
    claims = manifests.resolve(manifests.claims, wl.namespace, [p.claim for p in pcs if p.claim])
    specs = _pod_claim_specs(spec, templates, claims)
    first = _first_alternatives(specs)
    replicas, source = wl.replicas, wl.replicas_source
    if options.replicas is not None and not wl.daemon:
        replicas, source = options.replicas, "--replicas"
    if wl.daemon:
        report = _daemon_report(spec, templates, claims, inventory, allocator)
        replicas = report.requested
    else:
        # At least one pod is placed so a workload scaled to zero is still checked.
        report = place_replicas(max(replicas, 1), spec, templates, claims, inventory, allocator=allocator)
        if replicas == 0:
            report.placed = []
    state = ClusterState()
    placed = [_placement_json(p, first) for p in report.placed]
    fit = len(report.placed)
    if replicas == 0:
        status = FITS if report.failure is None else UNSATISFIABLE
    else:
        status = FITS if fit >= replicas else PARTIAL if fit else UNSATISFIABLE
    out: dict[str, Any] = {
        "object": wl.ref,
        "kind": wl.kind,
        "file": wl.file,
        "line": wl.line,
        "podSpec": ".".join(map(str, wl.spec_path)),
        "replicas": replicas,
        "replicasFrom": source,
        "claims": _claim_nodes(wl, spec, templates, claims, inventory, allocator),
        "fit": fit,
        "status": status,
        "placements": placed,
        "failure": None,
    }
    if report.failure is not None and (status != FITS or wl.daemon):
        # For the near misses, replay the placed replicas so "already allocated" is explained.
        for p in report.placed:
            for devices in p.devices.values():
                state.allocated |= set(devices)
        out["failure"] = _failure_json(report.failure, specs, inventory, allocator, state)
    if options.rollout:
        out["rollout"] = _rollout_json(
            wl, replicas, report, spec, templates, claims, inventory, allocator, first
        )
    return out


def _rollout_json(
    wl: PodWorkload,
    replicas: int,
    report: ReplicaReport,
    spec: Mapping[str, Any],
    templates: Mapping[str, Mapping[str, Any]],
    claims: Mapping[str, Mapping[str, Any]],
    inventory: Inventory,
    allocator: Allocator,
    first: Mapping[tuple[str, str], str],
) -> dict[str, Any]:
    if wl.kind != "Deployment":
        return {
            "replayed": False,
            "note": f"rolling updates are replayed for Deployments only, not {wl.kind}",
        }
    strategy = (wl.obj.get("spec") or {}).get("strategy")
    fence = surge_and_unavailable(strategy if isinstance(strategy, Mapping) else None, replicas)
    if fence is None:
        return {
            "replayed": False,
            "note": "strategy Recreate: old pods are deleted before new ones are created",
        }
    surge, unavailable = fence
    state = ClusterState()
    for p in report.placed:
        for devices in p.devices.values():
            state.allocated |= set(devices)
    result = replay(
        replicas,
        list(report.placed),
        state,
        spec,
        templates,
        claims,
        inventory,
        allocator,
        surge,
        unavailable,
    )
    new = [_placement_json(p, first) for p in result.new]
    steady = sum(1 for p in report.placed if _placement_json(p, first)["fallback"])
    fallback = [p["replica"] for p in new if p["fallback"]]
    return {
        "replayed": True,
        "maxSurge": surge,
        "maxUnavailable": unavailable,
        "newPods": new,
        "fallback": fallback,
        "downgraded": max(len(fallback) - steady, 0),
        "pending": result.pending,
        "oldLeft": result.old_left,
        "complete": result.complete,
    }


def simulate(
    manifests: Manifests,
    inventory: Inventory,
    options: SimulateOptions = SimulateOptions(),
    *,
    engine: SelectorEngine | None = None,
    inventory_sources: Sequence[str] = (),
) -> dict[str, Any]:
    allocator = Allocator(inventory, engine)
    # What the allocator can use: latest generation, complete and valid pools only.
    usable = [
        p
        for n in inventory.node_names()
        for p in allocator.pools(n)
        if not (p.incomplete or p.invalid_reason)
    ]
    devices = {d.id for p in usable for d in p.devices}
    pools = {p.key for p in usable}
    workloads = [
        simulate_workload(wl, manifests, inventory, allocator, options)
        for wl in manifests.workloads
        if pod_claims(wl.pod_spec)
    ]
    report: dict[str, Any] = {
        "schemaVersion": SCHEMA_VERSION,
        "inventory": {
            "sources": list(inventory_sources),
            "nodes": inventory.node_names(),
            "pools": len(pools),
            "devices": len(devices),
            "deviceClasses": sorted(inventory.classes),
            "warnings": [
                {"kind": w.kind, "message": w.message, "object": w.object} for w in inventory.warnings
            ],
        },
        "workloads": workloads,
        "problems": [d.to_json() for d in manifests.diagnostics],
    }
    report["summary"] = {
        "workloads": len(workloads),
        "fit": sum(1 for w in workloads if w["status"] == FITS),
        "partial": sum(1 for w in workloads if w["status"] == PARTIAL),
        "unsatisfiable": sum(1 for w in workloads if w["status"] == UNSATISFIABLE),
        "rolloutFallbacks": sum(len((w.get("rollout") or {}).get("fallback", [])) for w in workloads),
        "exitCode": exit_code(report),
    }
    return report


def exit_code(report: Mapping[str, Any]) -> int:
    """2: some input could not be read; 1: some workload cannot be scheduled at all; 0 otherwise."""
    if any(p.get("severity") == "error" for p in report.get("problems", [])):
        return 2
    if any(w["status"] == UNSATISFIABLE for w in report["workloads"]):
        return 1
    return 0


def _replica_line(p: Mapping[str, Any]) -> str:
    parts = []
    for name, c in p["claims"].items():
        alts = ", ".join(f"{r} -> {s}" for r, s in c["alternatives"].items())
        devs = ", ".join(d.split("/", 1)[1] for d in c["devices"])  # the driver is in the class
        parts.append(f"{name}: {devs}" + (f" ({alts})" if alts else ""))
    mark = "  [fallback]" if p["fallback"] else ""
    return f"#{p['replica']} on {p['node']}: " + "; ".join(parts) + mark


def render_text(report: Mapping[str, Any]) -> str:
    lines: list[str] = []
    inv = report["inventory"]
    lines.append(
        f"inventory: {len(inv['nodes'])} nodes, {inv['devices']} usable devices in {inv['pools']} pools"
        + (f" ({', '.join(inv['sources'])})" if inv["sources"] else "")
    )
    for w in inv["warnings"]:
        lines.append(f"warning: {w['message']}")
    for p in report["problems"]:
        lines.append(f"{p['file']}:{p['line']}: {p['severity']} {p['code']}: {p['message']}")
    for w in report["workloads"]:
        lines.append("")
        pod = f", pod spec {w['podSpec']}" if w["podSpec"] not in ("spec.template.spec", "spec") else ""
        count = (
            "one pod per node"
            if w["replicasFrom"] == "daemonset"
            else (f"{w['replicas']} replica{'s' if w['replicas'] != 1 else ''} ({w['replicasFrom']})")
        )
        lines.append(f"{w['object']} ({w['file']}:{w['line']}{pod}): {count}")
        for c in w["claims"]:
            source = f"template {c['template']}" if "template" in c else f"resourceclaim {c['resourceClaim']}"
            if c.get("error"):
                where = f"error: {c['error']}"
            elif c["nodes"]:
                where = "can be allocated on " + ", ".join(c["nodes"])
            else:
                where = "cannot be allocated on any node"
            lines.append(f"  claim {c['name']} ({source}): {where}")
        verdict = {FITS: "OK", PARTIAL: "PARTIAL", UNSATISFIABLE: "UNSCHEDULABLE"}[w["status"]]
        lines.append(f"  {verdict}: {w['fit']} of {w['replicas']} replicas fit at once")
        for p in w["placements"]:
            lines.append("    " + _replica_line(p))
        failure = w.get("failure")
        if failure:
            lines.append(
                "  next replica does not fit:" if w["status"] != UNSATISFIABLE else "  no node fits:"
            )
            if failure["error"]:
                lines.append(f"    error: {failure['error']}")
            for node, why in failure["nodes"].items():
                lines.append(f"    {node}: {why}")
            for s in failure["nearMisses"]:
                lines.append(f"    near miss: {s}")
        ro = w.get("rollout")
        if ro is not None:
            if not ro["replayed"]:
                lines.append(f"  rollout: {ro['note']}")
            else:
                lines.append(
                    f"  rollout (maxSurge {ro['maxSurge']}, maxUnavailable {ro['maxUnavailable']}): "
                    + (
                        "completes"
                        if ro["complete"]
                        else f"stalls with {ro['pending']} new pods pending and {ro['oldLeft']} old pods left"
                    )
                )
                for p in ro["newPods"]:
                    lines.append("    new " + _replica_line(p))
                if ro["fallback"]:
                    lines.append(
                        f"  warning: {len(ro['fallback'])} new replica(s) land on a fallback alternative "
                        "during the rollout (old pods still hold the preferred devices); "
                        "set maxSurge: 0 or use strategy Recreate"
                    )
    s = report["summary"]
    lines.append("")
    lines.append(
        f"{s['workloads']} workload{'s' if s['workloads'] != 1 else ''}: {s['fit']} fit, "
        f"{s['partial']} partially, {s['unsatisfiable']} cannot be scheduled"
        + (f"; {s['rolloutFallbacks']} rollout fallbacks" if s["rolloutFallbacks"] else "")
    )
    return "\n".join(lines) + "\n"
