"""Lower one workload: run the passes on each GPU pod template, then wire claims into the pod."""

from __future__ import annotations

from typing import Any

from dra_migrate.ir import Workload
from dra_migrate.lower.backends import claim_template
from dra_migrate.lower.claimants import fallback_name, key_of
from dra_migrate.lower.context import RunContext, TemplateLowering
from dra_migrate.lower.names import FileNames, unique
from dra_migrate.lower.passes import NON_GPU_CHECKS, PASSES
from dra_migrate.lower.skip import skip_lowering
from dra_migrate.plan import Append, Op, ReplaceValue, SetKey


def lower_workload(
    wl: Workload, ctx: RunContext, names: FileNames | None = None
) -> tuple[list[Op], list[dict[str, Any]], list[TemplateLowering]]:
    """names: the claim template names of the file's pod templates (pipeline.template_names)."""
    ops: list[Op] = []
    docs: list[dict[str, Any]] = []
    lowered: list[TemplateLowering] = []
    if wl.blocked:
        return ops, docs, lowered
    ops.extend(wl.extra_ops)

    if (skipped := skip_lowering(wl, ctx)) is not None:
        return ops, docs, [skipped]
    if bypassing := _bypasses_the_scheduler(wl):
        return ops, docs, bypassing
    if elsewhere := _pods_in_other_namespaces(wl):
        return ops, docs, elsewhere
    for pt in wl.pod_templates:
        if not pt.gpu_containers:
            # pod templates without device plugin resources can still use another GPU scheme (annotations)
            probe = TemplateLowering(wl, pt, "", "")
            for check in NON_GPU_CHECKS:
                check(probe, ctx)
            if probe.diagnostics:
                probe.skip = True
                lowered.append(probe)
            continue
        claim_names = {c.name for c in pt.pod_claims}
        pod_claim = unique("gpu", claim_names)
        template_name, qualified = (names or {}).get(key_of(wl, pt)) or (fallback_name(wl, pt), None)
        tl = TemplateLowering(wl, pt, template_name, pod_claim)
        for lowering_pass in PASSES:
            lowering_pass.run(tl, ctx)
            if tl.skip:
                break
        lowered.append(tl)
        if tl.skip:
            continue
        if pt.pod_claims:
            tl.diag(
                "DRA207",
                f"existing resourceClaims ({', '.join(sorted(claim_names))}) kept; the GPU claim "
                f"is added as {pod_claim!r}",
            )
        ops.extend(tl.ops)
        if tl.requests:
            ops.extend(_wire_claims(tl))
        if tl.shared_claim is None and tl.requests:
            if qualified:
                tl.diag("DRA240", f"ResourceClaimTemplate {template_name!r}: {qualified}")
            docs.append(
                claim_template(
                    template_name,
                    wl.namespace,
                    tl.requests,
                    ctx.options.api_version,
                    tl.config or None,
                    tl.constraints or None,
                )
            )
        docs.extend(tl.extra_documents)
        if tl.requests:
            summary = ", ".join(
                f"{r.name}: " + (f"{r.choice.count}×{r.choice.device_class}" if r.choice else "1×first-available")
                for r in tl.requests
            )
            target = tl.shared_claim["metadata"]["name"] if tl.shared_claim else template_name
            tl.diag(
                "DRA201",
                f"GPU requests moved to {'ResourceClaim' if tl.shared_claim else 'ResourceClaimTemplate'} "
                f"{target!r} (pod claim {pod_claim!r}; requests {summary})",
            )
    migrated = [tl for tl in lowered if not tl.skip and tl.requests]
    for tl in migrated:
        _other_scheduler(tl)
    if migrated and wl.claims_support is not None:
        migrated[0].diag("DRA408", controller_warning(wl), wl.line)
    if migrated and wl.via:
        for kind, api_version, min_version, note in wl.carriers:  # the outer controllers that create it
            migrated[0].diag("DRA408", controller_warning(wl, (kind, api_version, min_version, note)), wl.line)
        where = f"namespace {wl.namespace!r}" if wl.namespace else "the namespace the outer object is applied to"
        migrated[0].diag("DRA417", f"{wl.kind} embedded in {wl.via.removesuffix(' > ')}: its pods are created in "
                         f"{where}, so its ResourceClaimTemplate goes there, with the outer object's new documents. "
                         f"{wl.embedded_note}", wl.line)
    return ops, docs, lowered


def _bypasses_the_scheduler(wl: Workload) -> list[TemplateLowering]:
    """GPU pod templates with spec.nodeName preset. Only the scheduler allocates a claim, and such a pod never
    meets it: the kubelet would wait for good for the claim to be allocated (the device plugin served the pod
    at admission). The whole workload stays as it is."""
    refused: list[TemplateLowering] = []
    for pt in wl.pod_templates:
        if pt.gpu_containers and pt.node_name is not None:
            tl = TemplateLowering(wl, pt, "", "", skip=True)
            tl.diag(
                "DRA219",
                f"spec.nodeName {pt.node_name!r} is preset: the pod bypasses the scheduler, and only the "
                "scheduler allocates DRA claims, so the migrated pod would never start (the kubelet waits for "
                "an allocated claim). Left as is; set nodeSelector {kubernetes.io/hostname: "
                f"{pt.node_name}}} instead of nodeName, then migrate",
                pt.node_name_line or pt.line,
            )
            refused.append(tl)
    return refused


def _pods_in_other_namespaces(wl: Workload) -> list[TemplateLowering]:
    """GPU pod templates of a cluster-scoped kind (or of an object embedded in one without a namespace of its
    own), whose pods run in the namespace of each object that uses it. A ResourceClaimTemplate is namespaced:
    the one written beside the object would exist in a single namespace (wherever it is applied), and pods
    anywhere else would never start. The whole workload stays as it is. A metadata.namespace on the
    cluster-scoped object itself changes nothing (the API server clears it, rest.BeforeCreate), so it does not
    count; an embedded object with its own namespace has no pods_run_in (frontend.embedded)."""
    if not wl.pods_run_in:
        return []
    refused: list[TemplateLowering] = []
    for pt in wl.pod_templates:
        if pt.gpu_containers:
            tl = TemplateLowering(wl, pt, "", "", skip=True)
            tl.diag(
                "DRA140",
                f"the pods run in {wl.pods_run_in}, and a ResourceClaimTemplate is namespaced: one written "
                "beside this cluster-wide template would exist in one namespace only, and pods anywhere else "
                "would never start; left as is: use a namespaced kind per namespace (then migrate it), or keep "
                "nvidia.com/gpu and serve it through DRA (--strategy extended-resource)",
                pt.line,
            )
            refused.append(tl)
    return refused


def _other_scheduler(tl: TemplateLowering) -> None:
    """A pod that names another scheduler gets its claim only if that scheduler allocates claims."""
    name = tl.template.scheduler_name
    if name is None or name == "default-scheduler":
        return
    tl.diag(
        "DRA222",
        f"spec.schedulerName {name!r}: only a scheduler that runs DRA's DynamicResources plugin allocates the "
        "claim (a kube-scheduler profile does; check this scheduler's DRA support), else the pod stays Pending",
        tl.template.scheduler_name_line,
    )


def controller_warning(wl: Workload, carrier: tuple[str, str, str, str] | None = None) -> str:
    """carrier: (kind, apiVersion, minVersion, note) of an outer controller that creates this object."""
    if carrier is not None:
        kind, api_version, min_version, note = carrier
    else:
        kind, api_version = wl.kind, wl.api_version
        min_version, note = wl.claims_support or ("unknown", "")
    if min_version == "unknown":
        first = (
            "minimum controller version unknown: check that the controller and its CRD pass pod "
            "resourceClaims through before applying, or the pods get no GPU"
        )
    else:
        first = (
            f"needs a controller and CRD of at least {min_version}: older ones drop pod resourceClaims "
            "and the pods get no GPU"
        )
    return f"{kind} ({api_version}) {first}. {note}"


def _wire_claims(tl: TemplateLowering) -> list[Op]:
    ops: list[Op] = []
    pt = tl.template
    by_path = {c.path: c for c in pt.containers}
    for cpath, names in tl.container_refs.items():
        c = by_path[cpath]
        refs = [{"name": tl.pod_claim_name, "request": n} for n in names]
        claims_path = (*cpath, "resources", "claims")
        if c.claim_refs:
            ops.append(Append(claims_path, tuple(refs)))
        elif "claims" in c.resource_keys:  # `claims: []` or `claims: null`
            ops.append(ReplaceValue(claims_path, refs))
        else:
            ops.append(SetKey(claims_path, refs))
    entry: dict[str, Any] = {"name": tl.pod_claim_name}
    if tl.shared_claim is not None:
        entry["resourceClaimName"] = tl.shared_claim["metadata"]["name"]
    else:
        entry["resourceClaimTemplateName"] = tl.template_name
    rc_path = (*pt.path, "resourceClaims")
    if pt.pod_claims:
        ops.append(Append(rc_path, (entry,)))
    elif "resourceClaims" in pt.present_keys:
        ops.append(ReplaceValue(rc_path, [entry]))
    else:
        ops.append(SetKey(rc_path, [entry]))
    return ops
