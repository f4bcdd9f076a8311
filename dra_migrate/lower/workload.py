"""Lower one workload: run the passes on each GPU pod template, then wire claims into the pod."""

from __future__ import annotations

from typing import Any

from dra_migrate.ir import PodTemplate, Workload
from dra_migrate.lower.backends import claim_template
from dra_migrate.lower.context import RunContext, TemplateLowering
from dra_migrate.lower.names import dns_label, unique
from dra_migrate.lower.passes import NON_GPU_CHECKS, PASSES
from dra_migrate.plan import Append, Op, ReplaceValue, SetKey


def template_suffix(wl: Workload, pt: PodTemplate) -> str:
    """'gpu' for the only pod template; else a readable name from the template's path (e.g. 'worker-gpu')."""
    gpu_templates = [t for t in wl.pod_templates if t.gpu_containers]
    if len(gpu_templates) <= 1:
        return "gpu"
    rel = [str(p) for p in pt.path[len(wl.item_path) :]]
    skip = {"spec", "template", "containers", "podSpec"}
    words = [p for p in rel if p not in skip and not p.endswith(("Specs", "Spec", "Template", "Templates"))]
    if not words:
        words = [s for s in rel if s not in ("spec", "template")][-2:]
    return dns_label("-".join(words[-2:]) + "-gpu")


def lower_workload(wl: Workload, ctx: RunContext) -> tuple[list[Op], list[dict[str, Any]], list[TemplateLowering]]:
    ops: list[Op] = []
    docs: list[dict[str, Any]] = []
    lowered: list[TemplateLowering] = []
    if wl.blocked:
        return ops, docs, lowered
    ops.extend(wl.extra_ops)
    from dra_migrate.integrations.skip import skip_lowering

    if (skipped := skip_lowering(wl, ctx)) is not None:
        return ops, docs, [skipped]
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
        template_name = ctx.namer.assign(wl.namespace, wl.name or "workload", wl.kind, template_suffix(wl, pt))
        tl = TemplateLowering(wl, pt, template_name, pod_claim)
        for _name, run in PASSES:
            run(tl, ctx)
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
    if migrated and wl.claims_support is not None:
        migrated[0].diag("DRA408", controller_warning(wl), wl.line)
    return ops, docs, lowered


def controller_warning(wl: Workload) -> str:
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
    return f"{wl.kind} ({wl.api_version}) {first}. {note}"


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
