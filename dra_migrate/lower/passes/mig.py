"""MIG slices → requests on mig.nvidia.com with a CEL selector on the driver's `profile` attribute.

Mixed strategy: `nvidia.com/mig-<profile>: N`. Single strategy: `nvidia.com/gpu: N` on nodes whose product
label ends in `-MIG-<profile>` (the label says which slice the request got). A pod pinned to single-strategy
nodes (`nvidia.com/mig.strategy: single`) without a profile may get a full GPU (nodes without MIG) or a slice
(MIG-enabled nodes): its request is `firstAvailable` gpu.nvidia.com, then mig.nvidia.com (DRA519), or the
template is left as is on targets without firstAvailable (DRA317). One request per app container or sidecar
and profile, so containers never share slices (as with the device plugin); plain init containers are placed by
the init-containers pass (device reuse per resource).
"""

from __future__ import annotations

from dra_migrate.frontend.mig import (
    MIG_CLASS,
    MIG_STRATEGY_LABEL,
    PRODUCT_LABEL,
    profile_from_resource,
    profiles_for,
    selector,
)
from dra_migrate.ir import Container, ContainerRole
from dra_migrate.lower.backends import DeviceChoice, Request
from dra_migrate.lower.context import InitDemand, RunContext, TemplateLowering
from dra_migrate.lower.names import dns_label, unique
from dra_migrate.lower.pass_spec import Pass
from dra_migrate.lower.passes._sharing_common import inventory
from dra_migrate.lower.passes.selection import first_available_allowed
from dra_migrate.ruleset.resources import classify

GPU = "nvidia.com/gpu"
GPU_CLASS = "gpu.nvidia.com"


EITHER = "*"  # nvidia.com/gpu under the single strategy with MIG on some selected nodes and off on others


def run(tl: TemplateLowering, ctx: RunContext) -> None:
    wanted: list[tuple[Container, str, str, int]] = []  # container, resource, profile (or EITHER), count
    single = _single_strategy_reading(tl)
    zero: set[str] = set()
    for c in tl.template.gpu_containers:
        for d in c.demands:
            if d.resource in tl.handled:
                continue
            rc = classify(d.resource)
            if rc is not None and rc.scheme == "mig":
                parsed = profile_from_resource(d.resource)
                if parsed is not None and not parsed[1]:
                    if d.count == 0:  # asks for nothing: the key goes (DRA212), no request
                        zero.add(d.resource)
                    else:
                        wanted.append((c, d.resource, parsed[0], d.count))
            elif d.count == 0:
                continue
            elif d.resource == GPU and single is not None:
                wanted.append((c, d.resource, single, d.count))
    tl.handled |= zero
    if single is None and tl.template.implied.mig_single_some and any(
            d.resource == GPU and d.count for c in tl.template.gpu_containers for d in c.demands):
        tl.diag(
            "DRA528",
            "the node selection admits MIG single-strategy nodes by their nvidia.com/mig.strategy label without "
            "pinning single in every alternative: nvidia.com/gpu was a MIG slice on the single-strategy nodes with "
            "MIG enabled and a full GPU elsewhere, and no DRA request gives a slice on exactly those nodes (a "
            "claim cannot read node labels): the pod template is left as is; select nvidia.com/mig.strategy: "
            "single, or exclude it",
            tl.template.selection_line,
        )
        tl.skip = True
        return
    if not wanted:
        _warn_single_strategy(tl, ctx)
        return
    if any(p == EITHER for _, _, p, _ in wanted) and not _first_available(ctx):
        tl.diag(
            "DRA317",
            f"{_evidence(tl)}: nvidia.com/gpu is a full GPU on nodes without MIG and a MIG slice on MIG-enabled "
            f"ones; only a firstAvailable request keeps both, and target {ctx.options.target_version} has no "
            "DRAPrioritizedList: the pod template is left as is",
            tl.template.selection_line,
        )
        tl.skip = True
        return
    taken = {r.name for r in tl.requests}
    notes: list[str] = []
    either: list[str] = []
    for c, resource, profile, count in sorted(wanted, key=lambda w: w[0].role is ContainerRole.INIT):
        tl.handled.add(resource)
        kinds = {(r, p) for cc, r, p, _ in wanted if cc is c} | ({("gpu", "")} if _has_full_gpu(tl, c) else set())
        base = c.name if len(kinds) == 1 else f"{c.name}-{'gpu' if profile == EITHER else profile}"
        shape = _either_request(base, count) if profile == EITHER else Request(
            base, DeviceChoice(MIG_CLASS, count, [selector(profile)] if profile else []))
        if c.role is ContainerRole.INIT:  # placed on the others' requests by the init-containers pass
            assert shape.choice is not None
            tl.init_demands.append(InitDemand(c, resource, count, shape.choice, base, shape.alternatives))
            what = "a full GPU, else a MIG slice" if profile == EITHER else f"MIG {profile or 'slice of any profile'}"
            (either if profile == EITHER else notes).append(f"init container {c.name!r}: {count}× {what}")
            continue
        name = unique(dns_label(base), taken)
        taken.add(name)
        shape.name = name
        if profile == EITHER:
            either.append(f"container {c.name!r}: {count}× a full GPU, else {count}× MIG slice → request {name!r}")
        else:
            notes.append(f"container {c.name!r}: {count}× MIG {profile or 'slice of any profile'} "
                         f"({_how(tl, resource)}) → request {name!r}")
        tl.requests.append(shape)
        tl.request_resources[name] = resource
        tl.container_refs.setdefault(c.path, []).append(name)
    if notes:
        tl.diag(
            "DRA507",
            "; ".join(notes) + " on device class mig.nvidia.com (MIG memory is the real slice size, "
            "smaller than the profile's nominal GB)",
        )
    if either:
        tl.diag(
            "DRA519",
            f"{_evidence(tl)}: " + "; ".join(either) + " (firstAvailable gpu.nvidia.com, then mig.nvidia.com): "
            "the single strategy served a full GPU on nodes without MIG and a slice on MIG-enabled ones",
        )


def _either_request(name: str, count: int) -> Request:
    full = DeviceChoice(GPU_CLASS, count)
    return Request(name, full, [("gpu", full), ("mig", DeviceChoice(MIG_CLASS, count))])


def _how(tl: TemplateLowering, resource: str) -> str:
    if resource != GPU:
        return resource
    if tl.template.implied.mig_slice and not profiles_for(tl.template.node_selector, tl.template.affinity):
        return "single strategy, from a node label only MIG slices carry"
    return "single strategy, from the nvidia.com/gpu.product selector"


def _single_strategy_reading(tl: TemplateLowering) -> str | None:
    """What nvidia.com/gpu is on the nodes the pod selects: a MIG profile ("" for any profile), EITHER (a full GPU
    on some, a slice on others), or None (a full GPU, the default).

    GFD's single-strategy labeller writes `<model>-MIG-<profile>` only when every GPU of the node is MIG-enabled
    with one profile, and the plain model when none is (then nvidia.com/gpu is a full GPU even under the single
    strategy; the GPU Operator's default strategy is single). So product values decide per value; without them,
    a pinned `nvidia.com/mig.strategy: single` leaves both possible."""
    profiles = profiles_for(tl.template.node_selector, tl.template.affinity)
    if profiles:
        mig = {p for p in profiles if p is not None}
        if not mig:
            return None
        if None in profiles:
            return EITHER
        return next(iter(mig)) if len(mig) == 1 else ""  # several profiles: the product selector pins each
    implied = tl.template.implied
    if implied.mig_slice:  # a label only MIG slices carry: a slice where it is required, else as the rest says
        return "" if implied.mig_slice == "every" else EITHER
    return EITHER if implied.mig_strategy == "single" else None


def _evidence(tl: TemplateLowering) -> str:
    ns = tl.template.node_selector
    if ns.get(MIG_STRATEGY_LABEL) == "single":
        return f"nodeSelector {MIG_STRATEGY_LABEL}=single"
    if PRODUCT_LABEL in ns:
        return f"nodeSelector {PRODUCT_LABEL}={ns[PRODUCT_LABEL]}"
    return "required node affinity on the MIG single strategy"


def _first_available(ctx: RunContext) -> bool:

    return first_available_allowed(ctx)


def _has_full_gpu(tl: TemplateLowering, c: Container) -> bool:
    return any(d.resource == GPU and d.resource not in tl.handled and d.count for d in c.demands)


def _warn_single_strategy(tl: TemplateLowering, ctx: RunContext) -> None:
    """nvidia.com/gpu stays a full GPU; say so when the repository runs the single strategy (DRA508)."""
    if not any(d.resource == GPU and d.resource not in tl.handled for c in tl.template.containers for d in c.demands):
        return
    if tl.template.implied.mig_strategy is not None:
        return  # the node selection pins the strategy: nvidia.com/gpu was read accordingly
    if profiles_for(tl.template.node_selector, tl.template.affinity):
        return  # the product selector names a full GPU model
    inv = inventory(ctx)
    if inv.mig_strategy() == "single":
        where = ", ".join(sorted({w for w, v in inv.mig_strategies if v == "single"}))
        tl.diag(
            "DRA508",
            f"MIG strategy single in {where}: nvidia.com/gpu may have been a MIG slice on MIG-enabled nodes; "
            "translated as a full GPU (gpu.nvidia.com), which never lands on a MIG-enabled GPU under DRA "
            "(select those nodes with nvidia.com/mig.strategy: single or a -MIG-<profile> product to say so)",
        )


# after sharing: it translates the shared (`.shared`) slices itself
PASS = Pass(name="mig", run=run, after=("sharing",), codes=("DRA317", "DRA507", "DRA508", "DRA519", "DRA528"))
