"""Time-sliced and MPS-shared GPUs: a shared claim per workload, per-pod shares, or whole GPUs.

A resource is shared when its name says so (`nvidia.com/gpu.shared`, `nvidia.com/mig-<p>.shared`) or when
the device plugin config that governs the pod (SharingInventory.resolve: only configs whose scope reaches
the workload's file, see sharing.scope) time-slices or MPS-shares it. Three forms:

- `shared-claim` (the default): the pods of one workload (one pod template) reference one named
  ResourceClaim `<workload>-shared-gpu`, which carries the workload's requests as a per-pod template would
  (one request per container, the GPU selection, firstAvailable) and a GpuConfig reproducing the strategy.
  Only while the workload runs no more pods at once than the old config let share one GPU (`replicas`, its
  rolling-update surge included) and no more than a claim can be reserved for; beyond that, and for pod
  counts that are not known, whole GPUs. Workloads never share a claim: the claim lives beside its
  workload (same file, same kustomize build, same lifecycle) and its name comes from the workload alone.
- `consumable`: every pod keeps its own claim (the usual template), asking for one `shares` unit of each
  device on a GPU that allows multiple allocations (Kubernetes DRAConsumableCapacity, driver
  ConsumableShares with `consumableShares: <replicas>`): what time-slicing replicas meant.
- `exclusive`: each pod gets its own whole devices; the warning says how many more GPUs that takes.

Chosen per workload with the annotation dra-migrate.io/sharing or for the run with --sharing; a DaemonSet
never gets a shared claim (its pods run on different nodes, a claim lives on one). A container that asked
for several replicas where the device plugin refused that (failRequestsGreaterThanOne, the MPS default)
never ran: the workload is left as is with an error.

Every decision depends on the workload and the pre-pass facts only; the one run-wide state is the claim's
name, taken through the namer like a template name (so a parallel run replays it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from dra_migrate.config import SharingOptions
from dra_migrate.frontend.mig import MIG_CLASS, memory_mib, profile_from_resource, selector
from dra_migrate.frontend.replicas import surge_and_unavailable
from dra_migrate.ir import ContainerRole, Workload
from dra_migrate.lower.backends import DeviceChoice, Request, request_object
from dra_migrate.lower.claimants import template_role
from dra_migrate.lower.context import InitDemand, RunContext, TemplateLowering
from dra_migrate.lower.demand import count_of, effective_demand
from dra_migrate.lower.names import dns_label, unique
from dra_migrate.lower.pass_spec import Pass
from dra_migrate.lower.passes._sharing_common import (
    CONSUMABLE,
    EXCLUSIVE,
    SHARED_CLAIM,
    SHARING_ANNOTATION,
    SHARING_FORMS,
    annotation,
    inventory,
    single_profile,
)
from dra_migrate.lower.sharing.model import MPS, TIME_SLICING, SharingConfig
from dra_migrate.lower.sharing.opaque import gpu_sharing_parameters, opaque_config
from dra_migrate.lower.sharing.renamed import plain_refusal, renamed_nodes_kept, renamed_refusal, renaming_configs
from dra_migrate.ruleset.features import Target, feature_problem
from dra_migrate.ruleset.resources import classify

GPU_CLASS = "gpu.nvidia.com"
DAEMONSET = "a DaemonSet runs one pod per node and a claim is allocated on one node, so it cannot share one"
GATES = {TIME_SLICING: "TimeSlicingSettings", MPS: "MPSSupport"}
MIN_REPLICAS = 2  # the device plugin rejects a sharing config with fewer replicas
SHARES = "shares"  # the capacity the NVIDIA driver publishes with consumableShares: <N>
SCOPES_HINT = "map each config to its workloads in .dra-migrate.yaml (sharing-scopes)"


@dataclass(slots=True)
class Shared:
    resource: str
    config: SharingConfig | None  # None: shared by name, config not found
    strategy: str  # time-slicing | mps (assumed time-slicing when unknown)
    replicas: int | None
    profile: str | None  # MIG profile, None for a full GPU
    renamed: bool = False  # `.shared` name: built here, the other passes know only unshared names


@dataclass(slots=True)
class Plan:
    """What `finish` does once the requests exist and carry the selection."""

    form: str  # shared-claim | consumable
    shared: Shared
    pods: int | None
    why: str  # how the pod count was found


def run(tl: TemplateLowering, ctx: RunContext) -> None:
    if _plain_on_renamed_nodes(tl, ctx):
        return
    shared = _shared_resources(tl, ctx)
    if not shared or tl.skip:
        return
    if _refused(tl, shared):
        return
    for s_ in shared.values():
        if s_.renamed and not renamed_nodes_kept(tl.template.node_selector, s_.config):
            tl.diag("DRA527", renamed_refusal(s_.resource, s_.config))
            tl.skip = True
            return
    form = _form(tl, ctx)
    others = [
        d.resource
        for c in tl.template.gpu_containers
        for d in c.demands
        if d.resource not in shared and d.count and d.resource not in tl.handled
    ]
    if form == SHARED_CLAIM and tl.workload.kind == "DaemonSet":
        form = EXCLUSIVE
        tl.decisions.append(DAEMONSET)
    if form != EXCLUSIVE and (others or len(shared) > 1):
        tl.diag(
            "DRA517",
            f"shared {', '.join(sorted(shared))} beside {', '.join(sorted(set(others) or set(list(shared)[1:])))}: "
            "the pod template is left as is; annotate it dra-migrate.io/sharing: exclusive to give it whole devices",
        )
        tl.skip = True
        return
    s = next(iter(shared.values()))
    if form == CONSUMABLE:
        form = _consumable_usable(tl, ctx, s)
        if tl.skip:
            return
    pods, why = peak_pods(tl.workload)
    fallback = None
    if form == SHARED_CLAIM:
        fallback = _not_shareable(s, pods, why, ctx, tl.template.apart)
        if fallback is not None:
            form = EXCLUSIVE
    if form == EXCLUSIVE:
        tl.decisions.append(f"sharing: whole devices ({fallback or 'exclusive'})")
        _exclusive(tl, shared, fallback)
        return
    tl.decisions.append(f"sharing: {form} for {_describe(s)}" + (f", {pods} pod(s) at once ({why})"
                                                                 if form == SHARED_CLAIM else ""))
    if s.renamed:
        _own_requests(tl, s)
    _more_than_one(tl, s)
    tl.sharing = Plan(form, s, pods, why)


def finish(tl: TemplateLowering, ctx: RunContext) -> None:
    """After the requests are built and carry the selection: the shared claim, or the per-device shares."""
    plan = tl.sharing
    if not isinstance(plan, Plan) or tl.skip or not tl.requests:
        return
    if plan.form == CONSUMABLE:
        _consumable(tl, plan)
    else:
        _shared_claim(tl, ctx, plan)


# --- which resources are shared, by which config -------------------------------------------------------

def _plain_on_renamed_nodes(tl: TemplateLowering, ctx: RunContext) -> bool:
    """A plain resource that a config of the workload's cluster renames to `.shared` on its nodes: the pod
    never ran on those nodes, and a claim cannot keep it off them (DRA529; the template is left as is)."""
    inv = inventory(ctx)
    if inv.empty:
        return False
    for c in tl.template.gpu_containers:
        for d in c.demands:
            rc = classify(d.resource)
            if not d.count or d.resource in tl.handled or rc is None or rc.scheme not in ("gpu", "mig"):
                continue
            if rc.scheme == "mig" and (profile_from_resource(d.resource) or (None, True))[1]:
                continue  # a renamed MIG resource itself (mig-<p>.shared): DRA527's
            configs = renaming_configs(inv, d.resource, tl.template.node_selector, tl.workload.file)
            if configs:
                tl.diag("DRA529", plain_refusal(d.resource, configs), d.line)
                tl.skip = True
                return True
    return False


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
            res = inv.resolve(d.resource, pt.node_selector, tl.workload.file)
            if named_shared:
                config = res.config if res.replicas else (res.candidates[0] if len(res.candidates) == 1 else None)
                if config is None:
                    orphans = "; " + _orphans(res.orphans, d.resource) if res.orphans else ""
                    tl.diag(
                        "DRA505",
                        f"{d.resource}: no device plugin config found that shares it; assuming time-slicing with "
                        f"unknown replicas (at least {MIN_REPLICAS}; pass the config with --sharing-config FILE)"
                        + orphans,
                        d.line,
                    )
                    out[d.resource] = Shared(d.resource, None, TIME_SLICING, None, profile, True)
                else:
                    out[d.resource] = Shared(
                        d.resource, config, config.strategy, config.replicas_for(d.resource), profile, True
                    )
            elif res.replicas and res.config is not None:
                out[d.resource] = Shared(d.resource, res.config, res.config.strategy, res.replicas, profile)
            elif res.conflict:
                tl.diag(
                    "DRA522",
                    f"{d.resource}: device plugin configs of different clusters reach this file and disagree: "
                    + "; ".join(f"{_setting(c, d.resource)} applies to {c.scope.describe()}" for c in res.conflict)
                    + f"; translated as whole devices: {SCOPES_HINT}",
                    d.line,
                )
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
            elif res.orphans:
                tl.diag(
                    "DRA524",
                    f"{d.resource}: no device plugin config's scope reaches this file; "
                    f"{_orphans(res.orphans, d.resource)}; translated as whole devices",
                    d.line,
                )
    return out


def _setting(c: SharingConfig, resource: str) -> str:
    replicas = c.replicas_for(resource)
    return f"{c.label} ({c.strategy}{f', replicas={replicas}' if replicas else ''})"


def _orphans(configs: list[SharingConfig], resource: str) -> str:
    names = ", ".join(_setting(c, resource) for c in configs)
    return (f"{names} reaches no workload and may have been meant for this one: if it applies here, "
            "map it in .dra-migrate.yaml (sharing-scopes) or pass it with --sharing-config")


def _refused(tl: TemplateLowering, shared: dict[str, Shared]) -> bool:
    """A container asked for several replicas where the device plugin admitted only one: the pod never ran."""
    for s in shared.values():
        if s.config is None or not s.config.fail_requests_greater_than_one:
            continue
        for c in tl.template.gpu_containers:
            count = sum(d.count for d in c.demands if d.resource == s.resource)
            if count > 1:
                default = " (the default for MPS)" if s.strategy == MPS else ""
                tl.diag(
                    "DRA521",
                    f"container {c.name!r} asks for {count} replicas of {s.resource}, which {s.config.label} "
                    f"shares with {s.strategy} and failRequestsGreaterThanOne{default}: the device plugin never "
                    "admitted this pod (UnexpectedAdmissionError: maximum request size for shared resources is 1); "
                    "the pod template is left as is: ask for 1 replica, or for whole GPUs",
                    0,
                    c,
                )
                tl.skip = True
    return tl.skip


def _form(tl: TemplateLowering, ctx: RunContext) -> str:
    value = annotation(tl, SHARING_ANNOTATION)
    if value is not None:
        if value in SHARING_FORMS:
            tl.decisions.append(f"sharing strategy {value} (annotation {SHARING_ANNOTATION})")
            return value
        tl.diag("DRA515", f"{SHARING_ANNOTATION}: {value!r} is not {', '.join(SHARING_FORMS)}; ignored")
    return ctx.options.sharing.strategy or SHARED_CLAIM


def _consumable_usable(tl: TemplateLowering, ctx: RunContext, s: Shared) -> str:
    """consumable when the driver and the target can do it; the shared claim for MPS; skip when the target
    cannot accept the capacity fields (DRA605/DRA606, the same checks every emitted object goes through)."""
    if s.strategy == MPS:
        tl.diag(
            "DRA525",
            f"{s.resource} is MPS-shared: the NVIDIA DRA driver refuses MPS on devices with consumable shares, "
            "so the consumable form is not used",
        )
        return EXCLUSIVE if tl.workload.kind == "DaemonSet" else SHARED_CLAIM

    problem = feature_problem(ctx.options.target_version, "consumableCapacity", ctx.options.feature_gates)
    if problem is not None and problem[0] != "DRA609":
        tl.diag(problem[0], f"--sharing consumable: {problem[1]}; the pod template is left as is")
        tl.skip = True
    return CONSUMABLE


# --- pod counts and the limit of one shared claim ------------------------------------------------------

def peak_pods(wl: Workload) -> tuple[int | None, str]:
    """Pods of the workload that may run at once (and how that was found); None when not known."""
    data = wl.data if isinstance(wl.data, dict) else {}
    spec: dict[str, Any] = data["spec"] if isinstance(data.get("spec"), dict) else {}
    if wl.replicas is None:
        return None, f"a {wl.kind} does not say how many pods it runs"
    if wl.kind == "Pod":
        return 1, "one Pod"
    count = wl.replicas
    replicas = f"{count} replica{'' if count == 1 else 's'}"
    if wl.autoscaled is not None and wl.autoscaled[0] > count:
        count = wl.autoscaled[0]
        replicas = f"up to {count} replicas by {wl.autoscaled[1]}"
    if wl.kind == "Deployment":
        strategy = spec.get("strategy") if isinstance(spec.get("strategy"), dict) else None
        su = surge_and_unavailable(strategy, count)
        if su is not None and su[0]:
            return count + su[0], f"{replicas} + {su[0]} surge pod(s) in a rolling update"
        return count, replicas
    if wl.kind == "CronJob":
        policy = spec.get("concurrencyPolicy", "Allow")
        if policy == "Forbid":
            return wl.replicas, f"parallelism {wl.replicas}, one run at a time"
        if policy == "Replace":
            return 2 * wl.replicas, f"parallelism {wl.replicas}, a replaced run's pods may still be terminating"
        return None, "runs of a CronJob with concurrencyPolicy Allow may overlap"
    if wl.kind == "Job":
        return wl.replicas, f"parallelism {wl.replicas}"
    return count, replicas


def _not_shareable(s: Shared, pods: int | None, why: str, ctx: RunContext, apart: list[str]) -> str | None:
    """Why the workload's pods do not get one shared claim (None: they do)."""

    reserved = Target(ctx.options.target_version).reserved_for_limit()
    if pods is None:
        return f"{why}, so it is not known that they fit on one shared device"
    if pods <= 1:
        return (f"it runs one pod at a time ({why}): a claim of its own gives that pod the device a shared claim "
                "would, without a named claim to keep")
    if apart:  # a shared claim is allocated on one node: every pod that references it runs there
        return (f"its {pods} pods ({why}) cannot all run on one node, which a shared claim requires: "
                + "; ".join(apart))
    if s.replicas is None and pods > MIN_REPLICAS:
        return (f"its {pods} pods ({why}) may exceed the replicas per device of the unknown config (only "
                f"{MIN_REPLICAS} are certain)")
    if s.replicas is not None and pods > s.replicas:
        return f"its {pods} pods ({why}) exceed the {s.replicas} replicas that shared one device"
    if pods > reserved:
        return f"its {pods} pods ({why}) exceed the {reserved} pods a ResourceClaim can be reserved for"
    return None


def _per_pod(tl: TemplateLowering, resources: set[str]) -> int:
    """The pod's effective demand of `resources`, as the kubelet counted it (dra_migrate.lower.demand)."""
    return sum(effective_demand(tl.template.containers, count_of(r)) for r in sorted(resources))


# --- the three forms -----------------------------------------------------------------------------------

def _describe(s: Shared) -> str:
    how = {TIME_SLICING: "time-sliced", MPS: "MPS-shared"}[s.strategy]
    rep = f"replicas={s.replicas}" if s.replicas else "unknown replicas"
    src = s.config.label if s.config else "no config found"
    return f"{s.resource} ({how}, {rep}, {src})"


def _exclusive(tl: TemplateLowering, shared: dict[str, Shared], fallback: str | None) -> None:
    for s in shared.values():
        if s.renamed:
            _own_requests(tl, s)
        _more_than_one(tl, s)
    per_pod = _per_pod(tl, set(shared))
    pods = None if tl.workload.kind == "DaemonSet" else tl.workload.replicas
    replicas = min((s.replicas for s in shared.values() if s.replicas), default=None)
    what = ", ".join(_describe(s) for s in shared.values())
    if DAEMONSET in tl.decisions:
        what += f" ({DAEMONSET})"
    head = f"{what}: whole devices, not a shared claim: {fallback}" if fallback else f"{what}: exclusive"
    if pods is not None and replicas:
        used = pods * per_pod
        before = (f"used {used} of the {replicas} replicas of one device" if used < replicas else
                  f"packed them onto {math.ceil(used / replicas)} device(s) ({replicas} replicas each)")
        tl.diag(
            "DRA504",
            f"{head}; each pod gets its own device(s): {pods} pod(s) × {per_pod} now need {used} whole device(s) "
            f"where the shared setup {before}",
        )
    else:
        tl.diag(
            "DRA504",
            f"{head}; each pod gets its own device(s) ({per_pod} per pod) where the shared setup put up to "
            f"{replicas or 'N'} pods on one",
        )


def _choice(s: Shared, count: int) -> DeviceChoice:
    if s.profile:
        return DeviceChoice(MIG_CLASS, count, [selector(s.profile)])
    return DeviceChoice(GPU_CLASS, count)


def _own_requests(tl: TemplateLowering, s: Shared) -> None:
    """Requests for a `.shared` resource, which the later passes do not translate: one per app container and
    sidecar with its count (distinct devices, as the device plugin's distributed policy gave them); plain init
    containers are left to the init-containers pass, which places them on these requests."""
    taken = {r.name for r in tl.requests}
    for c in tl.template.gpu_containers:
        count = sum(d.count for d in c.demands if d.resource == s.resource)
        if not count:
            continue
        if c.role is ContainerRole.INIT:
            tl.init_demands.append(InitDemand(c, s.resource, count, _choice(s, count), c.name))
            continue
        name = unique(dns_label(c.name), taken)
        taken.add(name)
        tl.requests.append(Request(name, _choice(s, count)))
        tl.request_resources[name] = s.resource
        tl.container_refs.setdefault(c.path, []).append(name)
    tl.handled.add(s.resource)


def _more_than_one(tl: TemplateLowering, s: Shared) -> None:
    packed = s.config is not None and s.config.allocation_policy == "packed"
    for c in tl.template.gpu_containers:
        count = sum(d.count for d in c.demands if d.resource == s.resource)
        if count > 1:
            how = ("the config's packed sharedDevicesAllocationPolicy may have given it replicas of fewer GPUs"
                   if packed else "the device plugin's default distributed policy spread them over distinct "
                   "GPUs where it could")
            tl.diag("DRA514", f"container {c.name!r} asked for {count} replicas of {s.resource}: it gets {count} "
                    f"distinct devices ({how})", 0, c)


def _consumable(tl: TemplateLowering, plan: Plan) -> None:
    for req in tl.requests:
        for choice in [req.choice, *(alt for _n, alt in req.alternatives)]:
            if choice is not None:
                choice.capacity[SHARES] = "1"
    s = plan.shared
    replicas = str(s.replicas) if s.replicas else "<the replicas of the old config>"
    tl.diag(
        "DRA526",
        f"{_describe(s)} → each pod keeps its own claim and asks for one share (capacity {SHARES}: 1) of every "
        "device it gets, on GPUs that allow multiple allocations: run the NVIDIA DRA driver with its feature gate "
        f"ConsumableShares (alpha, after v0.4.1) and consumableShares: \"{replicas}\" (Helm value), so that at most "
        f"{replicas} pods share a device as before; no sharing config is emitted (a GPU time-slices its processes "
        "by default)",
    )


def _claim_suffix(tl: TemplateLowering, s: Shared) -> str:

    role = template_role(tl.workload, tl.template)  # (), or e.g. ('worker',) for one of several
    what = f"mig-{s.profile}" if s.profile else "gpu"
    return dns_label("-".join([*role, "shared", what]))


def _shared_claim(tl: TemplateLowering, ctx: RunContext, plan: Plan) -> None:
    wl, pt, s = tl.workload, tl.template, plan.shared
    name = ctx.namer.claim_name(wl.namespace, wl.name or "workload", wl.kind, _claim_suffix(tl, s))
    config: list[dict[str, Any]] = list(tl.config)
    if s.profile:
        tl.diag(
            "DRA509",
            f"{s.resource}: time-slicing a MIG slice needs no config under DRA (TimeSlicing on MIG is "
            "a no-op); pods sharing the claim time-share the slice",
        )
    elif s.config is not None:
        params = gpu_sharing_parameters(s.strategy, s.replicas, memory_mib(pt.node_selector))
        config.append(opaque_config([r.name for r in tl.requests], params))
        gate = GATES[s.strategy]
        tl.diag(
            "DRA503",
            f"ResourceClaim {name!r} uses GpuConfig strategy "
            f"{params['sharing']['strategy']}: enable the DRA driver's alpha feature gate {gate} (Helm values: "
            f"featureGates: {{{gate}: true}})",
        )
    claim = resource_claim(name, wl.namespace, tl.requests, ctx.options.api_version, config, tl.constraints)
    tl.shared_claim = claim
    tl.extra_documents.append(claim)
    devices = sum(r.choice.count if r.choice else 1 for r in tl.requests)
    pods = plan.pods or 0
    limit = f"within the {s.replicas} pods per device of the old config" if s.replicas else (
        f"within the {MIN_REPLICAS} pods per device any sharing config allowed")
    msg = (
        f"{_describe(s)} → the {pods} pod(s) of this workload ({plan.why}) share ResourceClaim {name!r} "
        f"({devices} device(s), allocated once): all of them run on one node, {limit}, where the device plugin "
        "could spread them over the devices of every node"
        + ("" if wl.autoscaled is not None else "; an autoscaler outside this file (HPA, KEDA) that scales it "
           f"beyond {pods} pod(s) would put more on the claim's device(s): size the claim for its maximum, or "
           "annotate the workload dra-migrate.io/sharing: exclusive")
    )
    refs = [c for c in pt.gpu_containers if c.path in tl.container_refs]
    if len(tl.requests) > 1:
        msg += f"; each of containers {', '.join(repr(c.name) for c in refs)} has its own request in it"
    tl.diag("DRA502", msg)


def resource_claim(
    name: str, namespace: str | None, requests: list[Request], api_version: str, config: list[dict[str, Any]],
    constraints: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name}
    if namespace:
        metadata["namespace"] = namespace
    devices: dict[str, Any] = {"requests": [request_object(r, api_version) for r in requests]}
    if constraints:
        devices["constraints"] = constraints
    if config:
        devices["config"] = config
    return {"apiVersion": api_version, "kind": "ResourceClaim", "metadata": metadata, "spec": {"devices": devices}}


PASS = Pass(
    name="sharing", run=run, after=("other-schemes", "provider-features"), options=SharingOptions,
    codes=("DRA504", "DRA505", "DRA506", "DRA514", "DRA515", "DRA517", "DRA521", "DRA522", "DRA524", "DRA525",
           "DRA527", "DRA529"),
)
