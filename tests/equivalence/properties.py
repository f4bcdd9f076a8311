"""The properties a migration must keep (issue #19), checked on one case: a golden, or a synthetic input run
in-process. Each check returns the differences it found; an empty list means the property holds.

* node-set: the nodes a migrated pod fits on, before (device plugin) and after (DRA, through the simulator);
* container-devices: devices each container can use, before (its limits) and after (the requests it
  references, on every node and for every firstAvailable alternative). App containers and sidecars must see
  exactly their count; a plain init container at least its count (issue #19 class 1: an init container may
  reuse an app request that holds more);
* pod-demand: the kubelet's effective demand before, the devices the pod's claims hold together after;
* spread-domains: for DoNotSchedule topologySpreadConstraints, the topologyKey values of the nodes counted
  for the pod (nodeAffinityPolicy, nodeTaintsPolicy), before and after;
* shared-claims: all pods referencing one named ResourceClaim fit on one node together, and no more clients
  share its devices than the device plugin config allowed per GPU (replicas; 1 without a sharing config);
* refusal: a refused workload (an error naming it, or a documented "left as is") is byte-identical, a
  migrated one is not.

Scope, the oracle's one modelling assumption: nodes where `nvidia.com/gpu` is a MIG slice (single strategy,
GKE partitions) count for a pod only if its node selection asks for a MIG-slicing label (a NotIn or
DoesNotExist keeps a pod away from some slices; it does not say the pod runs on slices), and sharing nodes
(time-slicing, MPS, GKE sharing pools) only if it names a sharing label or requests a `.shared` resource
(renamed sharing nodes: only if it requests a `.shared` resource, as no other pod ran there). A repository
that does not say that a pod runs on slices or replicas is migrated to whole devices by design (DRA508), so
on those nodes the two sides are not comparable. Nodes where the device plugin refused the pod at admission
(more than one shared replica per container under failRequestsGreaterThanOne) are left out too: the pod never
ran there, so there is nothing to keep (issue #19 asks that it is reported). Both sides are restricted to the
same nodes.

Opt-ins are honoured: containers that asked to share a request (dra-migrate.io/share-within-pod: "true" or
--share-within-pod) are not held to the node set, their own count or the pod demand: they asked for fewer GPUs.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from dra_migrate.simulate.allocator import AllocationResult
from dra_migrate.simulate.cluster import ClusterState, place_replicas
from tests.equivalence import after as A
from tests.equivalence import before as B
from tests.equivalence import cluster as C
from tests.equivalence.manifests import (
    BadCount,
    Diagnostic,
    Document,
    Key,
    KindRule,
    Obj,
    PathT,
    PodTemplate,
    at,
    documents,
    dp_limits,
    foreign_tags,
    key_of,
    kind_rules,
    mapping,
    parse_diagnostics,
    pod_templates,
    requests_dp,
)
from tests.equivalence.nodematch import pod_matches_node, required_terms, untolerated
from tests.equivalence.sharing import Configs, find_configs

PROPERTIES = ("node-set", "container-devices", "pod-demand", "spread-domains", "shared-claims", "refusal")

# Diagnostics that document a workload left as it was without being an error (README: kinds, sharing,
# bridge mode, already DRA-backed, the skip annotation, a kustomize patch file).
LEFT_AS_IS = re.compile(r"left as is|\(not rewritten\)|as it is\b|still needs a rewrite|opts? out|left untouched|"
                        r"; not migrated\b")

SLICING_KEYS = re.compile(r"^(nvidia\.com/mig\.strategy|cloud\.google\.com/gke-gpu-partition-size|"
                          r"nvidia\.com/gpu\.(multiprocessors|slices\..*|engines\..*))$")
SHARING_KEYS = re.compile(r"^(nvidia\.com/(gpu|mig-[^/]+)\.(sharing-strategy|replicas)|nvidia\.com/mps\.capable|"
                          r"nvidia\.com/device-plugin\.config|cloud\.google\.com/gke-gpu-sharing-strategy|"
                          r"cloud\.google\.com/gke-max-shared-clients-per-gpu)$")
DP_CONFIG_LABEL = "nvidia.com/device-plugin.config"
UNKNOWN_CONFIG = C.Sharing("time-slicing", {C.GPU: 4})  # a selected config the case does not hold


# --- the case --------------------------------------------------------------------------------------------------

@dataclass
class Case:
    name: str
    inputs: dict[str, bytes]
    outputs: dict[str, bytes]
    diagnostics_text: str
    args: dict[str, Any] = field(default_factory=dict)
    base: Path | None = None  # where args' relative paths point

    @staticmethod
    def golden(path: Path) -> Case:
        args = json.loads((path / "args.json").read_text()) if (path / "args.json").exists() else {}
        # args "paths": a run on some of the inputs; the others are the repository around it, not migrated
        named = args.get("paths")

        def part(name: str) -> bool:
            return not isinstance(named, list) or not name.startswith("input") or name in named

        return Case(
            path.name,
            {p.name: p.read_bytes() for p in sorted(path.glob("input*")) if p.is_file() and part(p.name)},
            {p.name: p.read_bytes() for p in sorted((path / "expected").iterdir()) if p.is_file() and part(p.name)},
            (path / "diagnostics.txt").read_text(),
            args,
            path,
        )

    @cached_property
    def rules(self) -> tuple[KindRule, ...]:
        dirs = tuple((self.base or Path(".")) / str(d) for d in self.args.get("rules", []))
        return kind_rules(dirs)

    @cached_property
    def diagnostics(self) -> list[Diagnostic]:
        return parse_diagnostics(self.diagnostics_text)

    @cached_property
    def before_docs(self) -> list[Document]:
        return [d for n, data in self.inputs.items() for d in documents(n, data)]

    @cached_property
    def after_docs(self) -> list[Document]:
        return [d for n, data in self.outputs.items() for d in documents(n, data)]

    @cached_property
    def after_objects(self) -> dict[tuple[str, str, str], Obj]:
        """(kind, namespace, name) -> object, over every output file."""
        return {key_of(o): o for d in self.after_docs for o in d.objects}

    def claim_objects(self, namespace: str) -> dict[tuple[str, str], Obj]:
        return {(k, n): o for (k, ns, n), o in self.after_objects.items()
                if k in ("ResourceClaimTemplate", "ResourceClaim") and ns == namespace}

    @cached_property
    def device_classes(self) -> dict[str, Obj]:
        return {n: o for (k, _ns, n), o in self.after_objects.items() if k == "DeviceClass"}

    @cached_property
    def configs(self) -> Configs:
        files = {}
        for f in self.args.get("sharing_configs", []):
            p = (self.base or Path(".")) / str(f)
            files[p.name] = p.read_text(encoding="utf-8")
        docs = list(self.before_docs)
        if isinstance(self.args.get("paths"), list) and self.base is not None:
            # a run on some inputs reads the device plugin configs of the repository around them too
            docs += [d for f in sorted(self.base.glob("input*")) if f.is_file() and f.name not in self.inputs
                     for d in documents(f.name, f.read_bytes())]
        return find_configs([(self.laid_out(d.file), o) for d in docs for o in d.objects], files)

    def laid_out(self, file: str) -> str:
        """Where the run saw an input file (args.json "layout" places inputs in a directory tree)."""
        return str(dict(self.args.get("layout") or {}).get(file, file))

    @cached_property
    def workloads(self) -> list[Workload]:
        after_by_file: dict[tuple[str, Key], tuple[Document, Obj]] = {}
        for d in self.after_docs:
            for o in d.objects:
                after_by_file[(d.file, key_of(o))] = (d, o)
        out = []
        for d in self.before_docs:
            for o in d.objects:
                specs, bare = pod_templates(o, self.rules)
                gpu = [s for s in specs if any(requests_dp(c) for _r, c in s.containers(o))]
                bare_gpu = [p for p in bare if requests_dp(at(o, p))]
                if not gpu and not bare_gpu:
                    continue
                hit = after_by_file.get((d.file, key_of(o)))
                out.append(Workload(self, d, o, hit[0] if hit else None, hit[1] if hit else None, gpu, bare_gpu))
        return out

    @cached_property
    def pods(self) -> list[Pod]:
        return [p for w in self.workloads for p in w.pods]

    @cached_property
    def migrated(self) -> list[Pod]:
        return [p for p in self.pods if p.migrated]

    @cached_property
    def cluster(self) -> C.Cluster:
        return C.with_extras(self._extra_nodes())

    def _extra_nodes(self) -> list[C.SynthNode]:
        keys: dict[str, C.Sharing | None] = {k: c.sharing for k, c in self.configs.by_key.items()}
        for p in self.pods:
            for value in selected_values(p.before_spec, DP_CONFIG_LABEL):
                keys.setdefault(value, UNKNOWN_CONFIG)
        extra = [n for k, s in sorted(keys.items(), key=lambda kv: kv[0]) for n in C.config_nodes(k, s)]
        base = C.base_nodes()
        known = {n.name for n in (*base, *extra)}
        for p in self.pods:
            preset = p.before_spec.get("nodeName")
            if not preset or preset in known:
                continue
            loose = {k: v for k, v in p.before_spec.items() if k != "nodeName"}
            host = next((n for n in (*base, *extra) if B.fits(loose, p.before_containers, n)), None)
            if host is not None:
                extra.append(C.renamed(host, str(preset)))
                known.add(str(preset))
        return extra


@dataclass
class Workload:
    case: Case
    doc: Document
    obj: Obj
    after_doc: Document | None
    after_obj: Obj | None
    templates: list[PodTemplate]
    bare: list[PathT]

    @property
    def key(self) -> Key:
        return key_of(self.obj)

    @property
    def label(self) -> str:
        kind, ns, name = self.key
        return f"{self.doc.file}:{kind}/{ns + '/' if ns else ''}{name}"

    @cached_property
    def diagnostics(self) -> list[Diagnostic]:
        return [d for d in self.case.diagnostics if d.file == self.doc.file and d.names(self.key)]

    @cached_property
    def file_errors(self) -> list[Diagnostic]:
        return [d for d in self.case.diagnostics if d.file == self.doc.file and d.obj is None
                and d.severity == "error"]

    @cached_property
    def pods(self) -> list[Pod]:
        return [Pod(self, t) for t in self.templates]

    def replicas(self, path: PathT) -> int:
        """Pods a controller runs from the pod spec at `path` at once (DaemonSets: see shared_claims)."""
        kind = self.obj.get("kind")
        spec = mapping(self.obj.get("spec"))
        if kind == "Pod":
            return 1
        if kind in ("Job",):
            return int(spec.get("parallelism", 1) or 1)
        if kind == "CronJob":
            job = mapping(mapping(spec.get("jobTemplate")).get("spec"))
            return int(job.get("parallelism", 1) or 1)
        for i in range(len(path), 0, -1):  # nearest enclosing `replicas` (Deployment, CRD replica specs)
            node = at(self.obj, path[:i])
            if isinstance(node, dict) and isinstance(node.get("replicas"), int):
                return int(node["replicas"])
        return 1


@dataclass
class Pod:
    workload: Workload
    template: PodTemplate

    @property
    def id(self) -> str:
        return f"{self.workload.label}@{'.'.join(map(str, self.template.path))}"

    @property
    def before_spec(self) -> Obj:
        return self.template.spec

    @cached_property
    def before_containers(self) -> list[tuple[str, str, dict[str, int]]]:
        out = []
        for role, c in self.template.containers(self.workload.obj):
            try:
                limits = dp_limits(c)
            except BadCount:
                limits = {}
            out.append((role, str(c.get("name")), limits))
        return out

    @cached_property
    def valid_counts(self) -> bool:
        try:
            for _role, c in self.template.containers(self.workload.obj):
                dp_limits(c)
        except BadCount:
            return False
        return True

    @cached_property
    def after_template(self) -> PodTemplate | None:
        obj = self.workload.after_obj
        if obj is None:
            return None
        try:
            spec = at(obj, self.template.path)
        except (KeyError, IndexError, TypeError):
            return None
        if not isinstance(spec, dict):
            return None
        return PodTemplate(self.template.path, spec, list(self.template.extra_containers))

    @property
    def after_spec(self) -> Obj:
        assert self.after_template is not None
        return self.after_template.spec

    @cached_property
    def after_containers(self) -> list[tuple[str, Obj]]:
        assert self.after_template is not None and self.workload.after_obj is not None
        return self.after_template.containers(self.workload.after_obj)

    @property
    def namespace(self) -> str:
        return self.workload.key[1]

    @cached_property
    def claims(self) -> tuple[dict[str, A.ClaimSource], list[str]]:
        return A.new_claims(self.before_spec, self.after_spec, self.workload.case.claim_objects(self.namespace))

    @cached_property
    def migrated(self) -> bool:
        """This GPU pod spec was rewritten (the properties then say whether it kept its meaning)."""
        if self.after_template is None or not self.valid_counts or not B.effective_demand(self.before_containers):
            return False
        if self.workload.doc.text == (self.workload.after_doc.text if self.workload.after_doc else None):
            return False
        return self.after_spec != self.before_spec

    @cached_property
    def opted_to_share(self) -> bool:
        """The workload or its pod template asked that containers share a request (README: sharing)."""
        if self.workload.case.args.get("share_within_pod"):
            return True
        path, obj = self.template.path, self.workload.obj
        metas = [mapping(obj.get("metadata"))]
        if path and path[-1] == "spec":
            metas.append(mapping(mapping(at(obj, path[:-1])).get("metadata")))
        return any(str(mapping(m.get("annotations")).get("dra-migrate.io/share-within-pod")).lower() == "true"
                   for m in metas)

    # --- both sides on the cluster ---

    @cached_property
    def in_scope(self) -> list[C.SynthNode]:
        """The nodes both sides are compared on (module docstring: scope)."""
        slicing, sharing = names_slicing(self.before_spec), names_sharing(self.before_spec, self.before_containers)
        renamed = any(r.endswith(".shared") for _role, _n, lim in self.before_containers for r in lim)
        out = []
        for n in self.workload.case.cluster.nodes:
            if (n.sliced and not slicing) or (n.sharing is not None and not sharing):
                continue
            if n.sharing is not None and n.sharing.rename and not renamed:
                continue  # plain-resource pods never ran on a renamed node
            if B.refused_at_admission(self.before_containers, n):
                continue  # the pod never ran there: nothing to keep
            out.append(n)
        return out

    @cached_property
    def before_nodes(self) -> set[str]:
        return {n.name for n in self.in_scope if B.fits(self.before_spec, self.before_containers, n)}

    @cached_property
    def after_run(self) -> tuple[dict[str, AllocationResult], list[str]]:
        """(node -> allocation) where the migrated pod fits, and the problems that stop the comparison."""
        claims, problems = self.claims
        if problems:
            return {}, problems
        left = [(r, str(c.get("name")), dp_limits(c)) for r, c in self.after_containers if requests_dp(c)]
        if not claims:
            what = "still requests device plugin resources" if left else "requests no devices any more"
            return {}, [f"rewritten, but it has no new claim and {what}"]
        case = self.workload.case
        spec = A.without_old_claims(self.before_spec, self.after_spec)
        fits, error = A.simulate(spec, claims, case.claim_objects(self.namespace), case.cluster, case.device_classes)
        if error is not None:
            return {}, [f"scheduling aborts: {error}"]
        if spec.get("nodeName") and claims:
            # The scheduler is bypassed, and only the scheduler allocates claims (scheduling-semantics §2).
            fits = {}
        tolerations = B.tolerations(spec, left)
        scope = {n.name: n for n in self.in_scope}
        effects = ("NoExecute",) if spec.get("nodeName") else ("NoSchedule", "NoExecute")
        kept = {name: r for name, r in fits.items()
                if name in scope and not untolerated(scope[name].taints, tolerations, effects)}
        return kept, []

    @property
    def after_nodes(self) -> set[str]:
        return set(self.after_run[0])

    def resources_of(self, node: str, devices: set[str]) -> Counter[str]:
        n = self.workload.case.cluster.by_name[node]
        return Counter(n.device_resource.get(d, f"?{d}") for d in devices)


# --- helpers on pod specs -----------------------------------------------------------------------------------

def _selection(spec: Mapping[str, Any], positive: bool = False) -> Iterator[tuple[str, list[str]]]:
    """(label key, values) of the pod's nodeSelector and required node affinity; `positive`: only the terms that
    ask for a label (nodeSelector, In, Exists, Gt, Lt), not those that keep a pod away from it (NotIn,
    DoesNotExist: they do not say the pod runs where the label is)."""
    for k, v in (spec.get("nodeSelector") or {}).items():
        yield str(k), [str(v)]
    for term in required_terms(spec) or []:
        for e in term.get("matchExpressions") or []:
            if isinstance(e, dict) and not (positive and e.get("operator") in ("NotIn", "DoesNotExist")):
                yield str(e.get("key")), [str(v) for v in e.get("values") or []]


def selected_values(spec: Mapping[str, Any], key: str) -> set[str]:
    return {v for k, values in _selection(spec) if k == key for v in values}


def names_slicing(spec: Mapping[str, Any]) -> bool:
    return any(SLICING_KEYS.match(k) or (k.endswith(".product") and any("-MIG-" in v for v in vs))
               for k, vs in _selection(spec, positive=True))


def names_sharing(spec: Mapping[str, Any], containers: B.Containers) -> bool:
    if any(r.endswith(".shared") for _role, _n, lim in containers for r in lim):
        return True
    return any(SHARING_KEYS.match(k) or (k.endswith(".product") and any(v.endswith("-SHARED") for v in vs))
               for k, vs in _selection(spec, positive=True))


def _counter(c: Mapping[str, int]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(c.items()) if v) or "none"


# --- the properties --------------------------------------------------------------------------------------------

def node_set(case: Case) -> list[str]:
    out: list[str] = []
    for p in case.migrated:
        if p.opted_to_share:
            continue
        got, problems = p.after_run
        if problems:
            out.extend(f"{p.id}: {x}" for x in problems)
            continue
        want = p.before_nodes
        if want != set(got):
            out.append(f"{p.id}: only before {sorted(want - set(got))}, only after {sorted(set(got) - want)}")
    return out


def container_devices(case: Case) -> list[str]:
    out: list[str] = []
    for p in case.migrated:
        if p.opted_to_share:
            continue
        claims, problems = p.claims
        if problems:
            out.extend(f"{p.id}: {x}" for x in problems)
            continue
        fits = p.after_run[0]
        before = {(role, name): lim for role, name, lim in p.before_containers}
        for role, c in p.after_containers:
            name = str(c.get("name"))
            want = before.get((role, name), {})
            used = A.refs(c, claims)
            need = sum(want.values())
            counts = A.static_counts(used, claims)
            if counts is not None and not all(n >= need if role == "init" else n == need for n in counts):
                rel = "at least " if role == "init" else ""
                out.append(f"{p.id}: {role} container {name!r} had {need} device(s), now its requests hold "
                           f"{sorted(counts)} (must be {rel}{need})")
                continue
            for node, result in sorted(fits.items()):
                if node not in p.before_nodes:
                    continue  # the node-set property reports it; resource names differ there anyway
                got = p.resources_of(node, A.devices_used(result, used))
                bad = (any(got[r] < n for r, n in want.items()) if role == "init" else got != Counter(want))
                if bad:
                    out.append(f"{p.id}: {role} container {name!r} on {node}: {_counter(want)} before, "
                               f"{_counter(got)} after")
                    break
    return out


def pod_demand(case: Case) -> list[str]:
    out: list[str] = []
    for p in case.migrated:
        if p.opted_to_share:
            continue
        claims, problems = p.claims
        if problems:
            out.extend(f"{p.id}: {x}" for x in problems)
            continue
        want = B.effective_demand(p.before_containers)
        every: list[tuple[str, str | None]] = [(name, None) for name in claims]
        counts = A.static_counts(every, claims)
        if counts is not None and counts != {sum(want.values())}:
            out.append(f"{p.id}: effective demand {_counter(want)} before, the pod's claims hold {sorted(counts)} "
                       "device(s)")
            continue
        for node, result in sorted(p.after_run[0].items()):
            if node not in p.before_nodes:
                continue
            got = p.resources_of(node, A.devices_used(result, every))
            if got != want:
                out.append(f"{p.id} on {node}: effective demand {_counter(want)} before, claims hold "
                           f"{_counter(got)}")
                break
    return out


def _constraints(spec: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [c for c in spec.get("topologySpreadConstraints") or []
            if isinstance(c, dict) and c.get("whenUnsatisfiable", "DoNotSchedule") == "DoNotSchedule"]


def domains(spec: Mapping[str, Any], constraint: Mapping[str, Any], tolerations: list[Any],
            cluster: C.Cluster) -> set[str]:
    """Values of topologyKey over the nodes the scheduler counts for the pod (scheduling-semantics §3)."""
    key = str(constraint.get("topologyKey"))
    honor_affinity = constraint.get("nodeAffinityPolicy", "Honor") != "Ignore"
    honor_taints = constraint.get("nodeTaintsPolicy", "Ignore") == "Honor"
    out = set()
    for n in cluster.nodes:
        if key not in n.labels:
            continue
        if honor_affinity and not pod_matches_node(spec, n.labels, n.name):
            continue
        if honor_taints and untolerated(n.taints, tolerations):
            continue
        out.add(n.labels[key])
    return out


def has_spread(p: Pod) -> bool:
    return bool(_constraints(p.before_spec))


def spread_domains(case: Case) -> list[str]:
    out: list[str] = []
    for p in case.migrated:
        before_c, after_c = _constraints(p.before_spec), _constraints(p.after_spec)
        if len(before_c) != len(after_c):
            out.append(f"{p.id}: {len(before_c)} DoNotSchedule spread constraint(s) before, {len(after_c)} after")
            continue
        left = [(r, str(c.get("name")), dp_limits(c)) for r, c in p.after_containers if requests_dp(c)]
        for bc, ac in zip(before_c, after_c, strict=True):
            want = domains(p.before_spec, bc, B.tolerations(p.before_spec, p.before_containers), case.cluster)
            got = domains(p.after_spec, ac, B.tolerations(p.after_spec, left), case.cluster)
            if want != got:
                out.append(f"{p.id}: topologyKey {bc.get('topologyKey')}: domains only before {sorted(want - got)}, "
                           f"only after {sorted(got - want)}")
    return out


def _allowed_replicas(case: Case, p: Pod) -> int:
    """Clients per GPU the device plugin allowed for what the pod requested (1 without sharing)."""
    demand = B.effective_demand(p.before_containers)
    selected = selected_values(p.before_spec, DP_CONFIG_LABEL)
    configs = case.configs.for_pod(next(iter(selected)) if len(selected) == 1 else None,
                                   case.laid_out(p.workload.doc.file))
    limits = []
    for resource in demand:
        allowed = [c.replicas(resource) for c in configs]
        if not allowed:
            allowed = [2 if resource.endswith(".shared") else 1]  # `.shared` means replicas >= 2
        limits.append(min(allowed))
    return min(limits) if limits else 1


def _clients_per_device(p: Pod, claim: str) -> int:
    """How many of one pod's containers use each device of `claim` at once: the most that reference one of its
    requests (a request's devices are distinct from every other request's; init containers run before)."""
    pod_claims = {n for n, src in p.claims[0].items() if src.kind == "ResourceClaim" and src.name == claim}
    per_request: Counter[str] = Counter()
    for role, c in p.after_containers:
        if role == "init":
            continue
        refs = mapping(c.get("resources")).get("claims") or []
        for ref in {(str(r.get("name")), str(r.get("request", ""))) for r in refs if isinstance(r, dict)}:
            if ref[0] in pod_claims:
                per_request[ref[1]] += 1
    return max(per_request.values(), default=1)


def shared_claim_pods(case: Case) -> dict[tuple[str, str], list[Pod]]:
    """(namespace, ResourceClaim name) -> the migrated pods referencing it."""
    out: dict[tuple[str, str], list[Pod]] = {}
    for p in case.migrated:
        for src in p.claims[0].values():
            if src.kind == "ResourceClaim":
                out.setdefault((p.namespace, src.name), []).append(p)
    return out


def shared_claims(case: Case) -> list[str]:
    out: list[str] = []
    for (ns, name), pods in sorted(shared_claim_pods(case).items()):
        label = f"ResourceClaim {ns + '/' if ns else ''}{name}"
        clients, allowed, total = 0, [], 0
        for p in pods:
            n = p.workload.replicas(p.template.path)
            if p.workload.obj.get("kind") == "DaemonSet":
                n = max(len(p.before_nodes), 2)  # one pod per node: a claim on one node cannot serve them
                out.append(f"{label}: DaemonSet {p.workload.label} runs a pod per node")
            total += n
            clients += n * _clients_per_device(p, name)
            allowed.append(_allowed_replicas(case, p))
        if clients > min(allowed):
            out.append(f"{label}: {clients} client(s) share its device(s), the device plugin allowed "
                       f"{min(allowed)} per GPU")
        for p in pods:  # (the placement below models resources and node selection, not inter-pod rules)
            if p.workload.replicas(p.template.path) > 1:
                out.extend(f"{label}: {p.id}: its pods cannot all run on the claim's one node: {why}"
                           for why in _kept_apart(p.before_spec))
        state = ClusterState()
        placed = 0
        for p in pods:
            claims, problems = p.claims
            if problems:
                out.extend(f"{p.id}: {x}" for x in problems)
                break
            spec = A.without_old_claims(p.before_spec, p.after_spec)
            objs = case.claim_objects(p.namespace)
            report = place_replicas(
                p.workload.replicas(p.template.path), spec,
                {n: o for (k, n), o in objs.items() if k == "ResourceClaimTemplate"},
                {n: o for (k, n), o in objs.items() if k == "ResourceClaim"},
                case.cluster.inventory, state, allocator=A.allocator(case.cluster, case.device_classes))
            placed += report.fit
            if report.failure is not None:
                why = report.failure.error or "no node has room beside the claim"
                out.append(f"{label}: only {placed} of {total} pod(s) fit on its node ({p.id}: {why})")
                break
    return out


def _kept_apart(spec: Mapping[str, Any]) -> list[str]:
    """What keeps two pods of one template off one node (kube-scheduler filters InterPodAffinity,
    PodTopologySpread, NodePorts), read from the pod spec independently of the compiler."""
    out = []
    anti = ((spec.get("affinity") or {}).get("podAntiAffinity") or {})
    if anti.get("requiredDuringSchedulingIgnoredDuringExecution"):
        out.append("required pod anti-affinity")
    if any(c.get("whenUnsatisfiable", "DoNotSchedule") == "DoNotSchedule"
           for c in spec.get("topologySpreadConstraints") or []):
        out.append("a DoNotSchedule topology spread constraint")
    ports = [p for k in ("initContainers", "containers") for c in spec.get(k) or [] for p in c.get("ports") or []]
    if any(p.get("hostPort") or (spec.get("hostNetwork") and p.get("containerPort")) for p in ports):
        out.append("a host port")
    return out


TEMPLATE_CONTROL = re.compile(r"\{\{-?\s*(if|else|end|range|with|define|template|include|block)\b")


def must_refuse(w: Workload) -> list[str]:
    """Why the API server would reject the workload, or why it is a template (issue #19 class 6)."""
    why = [f"YAML tag {t}" for t in foreign_tags(w.doc.text)]
    meta = w.obj.get("metadata")
    if isinstance(meta, dict) and "name" in meta and not isinstance(meta["name"], str):
        why.append("metadata.name is not a string")
    for t in w.templates:
        for _role, c in t.containers(w.obj):
            if "name" in c and not isinstance(c["name"], str):
                why.append("a container name is not a string")
            try:
                dp_limits(c)
            except BadCount as exc:
                why.append(f"GPU count {exc} is not a whole number")
    for p in w.bare:
        try:
            dp_limits(at(w.obj, p))
        except BadCount as exc:
            why.append(f"GPU count {exc} is not a whole number")
    return why


def refusal(case: Case) -> list[str]:
    out: list[str] = []
    bridge = case.args.get("strategy") == "extended-resource"
    # an error on no input file (a broken --rules pack: DRA402) stops the whole run, so it refuses every workload
    inputs = {d.file for d in case.before_docs}
    run_errors = [d for d in case.diagnostics if d.severity == "error" and d.file not in inputs]
    for w in case.workloads:
        # an error on the document's lines, or on the whole file (line 0: too large, not UTF-8)
        inside = [d for d in w.file_errors if d.line == 0 or w.doc.holds_line(d.line)]
        # an error on the document's lines naming an object made for the workload (its invalid claim template:
        # DRA603)
        inside += [d for d in case.diagnostics if d.file == w.doc.file and d.obj is not None and not d.names(w.key)
                   and d.severity == "error" and w.doc.holds_line(d.line)]
        # a diagnostic on the document's lines naming no object (a kustomize patch file: DRA701)
        inside_notes = [d for d in w.case.diagnostics if d.file == w.doc.file and d.obj is None
                        and w.doc.holds_line(d.line)]
        elsewhere = [d for d in w.file_errors if not w.doc.holds_line(d.line)]
        errors = [d for d in w.diagnostics if d.severity == "error"] + inside + run_errors
        documented = [d for d in w.diagnostics + inside_notes if LEFT_AS_IS.search(d.message)]
        if w.after_doc is None:
            out.append(f"{w.label}: missing from the output")
            continue
        same = w.after_doc.text == w.doc.text
        reasons = must_refuse(w)
        if reasons and not (errors and same):
            state = "byte-identical" if same else "changed"
            out.append(f"{w.label}: must be refused with an error ({'; '.join(reasons)}); it is {state}"
                       f"{'' if errors else ' and no error names it'}")
        elif errors and not same:
            out.append(f"{w.label}: {errors[0].code} refuses it, but its document changed")
        elif documented and not same and not errors:
            out.append(f"{w.label}: {documented[0].code} says it is left as is, but its document changed")
        elif same and not (errors or documented or bridge):
            ambiguous = any(TEMPLATE_CONTROL.search(d.text) for d in case.before_docs if d.file == w.doc.file)
            if elsewhere and not ambiguous:
                out.append(f"{w.label}: left byte-identical for {elsewhere[0].code} at line {elsewhere[0].line}, "
                           "which is in another document (refuse the smallest unsafe unit)")
            elif not elsewhere:
                out.append(f"{w.label}: left byte-identical without an error or a documented refusal")
    return out


CHECKS = {
    "node-set": node_set,
    "container-devices": container_devices,
    "pod-demand": pod_demand,
    "spread-domains": spread_domains,
    "shared-claims": shared_claims,
    "refusal": refusal,
}


def applies(case: Case, prop: str) -> bool:
    if prop == "refusal":
        return bool(case.workloads)
    if prop == "spread-domains":
        return any(has_spread(p) for p in case.migrated)
    if prop == "shared-claims":
        return bool(shared_claim_pods(case))
    return bool(case.migrated)


def applies_to_inputs(case: Case, prop: str) -> bool:
    """`applies` judged from the inputs alone (a synthetic case before it is migrated)."""
    pods = [p for p in case.pods if p.valid_counts and B.effective_demand(p.before_containers)]
    if prop == "refusal":
        return bool(case.workloads)
    if prop == "spread-domains":
        return any(has_spread(p) for p in pods)
    if prop == "shared-claims":
        return bool(pods) and any(c.sharing is not None for c in case.configs.by_key.values())
    return bool(pods)


def check(case: Case, prop: str) -> list[str]:
    return CHECKS[prop](case)


CASES_DIR = Path(__file__).parent / "cases"


def unmigrated(path: Path) -> Case:
    """A synthetic case's inputs only (what can be known before running the migration)."""
    from tests.golden_runner import case_args

    inputs = {p.name: p.read_bytes() for p in sorted(path.glob("input*")) if p.is_file()}
    return Case(f"synthetic/{path.name}", inputs, {}, "", case_args(path), path)


def synthetic(path: Path) -> Case:
    """A synthetic input case (tests/equivalence/cases/<name>), migrated in-process like a golden."""
    import tempfile

    from tests.golden_runner import case_args, run_case

    with tempfile.TemporaryDirectory(prefix="dra-oracle-") as tmp:
        files, diags, _code = run_case(path, Path(tmp))
    inputs = {p.name: p.read_bytes() for p in sorted(path.glob("input*")) if p.is_file()}
    return Case(f"synthetic/{path.name}", inputs, files, diags, case_args(path), path)
