"""Scheduling lints over everything a run saw (DRA8xx), after migration, across files.

They look at the final objects: what `migrate` emitted and the DRA objects already in the repository
(ResourceClaimTemplates, ResourceClaims, DeviceClasses), which are linted but never changed:

* DRA802 a Deployment whose claim template uses firstAvailable and whose rolling update can surge: the
  old pod still holds the preferred device while the new one is scheduled, so the new one gets a fallback;
* DRA803 a selector reads a gpu.nvidia.com attribute the NVIDIA driver does not publish (`index`, `minor`
  were removed in v25.8; anything outside the bundled device fixture's attribute set);
* DRA801 (existing objects; emitted ones are checked before writing) no known NVIDIA device shape matches a
  selector; DRA806 an existing selector does not compile or fails on a known device shape;
* DRA804 a claim asks for more than 32 devices (the allocator's per-claim limit);
* DRA805 a named ResourceClaim shared by more pods than `status.reservedFor` can hold.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dra_migrate.cel import verdicts
from dra_migrate.cel.refs import referenced
from dra_migrate.check.claim_requests import min_devices, requests_of, selectors
from dra_migrate.diagnostics.model import Diagnostic, Location, make
from dra_migrate.frontend.replicas import replica_count, surge_and_unavailable
from dra_migrate.ruleset.kinds import KindRuleSet, resolve

NVIDIA_DOMAIN = "gpu.nvidia.com"
MAX_DEVICES_PER_CLAIM = 32
# Attributes older driver releases published and v25.8 removed (shared/reference/nvidia.md §A2).
REMOVED_ATTRIBUTES = {"index": "v25.8.0", "minor": "v25.8.0", "parentIndex": "v25.8.0"}
CLAIM_KINDS = ("ResourceClaimTemplate", "ResourceClaim")


@dataclass(frozen=True, slots=True)
class SeenObject:
    obj: Mapping[str, Any]
    file: str
    line: int
    emitted: bool = False  # created by this run (already checked before writing)

    @property
    def kind(self) -> str:
        return str(self.obj.get("kind", ""))

    @property
    def namespace(self) -> str:
        meta = self.obj.get("metadata")
        return str(meta.get("namespace") or "") if isinstance(meta, Mapping) else ""

    @property
    def name(self) -> str:
        meta = self.obj.get("metadata")
        return str(meta.get("name") or "") if isinstance(meta, Mapping) else ""

    @property
    def ref(self) -> str:
        ns = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind}/{ns}{self.name}"

    @property
    def location(self) -> Location:
        return Location(self.file, self.line, 1)


@functools.cache
def published_names() -> frozenset[str]:
    """gpu.nvidia.com attribute and capacity names in the bundled NVIDIA device fixture (remembered across
    runs with the selector verdicts: reading the fixture costs a pre-commit run ~60 ms)."""
    def compute() -> list[str]:
        # lazy: start-up (cel.devices: ~3 ms, only compute() needs it)
        # lazy: start-up (cel.devices: ~3 ms, only published_names() needs it)
        from dra_migrate.cel.devices import load_nvidia_devices

        names: set[str] = set()
        for device in load_nvidia_devices():
            names.update(device.attributes.get(NVIDIA_DOMAIN, {}))
            names.update(device.capacity.get(NVIDIA_DOMAIN, {}))
        return sorted(names)

    return frozenset(verdicts.derived("published-names", compute))


def _uses_first_available(obj: Mapping[str, Any]) -> bool:
    return any(isinstance(r.get("firstAvailable"), list) and r["firstAvailable"] for r in requests_of(obj))


def _selector_lints(seen: SeenObject) -> list[Diagnostic]:
    # lazy: start-up (check.prewrite: ~6 ms, only _selector_lints() needs it)
    from dra_migrate.check.prewrite import check_selector

    out: list[Diagnostic] = []
    known = published_names()
    for device_class, expr in dict.fromkeys(selectors(seen.obj)):
        unknown = [n for what, d, n in referenced(expr) if d == NVIDIA_DOMAIN and n not in known]
        for name in dict.fromkeys(unknown):
            why = (
                f"removed in NVIDIA DRA driver {REMOVED_ATTRIBUTES[name]}"
                if name in REMOVED_ATTRIBUTES
                else "not in the attribute set the NVIDIA DRA driver publishes"
            )
            out.append(
                make(
                    "DRA803",
                    f"selector reads {NVIDIA_DOMAIN} attribute '{name}' ({why}): the lookup fails on "
                    f"every GPU and allocation aborts: {expr}",
                    seen.location,
                    seen.ref,
                    attribute=name,
                )
            )
        if unknown or seen.emitted or NVIDIA_DOMAIN not in expr:
            continue  # emitted selectors were checked before writing; other drivers are not known here
        problem = check_selector(device_class, expr)
        if problem is None:
            continue
        code, message = problem
        if code == "DRA801":
            out.append(make("DRA801", message, seen.location, seen.ref))
        else:
            out.append(
                make(
                    "DRA806",
                    message.replace("CEL selector", "existing CEL selector", 1),
                    seen.location,
                    seen.ref,
                )
            )
    return out


@dataclass(frozen=True, slots=True)
class _PodSpecRef:
    seen: SeenObject
    spec: Mapping[str, Any]
    replicas: int | None  # None: one per node (DaemonSet)


def _pod_specs(objects: Sequence[SeenObject], rules: KindRuleSet) -> list[_PodSpecRef]:
    out: list[_PodSpecRef] = []
    for seen in objects:
        rule = rules.lookup(str(seen.obj.get("apiVersion", "")), seen.kind)
        if rule is None:
            continue
        for spec_path in rule.pod_specs:
            for concrete, spec in resolve(seen.obj, spec_path):
                if isinstance(spec, Mapping):
                    n, source = replica_count(seen.obj, concrete)
                    out.append(_PodSpecRef(seen, spec, None if source == "daemonset" else n))
    return out


def lint_view(obj: Mapping[str, Any], rules: KindRuleSet) -> Mapping[str, Any] | None:
    """What the lints read of an object, so a run over a large repository keeps that, not every object:
    DRA objects whole; of a workload its identity, its Deployment strategy, each pod spec's `resourceClaims`
    and the replica counts beside each pod template; None for anything the lints ignore."""
    kind = str(obj.get("kind", ""))
    if kind in (*CLAIM_KINDS, "DeviceClass"):
        return obj
    rule = rules.lookup(str(obj.get("apiVersion", "")), kind)
    if rule is None:
        return None
    meta = obj.get("metadata")
    view: dict[str, Any] = {"apiVersion": obj.get("apiVersion"), "kind": obj.get("kind")}
    if isinstance(meta, Mapping):
        view["metadata"] = {k: meta[k] for k in ("name", "namespace") if k in meta}
    spec = obj.get("spec")
    if isinstance(spec, Mapping) and "strategy" in spec:
        view["spec"] = {"strategy": spec["strategy"]}
    for spec_path in rule.pod_specs:
        for concrete, pod_spec in resolve(obj, spec_path):
            if isinstance(pod_spec, Mapping):
                kept = {"resourceClaims": pod_spec["resourceClaims"]} if "resourceClaims" in pod_spec else {}
                _graft(view, obj, tuple(concrete), kept)
    return view


_REPLICA_KEYS = ("replicas", "parallelism")


def _graft(view: Any, source: Any, path: tuple[str | int, ...], value: Any) -> None:
    """Put `value` at `path` in `view`, building the containers on the way as `source` has them (lists
    padded with empty mappings); beside a pod template, its replica counts come along."""
    for i, seg in enumerate(path[:-1]):
        source = source[seg]
        nxt: Any = {} if isinstance(source, Mapping) else [{} for _ in source]
        if isinstance(view, dict):
            view = view.setdefault(seg, nxt)
        else:
            if not view[seg]:
                view[seg] = nxt
            view = view[seg]
        if isinstance(source, Mapping) and path[i + 1] == "template":
            for key in _REPLICA_KEYS:
                if key in source:
                    view[key] = source[key]
    view[path[-1]] = value


def _lookup(table: Mapping[tuple[str, str], SeenObject], ns: str, name: str) -> SeenObject | None:
    return table.get((ns, name)) or table.get(("", name))


def lint_objects(objects: Sequence[SeenObject], rules: KindRuleSet, target_version: str) -> list[Diagnostic]:
    # lazy: start-up (ruleset.features: ~5 ms, only lint_objects() needs it)
    from dra_migrate.ruleset.features import Target

    out: list[Diagnostic] = []
    templates: dict[tuple[str, str], SeenObject] = {}
    claims: dict[tuple[str, str], SeenObject] = {}
    for seen in objects:
        if seen.kind == "ResourceClaimTemplate":
            templates[(seen.namespace, seen.name)] = seen
        elif seen.kind == "ResourceClaim":
            claims[(seen.namespace, seen.name)] = seen
        if seen.kind in (*CLAIM_KINDS, "DeviceClass"):
            out.extend(_selector_lints(seen))
        if seen.kind in CLAIM_KINDS and not seen.emitted:
            n = min_devices(seen.obj)
            if n is not None and n > MAX_DEVICES_PER_CLAIM:
                out.append(
                    make(
                        "DRA804",
                        f"the claim asks for at least {n} devices; the allocator refuses more "
                        f"than {MAX_DEVICES_PER_CLAIM} per claim",
                        seen.location,
                        seen.ref,
                        devices=n,
                    )
                )

    sharers: dict[tuple[str, str], list[_PodSpecRef]] = {}
    for ps in _pod_specs(objects, rules):
        ns = ps.seen.namespace
        for rc in ps.spec.get("resourceClaims") or []:
            if not isinstance(rc, Mapping):
                continue
            if rc.get("resourceClaimName"):
                sharers.setdefault((ns, str(rc["resourceClaimName"])), []).append(ps)
            tmpl = _lookup(templates, ns, str(rc.get("resourceClaimTemplateName") or ""))
            if tmpl is None or ps.seen.kind != "Deployment" or not _uses_first_available(tmpl.obj):
                continue
            strategy = (ps.seen.obj.get("spec") or {}).get("strategy")
            fence = surge_and_unavailable(
                strategy if isinstance(strategy, Mapping) else None, ps.replicas or 1
            )
            if fence is not None and fence[0] > 0:
                out.append(
                    make(
                        "DRA802",
                        f"claim template {tmpl.name} uses firstAvailable and the rolling update can surge "
                        f"({fence[0]} extra pod(s)): while old pods still hold the preferred devices, new "
                        "pods get a fallback alternative and keep it; set strategy.rollingUpdate.maxSurge: 0 "
                        "or strategy type: Recreate",
                        ps.seen.location,
                        ps.seen.ref,
                        template=tmpl.name,
                        maxSurge=fence[0],
                    )
                )

    limit = Target(target_version).reserved_for_limit()
    for (ns, name), users in sorted(sharers.items()):
        if any(u.replicas is None for u in users):
            continue  # a DaemonSet: the number of nodes is not known here
        pods = sum(u.replicas or 0 for u in users)
        if pods <= limit:
            continue
        claim = _lookup(claims, ns, name)
        where = claim or users[0].seen
        refs = ", ".join(dict.fromkeys(u.seen.ref for u in users))
        out.append(
            make(
                "DRA805",
                f"resourceclaim {name} is shared by {pods} pods ({refs}); Kubernetes {target_version} lets "
                f"at most {limit} pods reserve one claim, the others stay Pending",
                where.location,
                where.ref,
                pods=pods,
                limit=limit,
            )
        )
    return out
