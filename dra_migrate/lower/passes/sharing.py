"""Time-sliced and MPS-shared GPUs: one named ResourceClaim per sharing group, or one GPU per pod.

A resource is shared when its name says so (`nvidia.com/gpu.shared`, `nvidia.com/mig-<p>.shared`) or when
the device plugin config that governs the pod (see SharingInventory.resolve) time-slices or MPS-shares it.

`shared-claim` (the default): every pod of every workload in the group references one ResourceClaim
(`<config>-shared-gpu`, one per namespace), which carries a GpuConfig reproducing the old strategy. That
keeps the GPU count of the shared setup, at the price of pinning all those pods to one node.
`exclusive`: each pod gets its own device through the usual per-pod template; the warning says how many
more GPUs that takes. Chosen per workload with the annotation dra-migrate.io/sharing or for the run with
--sharing; a DaemonSet is always exclusive (its pods run on different nodes, a claim lives on one).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from dra_migrate.ir import Container
from dra_migrate.lower.backends import DeviceChoice, Request, request_object
from dra_migrate.lower.context import RunContext, TemplateLowering
from dra_migrate.lower.names import dns_label, dns_subdomain, unique
from dra_migrate.lower.passes.sharing_common import (
    EXCLUSIVE,
    SHARED_CLAIM,
    SHARING_ANNOTATION,
    annotation,
    inventory,
    single_profile,
)
from dra_migrate.resources import classify
from dra_migrate.sharing.mig import MIG_CLASS, memory_mib, profile_from_resource, selector
from dra_migrate.sharing.model import MPS, TIME_SLICING, SharingConfig
from dra_migrate.sharing.opaque import gpu_sharing_parameters, opaque_config

GPU_CLASS = "gpu.nvidia.com"
DAEMONSET = "a DaemonSet runs one pod per node and a claim is allocated on one node, so it cannot share one"
GATES = {TIME_SLICING: "TimeSlicingSettings", MPS: "MPSSupport"}


@dataclass(slots=True)
class Shared:
    resource: str
    config: SharingConfig | None  # None: shared by name, config not found
    strategy: str  # time-slicing | mps (assumed time-slicing when unknown)
    replicas: int | None
    profile: str | None  # MIG profile, None for a full GPU


def run(tl: TemplateLowering, ctx: RunContext) -> None:
    shared = _shared_resources(tl, ctx)
    if not shared:
        return
    strategy = _strategy(tl, ctx)
    others = [
        d.resource
        for c in tl.template.gpu_containers
        for d in c.demands
        if d.resource not in shared and d.count and d.resource not in tl.handled
    ]
    if strategy == SHARED_CLAIM and tl.workload.kind == "DaemonSet":
        strategy = EXCLUSIVE
        tl.decisions.append(DAEMONSET)
    if strategy == SHARED_CLAIM and (others or len(shared) > 1):
        tl.diag(
            "DRA517",
            f"shared {', '.join(sorted(shared))} beside {', '.join(sorted(set(others) or set(list(shared)[1:])))}: "
            "the pod template is left as is; annotate it dra-migrate.io/sharing: exclusive to give it whole devices",
        )
        tl.skip = True
        return
    if strategy == EXCLUSIVE:
        _exclusive(tl, ctx, shared)
    else:
        _shared_claim(tl, ctx, next(iter(shared.values())))


def _shared_resources(tl: TemplateLowering, ctx: RunContext) -> dict[str, Shared]:
    inv = inventory(ctx)
    pt = tl.template
    out: dict[str, Shared] = {}
    for c in pt.gpu_containers:
        for d in c.demands:
            if d.resource in out or d.resource in tl.handled or not d.count:
                continue
            rc = classify(d.resource)
            if rc is None or rc.scheme not in ("gpu", "shared", "mig"):
                continue
            profile = None
            named_shared = rc.scheme == "shared"
            if rc.scheme == "mig":
                parsed = profile_from_resource(d.resource)
                if parsed is None:
                    continue
                profile, named_shared = parsed
            elif rc.scheme == "gpu":
                profile = single_profile(tl)
            res = inv.resolve(d.resource, pt.node_selector)
            if named_shared:
                config = res.config if res.replicas else (res.candidates[0] if len(res.candidates) == 1 else None)
                if config is None:
                    tl.diag(
                        "DRA505",
                        f"{d.resource}: no device plugin config found that shares it; assuming "
                        "time-slicing with unknown replicas (pass the config with --sharing-config FILE)",
                        d.line,
                    )
                    out[d.resource] = Shared(d.resource, None, TIME_SLICING, None, profile)
                else:
                    out[d.resource] = Shared(
                        d.resource, config, config.strategy, config.replicas_for(d.resource), profile
                    )
            elif res.replicas and res.config is not None:
                out[d.resource] = Shared(d.resource, res.config, res.config.strategy, res.replicas, profile)
            elif res.config is None and res.candidates:
                where = ", ".join(
                    f"{c.label} ({c.strategy}, replicas={c.replicas_for(d.resource)})" for c in res.candidates
                )
                tl.diag(
                    "DRA506",
                    f"{d.resource} is shared by {where} but no config is known to apply to this "
                    "workload; translated as whole devices",
                    d.line,
                )
    return out


def _strategy(tl: TemplateLowering, ctx: RunContext) -> str:
    value = annotation(tl, SHARING_ANNOTATION)
    if value is not None:
        if value in (EXCLUSIVE, SHARED_CLAIM):
            tl.decisions.append(f"sharing strategy {value} (annotation {SHARING_ANNOTATION})")
            return value
        tl.diag("DRA515", f"{SHARING_ANNOTATION}: {value!r} is not exclusive or shared-claim; ignored")
    return str(ctx.options.extra.get("sharing_strategy") or SHARED_CLAIM)


def _pods(tl: TemplateLowering) -> int | None:
    return tl.workload.replicas


def _describe(s: Shared) -> str:
    how = {TIME_SLICING: "time-sliced", MPS: "MPS-shared"}[s.strategy]
    rep = f"replicas={s.replicas}" if s.replicas else "unknown replicas"
    src = s.config.label if s.config else "no config found"
    return f"{s.resource} ({how}, {rep}, {src})"


def _exclusive(tl: TemplateLowering, ctx: RunContext, shared: dict[str, Shared]) -> None:
    taken = {r.name for r in tl.requests}
    per_pod = 0
    for s in shared.values():
        renamed = s.resource.endswith(".shared")
        for c in tl.template.gpu_containers:
            count = sum(d.count for d in c.demands if d.resource == s.resource)
            if not count:
                continue
            if renamed:
                # a replica of a renamed resource is at most one device; the rest of the pipeline knows
                # only unshared names, so the request is built here
                if count > 1:
                    _more_than_one(tl, c, s, count)
                name = unique(dns_label(c.name), taken)
                taken.add(name)
                tl.requests.append(Request(name, _choice(s, 1)))
                tl.container_refs.setdefault(c.path, []).append(name)
                per_pod += 1
            else:
                per_pod += count  # gpu-requests / mig translate the unshared name as whole devices
        if renamed:
            tl.handled.add(s.resource)
    pods = _pods(tl)
    replicas = min((s.replicas for s in shared.values() if s.replicas), default=None)
    what = ", ".join(_describe(s) for s in shared.values())
    if DAEMONSET in tl.decisions:
        what += f" ({DAEMONSET})"
    if pods is not None and replicas:
        before = math.ceil(pods * per_pod / replicas)
        tl.diag(
            "DRA504",
            f"{what}: exclusive, each pod gets its own device; {pods} pod(s) × {per_pod} now need "
            f"{pods * per_pod} GPU(s) where the shared setup needed {before} at replicas={replicas}",
        )
    else:
        tl.diag(
            "DRA504",
            f"{what}: exclusive, each pod gets its own device ({per_pod} per pod) where the shared "
            f"setup put up to {replicas or 'N'} pods on one",
        )


def _choice(s: Shared, count: int) -> DeviceChoice:
    if s.profile:
        return DeviceChoice(MIG_CLASS, count, [selector(s.profile)])
    return DeviceChoice(GPU_CLASS, count)


def _more_than_one(tl: TemplateLowering, c: Container, s: Shared, count: int) -> None:
    tl.diag(
        "DRA514",
        f"container {c.name!r} asked for {count} replicas of {s.resource}; it now uses the one device of its request",
        0,
        c,
    )


def _group_name(s: Shared, ctx: RunContext) -> str:
    inv = inventory(ctx)
    tail = f"shared-mig-{s.profile}" if s.profile else "shared-gpu"
    if s.config is None:
        return dns_subdomain(dns_label(tail))
    base = s.config.config_map or "device-plugin-config"
    siblings = {c.key for c in inv.configs if c.config_map == s.config.config_map and c.source == s.config.source}
    if len(siblings) > 1 and s.config.key:
        base += "-" + s.config.key
    return dns_subdomain(dns_label(f"{base}-{tail}"))


def _shared_claim(tl: TemplateLowering, ctx: RunContext, s: Shared) -> None:
    wl, pt = tl.workload, tl.template
    name, first, group_pods, unknown_pods = ctx.namer.join_group(wl.namespace, _group_name(s, ctx), _pods(tl))
    req_name = dns_label(f"mig-{s.profile}") if s.profile else "gpu"
    req = Request(req_name, _choice(s, 1))
    containers = [c for c in pt.gpu_containers if any(d.resource == s.resource and d.count for d in c.demands)]
    for c in containers:
        count = sum(d.count for d in c.demands if d.resource == s.resource)
        if count > 1:
            _more_than_one(tl, c, s, count)
        tl.container_refs.setdefault(c.path, []).append(req_name)
    tl.requests.append(req)
    tl.handled.add(s.resource)
    config: list[dict[str, Any]] = []
    if s.profile:
        tl.diag(
            "DRA509",
            f"{s.resource}: time-slicing a MIG slice needs no config under DRA (TimeSlicing on MIG is "
            "a no-op); pods sharing the claim time-share the slice",
        )
    elif s.config is not None:
        params = gpu_sharing_parameters(s.strategy, s.replicas, memory_mib(pt.node_selector))
        config = [opaque_config([req_name], params)]
        gate = GATES[s.strategy]
        tl.diag(
            "DRA503",
            f"ResourceClaim {name!r} uses GpuConfig strategy "
            f"{params['sharing']['strategy']}: enable the DRA driver's alpha feature gate {gate} (Helm values: "
            f"featureGates: {{{gate}: true}})",
        )
    claim = resource_claim(name, wl.namespace, [req], ctx.options.api_version, config)
    tl.shared_claim = claim
    if first:
        tl.extra_documents.append(claim)
    limit = 32 if ctx.options.target_version == "1.32" else 256
    total = f"{group_pods}{'+' if unknown_pods else ''}"
    msg = (
        f"{_describe(s)} → every pod references ResourceClaim {name!r} (one device, allocated once): all of them "
        f"run on the same node; {total} pod(s) in this run reference it now (at most {limit} may)"
    )
    if s.replicas:
        msg += f"; the old config allowed {s.replicas} per GPU"
    if len(containers) > 1:
        msg += f"; containers {', '.join(repr(c.name) for c in containers)} of each pod share that device too"
    tl.diag("DRA502", msg)
    if group_pods > limit or (s.replicas and group_pods > s.replicas):
        tl.diag(
            "DRA516",
            f"ResourceClaim {name!r} is now referenced by {group_pods} pods: "
            + (
                f"over the limit of {limit}"
                if group_pods > limit
                else f"more than the {s.replicas} replicas per GPU of the old config"
            ),
        )


def resource_claim(
    name: str, namespace: str | None, requests: list[Request], api_version: str, config: list[dict[str, Any]]
) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name}
    if namespace:
        metadata["namespace"] = namespace
    devices: dict[str, Any] = {"requests": [request_object(r, api_version) for r in requests]}
    if config:
        devices["config"] = config
    return {"apiVersion": api_version, "kind": "ResourceClaim", "metadata": metadata, "spec": {"devices": devices}}
