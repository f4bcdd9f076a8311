"""MIG slices → requests on mig.nvidia.com with a CEL selector on the driver's `profile` attribute.

Mixed strategy: `nvidia.com/mig-<profile>: N`. Single strategy: `nvidia.com/gpu: N` on nodes whose product
label ends in `-MIG-<profile>` (the label says which slice the request got). One request per container
and profile, so containers never share slices (as with the device plugin); init containers reuse an app
container's request of the same profile when it is large enough.
"""

from __future__ import annotations

from dra_migrate.ir import Container, ContainerRole
from dra_migrate.lower.backends import DeviceChoice, Request
from dra_migrate.lower.context import RunContext, TemplateLowering
from dra_migrate.lower.names import dns_label, unique
from dra_migrate.lower.passes.sharing_common import inventory, single_profile
from dra_migrate.resources import classify
from dra_migrate.sharing.mig import MIG_CLASS, profile_from_resource, selector

GPU = "nvidia.com/gpu"


def run(tl: TemplateLowering, ctx: RunContext) -> None:
    wanted: list[tuple[Container, str, str, int]] = []  # container, resource, profile, count
    single = single_profile(tl)
    if single is None and _pinned_to_single_strategy(tl):
        single = ""  # nodes whose GPUs are all MIG slices, of whatever profile: any MIG device
    for c in tl.template.gpu_containers:
        for d in c.demands:
            if d.resource in tl.handled or d.count == 0:
                continue
            rc = classify(d.resource)
            if rc is not None and rc.scheme == "mig":
                parsed = profile_from_resource(d.resource)
                if parsed is not None and not parsed[1]:
                    wanted.append((c, d.resource, parsed[0], d.count))
            elif d.resource == GPU and single is not None:
                wanted.append((c, d.resource, single, d.count))
    if not wanted:
        _warn_single_strategy(tl, ctx)
        return
    taken = {r.name for r in tl.requests}
    made: list[tuple[Request, str]] = []  # (request, profile) of app containers and sidecars
    notes: list[str] = []
    for c, resource, profile, count in sorted(wanted, key=lambda w: w[0].role is ContainerRole.INIT):
        tl.handled.add(resource)
        if c.role is ContainerRole.INIT:
            fits = [r for r, p in made if p == profile and r.choice is not None and r.choice.count >= count]
            if fits:
                tl.container_refs.setdefault(c.path, []).append(fits[0].name)
                notes.append(f"init container {c.name!r} reuses {fits[0].name!r}")
                continue
        kinds = {(r, p) for cc, r, p, _ in wanted if cc is c} | ({("gpu", "")} if _has_full_gpu(tl, c) else set())
        base = c.name if len(kinds) == 1 else f"{c.name}-{profile}"
        name = unique(dns_label(base), taken)
        taken.add(name)
        req = Request(name, DeviceChoice(MIG_CLASS, count, [selector(profile)] if profile else []))
        tl.requests.append(req)
        tl.container_refs.setdefault(c.path, []).append(name)
        if c.role is not ContainerRole.INIT:
            made.append((req, profile))
        how = resource
        if resource == GPU:
            how = (
                "single strategy, from the "
                + ("nvidia.com/gpu.product" if profile else "nvidia.com/mig.strategy")
                + " selector"
            )
        notes.append(
            f"container {c.name!r}: {count}× MIG {profile or 'slice of any profile'} ({how}) → request {name!r}"
        )
    tl.diag(
        "DRA507",
        "; ".join(notes) + " on device class mig.nvidia.com (MIG memory is the real slice size, "
        "smaller than the profile's nominal GB)",
    )


def _pinned_to_single_strategy(tl: TemplateLowering) -> bool:
    """The pod's nodeSelector requires MIG single-strategy nodes, where nvidia.com/gpu counts MIG slices."""
    from dra_migrate.sharing.model import MIG_STRATEGY_LABEL

    return tl.template.node_selector.get(MIG_STRATEGY_LABEL) == "single"


def _has_full_gpu(tl: TemplateLowering, c: Container) -> bool:
    return any(d.resource == GPU and d.resource not in tl.handled and d.count for d in c.demands)


def _warn_single_strategy(tl: TemplateLowering, ctx: RunContext) -> None:
    if not any(d.resource == GPU and d.resource not in tl.handled for c in tl.template.containers for d in c.demands):
        return
    from dra_migrate.sharing.mig import profiles_for
    from dra_migrate.sharing.model import MIG_STRATEGY_LABEL

    if None in profiles_for(tl.template.node_selector, tl.template.affinity):
        return  # the product selector names a full GPU model
    evidence = None
    if tl.template.node_selector.get(MIG_STRATEGY_LABEL) == "single":
        evidence = f"nodeSelector {MIG_STRATEGY_LABEL}: single"
    else:
        inv = inventory(ctx)
        if inv.mig_strategy() == "single":
            evidence = "MIG strategy single in " + ", ".join(
                sorted({w for w, v in inv.mig_strategies if v == "single"})
            )
    if evidence:
        tl.diag(
            "DRA508",
            f"{evidence}: nvidia.com/gpu may have been a MIG slice on MIG-enabled nodes; translated "
            "as a full GPU (gpu.nvidia.com), which never lands on a MIG-enabled GPU under DRA",
        )
