"""Build IR workloads from one parsed file."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dra_migrate.config import Options
from dra_migrate.diagnostics.model import Diagnostic, Location, make
from dra_migrate.frontend import crd_checks, embedded, refusals
from dra_migrate.frontend import effects as effects_mod
from dra_migrate.frontend.counts import parse_gpu_count, placeholder_in
from dra_migrate.frontend.parsed import ParsedDocument, gpu_keys_in
from dra_migrate.ir import (
    ClaimRef,
    Container,
    ContainerRole,
    DocPath,
    GpuDemand,
    NodeImplication,
    PodClaim,
    PodTemplate,
    Workload,
)
from dra_migrate.ruleset.files import rules_data
from dra_migrate.ruleset.kinds import KindRuleSet, resolve, split_api_version
from dra_migrate.ruleset.resources import classify
from dra_migrate.source.compose import CORE_TAGS
from dra_migrate.source.helm import gpu_key_lines
from dra_migrate.source.nodes import find, key_line, merge_conflict
from dra_migrate.source.plain import as_map, to_plain
from dra_migrate.source.reader import SourceFile

# Kubernetes' own controllers copy pod templates verbatim: no controller-version warning for them.
CORE_GROUPS = frozenset({"", "apps", "batch", "extensions"})


_COUNT_TAGS = (None, "tag:yaml.org,2002:int", "tag:yaml.org,2002:str")


@dataclass(slots=True)
class FrontendResult:
    documents: list[ParsedDocument]
    diagnostics: list[Diagnostic]


def _template_documents(src: SourceFile) -> list[Diagnostic]:
    """DRA102 for each document left out as a template, with the GPU resources its text names."""
    others = "" if len(src.template_documents) == len(src.documents) else (
        "; this document is left as is, the file's other documents are migrated")
    out: list[Diagnostic] = []
    for t in src.template_documents:
        line, col = src.line_col(t.template_at)
        first = src.line_col(t.start)[0]
        keys = [f"{key} at line {first + n - 1}" for n, _c, key in gpu_key_lines(src.text[t.start : t.end])]
        gpu = f" (it sets {', '.join(keys)}: change the template by hand)" if keys else ""
        out.append(make("DRA102", f"template syntax ({{{{ }}}}): not plain YAML until rendered{others}{gpu}",
                        Location(src.path, line, col)))
    return out


def build(
    src: SourceFile, rules: KindRuleSet, options: Options | None = None, plain: list[Any] | None = None
) -> FrontendResult:
    """plain: the documents' data when the caller already converted them (to_plain of each root)."""
    options = options or Options()
    docs: list[ParsedDocument] = []
    diags = _template_documents(src)
    for n, doc in enumerate(src.documents):
        data = to_plain(doc.root) if plain is None else plain[n]
        pd = ParsedDocument(doc, data)
        docs.append(pd)
        if not isinstance(data, dict):
            continue
        if data.get("kind") == "List" and isinstance(data.get("items"), list):
            for i, item in enumerate(data["items"]):
                _object(src, pd, item, ("items", i), rules, diags, options)
        else:
            _object(src, pd, data, (), rules, diags, options)
    _autoscaled(docs)
    return FrontendResult(docs, diags)


def _autoscaler_rule(obj: Any) -> dict[str, Any] | None:
    """The rules/autoscalers.yaml entry for `obj`, by its group and kind (None: not an autoscaler)."""
    if not isinstance(obj, dict) or not isinstance(obj.get("kind"), str):
        return None
    group = split_api_version(str(obj.get("apiVersion", "")))[0]
    return next((r for r in rules_data("autoscalers.yaml")["autoscalers"]
                 if r["kind"] == obj["kind"] and r["group"] == group), None)


def _autoscaled(docs: list[ParsedDocument]) -> None:
    """Mark the workloads an autoscaler of the same file scales (HPA, KEDA ScaledObject): they may run up to its
    maximum of pods, not spec.replicas."""
    scalers: dict[tuple[str, str, str], tuple[int, str]] = {}
    for pd in docs:
        data = pd.data
        items = data.get("items") if isinstance(data, dict) and data.get("kind") == "List" else [data]
        for obj in items if isinstance(items, list) else []:
            rule = _autoscaler_rule(obj)
            if rule is None:
                continue
            spec, meta = as_map(obj.get("spec")), as_map(obj.get("metadata"))
            ref = as_map(spec.get("scaleTargetRef"))
            most = spec.get(rule["maxField"], rule.get("default"))
            target_kind = ref.get("kind") or rule.get("targetKindDefault")
            if (not isinstance(most, int) or isinstance(most, bool) or not isinstance(ref.get("name"), str)
                    or not isinstance(target_kind, str)):
                continue
            key = (str(meta.get("namespace") or ""), target_kind, ref["name"])
            scalers[key] = (most, f"{obj['kind']}/{meta.get('name')}")
    if not scalers:
        return
    for pd in docs:
        for wl in pd.workloads:
            found = scalers.get((wl.namespace or "", wl.kind, wl.name))
            if found is not None:
                wl.autoscaled = found


def _object(
    src: SourceFile,
    pd: ParsedDocument,
    obj: Any,
    item_path: DocPath,
    rules: KindRuleSet,
    diags: list[Diagnostic],
    options: Options,
    outer: embedded.Outer | None = None,
) -> None:
    if not isinstance(obj, dict):
        return
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    root = pd.doc.root
    if not isinstance(api_version, str) or not isinstance(kind, str):
        if outer is None and (doc_rule := rules.lookup_document(obj)) is not None:
            crd_checks.document(src.path, root, obj, doc_rule, diags)
            return
        keys = gpu_keys_in(obj, item_path)
        if keys:
            line, col = key_line(root, keys[0])
            diags.append(
                make(
                    "DRA108",
                    f"{len(keys)} GPU resource key(s) in a document that is not a Kubernetes object "
                    f"(no apiVersion/kind); reported, not rewritten",
                    Location(src.path, line, col),
                )
            )
        return
    meta = as_map(obj.get("metadata"))
    name = meta.get("name") or (str(meta.get("generateName", "")).rstrip("-")) or ""
    namespace = meta.get("namespace") if isinstance(meta.get("namespace"), str) else None
    if outer is not None:  # created where the outer object's controller puts it
        namespace = outer.namespace
    line, _ = key_line(root, (*item_path, "kind"))
    wl = Workload(src.path, pd.doc.index, item_path, api_version, kind, str(name), namespace, line)
    wl.data = obj
    embedded.adopt(wl, outer)
    annotations = meta.get("annotations")
    if isinstance(annotations, dict):
        wl.annotations = {str(k): str(v) for k, v in annotations.items()}
    wl.replicas = _replicas(obj, kind)
    chk = crd_checks.ObjectCheck(src.path, root, obj, item_path, wl)
    rule = rules.lookup(api_version, kind)
    if rule is None:
        if api_version.startswith("resource.k8s.io"):
            return
        nw = rules.lookup_non_workload(api_version, kind)
        if nw is not None:
            effects = [effects_mod.EFFECTS[e] for e in nw.side_effects if e in effects_mod.EFFECTS]
            crd_checks.non_workload(chk, nw, handled_by_effect=bool(effects))
            for effect in effects:
                effect(chk, nw, options)
        else:
            keys = gpu_keys_in(obj, item_path)
            if keys:
                crd_checks.uncovered(chk, keys)
            crd_checks.value_names(chk, ())
        if wl.diagnostics or wl.extra_ops:
            pd.workloads.append(wl)
        return
    wl.side_effects = (*rule.side_effects, *(outer.side_effects if outer else ()))
    wl.pods_run_in = rule.pods_run_in or (outer.pods_run_in if outer else "")
    group, _version = split_api_version(api_version)
    if group not in CORE_GROUPS:
        wl.claims_support = (rule.claims_min_version, rule.claims_note)
    for spec_path in rule.pod_specs:
        for concrete, spec in resolve(obj, spec_path):
            if isinstance(spec, dict):
                pt = _pod_template(src, pd, wl, (*item_path, *concrete), spec)
                pt.annotations = _template_annotations(obj, concrete)
                wl.pod_templates.append(pt)
    refusals.check(src.path, pd.doc, obj, item_path, wl)
    pd.workloads.append(wl)

    def visit(s: SourceFile, p: ParsedDocument, o: Any, path: DocPath, out: embedded.Outer) -> None:
        _object(s, p, o, path, rules, diags, options, out)

    inside = embedded.dispatch(src, pd, wl, rule, item_path, outer, diags, visit)
    crd_checks.covered(chk, rule, inside)


def _replicas(obj: dict[str, Any], kind: str) -> int | None:
    if kind == "Pod":
        return 1
    spec = as_map(obj.get("spec"))
    if kind == "CronJob":
        jt = as_map(spec.get("jobTemplate"))
        spec = as_map(jt.get("spec"))
        kind = "Job"
    key = "parallelism" if kind == "Job" else "replicas"
    if kind not in ("Job", "Deployment", "StatefulSet", "ReplicaSet", "ReplicationController"):
        return None
    value = spec.get(key, 1)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _template_annotations(obj: dict[str, Any], spec_path: tuple[str | int, ...]) -> dict[str, str]:
    """metadata.annotations beside the PodSpec (the pod template's, or the Pod's own)."""
    parent: Any = obj
    for seg in spec_path[:-1]:
        try:
            parent = parent[seg]
        except (KeyError, IndexError, TypeError):
            return {}
    meta = parent.get("metadata") if isinstance(parent, dict) else None
    ann = meta.get("annotations") if isinstance(meta, dict) else None
    return {str(k): str(v) for k, v in ann.items()} if isinstance(ann, dict) else {}


def _is_quota_like(path: DocPath) -> bool:
    return False


def _pod_template(
    src: SourceFile, pd: ParsedDocument, wl: Workload, path: DocPath, spec: dict[str, Any]
) -> PodTemplate:
    root = pd.doc.root
    containers: list[Container] = []
    for list_key, default_role in (("initContainers", ContainerRole.INIT), ("containers", ContainerRole.APP)):
        items = spec.get(list_key)
        if not isinstance(items, list):
            continue
        for i, c in enumerate(items):
            if not isinstance(c, dict):
                continue
            role = default_role
            if role is ContainerRole.INIT and c.get("restartPolicy") == "Always":
                role = ContainerRole.SIDECAR
            cpath: DocPath = (*path, list_key, i)
            line, _ = key_line(root, cpath)
            container = Container(str(c.get("name", f"{list_key}-{i}")), role, i, cpath, line=line)
            _container_resources(src, pd, wl, container, c)
            containers.append(container)
    pod_claims = [
        PodClaim(str(rc.get("name")), rc.get("resourceClaimTemplateName"), rc.get("resourceClaimName"))
        for rc in spec.get("resourceClaims") or []
        if isinstance(rc, dict)
    ]
    tolerations = [t for t in spec.get("tolerations") or [] if isinstance(t, dict)]
    node_selector = as_map(spec.get("nodeSelector"))
    affinity = spec.get("affinity") if isinstance(spec.get("affinity"), dict) else None
    line, _ = key_line(root, path)
    ns_line = key_line(root, (*path, "nodeSelector"))[0] if "nodeSelector" in spec else 0
    affinity_line = key_line(root, (*path, "affinity"))[0] if "affinity" in spec else 0
    spread = [c for c in spec.get("topologySpreadConstraints") or [] if isinstance(c, dict)]
    spread_line = key_line(root, (*path, "topologySpreadConstraints"))[0] if spread else 0
    selector = {str(k): str(v) for k, v in node_selector.items()}
    node_name = spec.get("nodeName")
    node_name = str(node_name) if node_name not in (None, "") else None
    node_name_line = key_line(root, (*path, "nodeName"))[0] if node_name is not None else 0
    scheduler = spec.get("schedulerName") if isinstance(spec.get("schedulerName"), str) else None
    scheduler_line = key_line(root, (*path, "schedulerName"))[0] if scheduler else 0
    return PodTemplate(
        path,
        containers,
        pod_claims,
        tolerations,
        selector,
        affinity,
        line,
        [str(k) for k in spec],
        node_selector_line=ns_line,
        affinity_line=affinity_line,
        implied=_implied(selector, affinity, containers),
        topology_spread=spread,
        topology_spread_line=spread_line,
        node_name=node_name,
        node_name_line=node_name_line,
        scheduler_name=scheduler or None,
        scheduler_name_line=scheduler_line,
        apart=_kept_apart(spec, affinity, spread),
    )


def _kept_apart(spec: dict[str, Any], affinity: dict[str, Any] | None, spread: list[dict[str, Any]]) -> list[str]:
    """What may keep two pods of this template off one node (scheduler filters: InterPodAffinity, PodTopologySpread,
    NodePorts). Conservative: a term is not matched against the pods' own labels."""
    out: list[str] = []
    anti = as_map(as_map(affinity).get("podAntiAffinity")).get("requiredDuringSchedulingIgnoredDuringExecution")
    if isinstance(anti, list) and anti:
        keys = sorted({str(t.get("topologyKey")) for t in anti if isinstance(t, dict)})
        out.append(f"required pod anti-affinity (topologyKey {', '.join(keys)})")
    hard = sorted({str(c.get("topologyKey")) for c in spread if c.get("whenUnsatisfiable", "DoNotSchedule")
                   == "DoNotSchedule"})
    if hard:
        out.append(f"topology spread with whenUnsatisfiable: DoNotSchedule (topologyKey {', '.join(hard)})")
    host_network = spec.get("hostNetwork") is True
    for list_key in ("initContainers", "containers"):
        for c in spec.get(list_key) or []:
            for port in (c.get("ports") or []) if isinstance(c, dict) else []:
                if isinstance(port, dict) and (port.get("hostPort") or (host_network and port.get("containerPort"))):
                    out.append("a host port" + (" (hostNetwork)" if host_network and not port.get("hostPort") else ""))
                    return out
    return out


def _implied(selector: dict[str, str], affinity: dict[str, Any] | None, containers: list[Container]) -> NodeImplication:
    """What the node selection says about the GPUs the device plugin gave (only worth reading for GPU pods)."""
    # lazy: start-up (frontend.implies: ~1 ms, only _implied() needs it)
    from dra_migrate.frontend.implies import NONE, implied_by_selection

    if not any(c.demands for c in containers):
        return NONE
    return implied_by_selection(selector, affinity)


def _container_resources(
    src: SourceFile, pd: ParsedDocument, wl: Workload, container: Container, c: dict[str, Any]
) -> None:
    resources = c.get("resources")
    if not isinstance(resources, dict):
        return
    container.has_resources = True
    container.resource_keys = [str(k) for k in resources]
    for ref in resources.get("claims") or []:
        if isinstance(ref, dict) and "name" in ref:
            container.claim_refs.append(ClaimRef(str(ref["name"]), ref.get("request")))
    limits = as_map(resources.get("limits"))
    requests = as_map(resources.get("requests"))
    for section, values in (("limits", limits), ("requests", requests)):
        if section in resources:
            container.resource_sections[section] = [str(k) for k in values]
    names = [k for k in (*limits.keys(), *requests.keys()) if isinstance(k, str) and classify(k) is not None]
    root = pd.doc.root
    for name in dict.fromkeys(names):
        paths: list[DocPath] = []
        raw: dict[str, Any] = {}
        for section, values in (("limits", limits), ("requests", requests)):
            if name in values:
                paths.append((*container.path, "resources", section, name))
                raw[section] = values[name]
        line, col = key_line(root, paths[0])
        loc = Location(src.path, line, col)
        counts = {s: parse_gpu_count(v) for s, v in raw.items()}
        foreign = False
        for section, p in zip(raw, paths, strict=True):
            node, _ = find(root, p)
            tag = getattr(node, "tag", None)
            if tag not in _COUNT_TAGS:  # `!!float 1`, `!custom 1`: whatever it means, not a count
                counts[section] = None
                raw[section] = f"{tag or ''} {raw[section]}"
                foreign = foreign or tag not in CORE_TAGS
        bad = [s for s, v in counts.items() if v is None]
        if bad and foreign:  # a tag outside the core schema: DRA220 refuses the workload
            wl.blocked = True
            continue
        if bad:
            placeholder = placeholder_in(raw[bad[0]])
            why = (
                f"is a template placeholder ({placeholder}), not a count the API accepts: render the manifests "
                "(envsubst, helm template, ...) and migrate the output"
                if placeholder
                else "is not a whole number of devices"
            )
            shown = "empty (null)" if raw[bad[0]] is None else f"= {raw[bad[0]]!r}"
            wl.diagnostics.append(
                make("DRA203", f"container {container.name!r}: {name} {shown} in {bad[0]} {why}; left as is",
                     loc, wl.ref)
            )
            wl.blocked = True
            continue
        if "limits" not in raw:  # the API server: "Limit must be set for non overcommitable resources"
            wl.diagnostics.append(make(
                "DRA202", f"container {container.name!r}: {name} in requests without a limit: Kubernetes rejects "
                "an extended resource requested without a limit (it cannot be overcommitted); left as is",
                loc, wl.ref))
            wl.blocked = True
            continue
        distinct = set(counts.values())
        if len(distinct) > 1:
            wl.diagnostics.append(
                make(
                    "DRA202",
                    f"container {container.name!r}: {name} requests={raw['requests']!r} but "
                    f"limits={raw['limits']!r}; they must be equal, left as is",
                    loc,
                    wl.ref,
                )
            )
            wl.blocked = True
            continue
        depth = len(container.path)
        added = {depth + 1: {"claims"}, depth - 2: {"tolerations", "resourceClaims"}}
        merged = next((m for m in (merge_conflict(root, p, added) for p in paths) if m), None)
        if merged:
            wl.diagnostics.append(
                make(
                    "DRA113",
                    f"container {container.name!r}: {name}: the key {merged!r} on the way comes from "
                    "(or is shadowed by) a YAML merge key (<<); editing the text would not give the intended "
                    "data, left as is",
                    loc,
                    wl.ref,
                )
            )
            wl.blocked = True
            continue
        _path_node, via_alias = find(root, paths[0], pd.doc.aliased)
        if via_alias:
            wl.diagnostics.append(
                make(
                    "DRA210",
                    f"container {container.name!r}: {name} sits inside an anchored block that is aliased; left as is",
                    loc,
                    wl.ref,
                )
            )
            wl.blocked = True
            continue
        container.demands.append(GpuDemand(name, distinct.pop() or 0, paths, line))
