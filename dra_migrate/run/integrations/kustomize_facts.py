"""What kustomize makes of a workload (rules/kustomize.yaml, loaded by ruleset.kustomize): the merge key of each
list in a strategic merge, and the name-reference configuration its built-in table lacks for DRA claims."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from dra_migrate.ir import DocPath
from dra_migrate.ruleset.kinds import WILDCARD, KindRuleSet, resolve, split_api_version
from dra_migrate.ruleset.kustomize import facts
from dra_migrate.run.integrations.kustomize_merge import MergeKey, no_merge_keys

NAMEREF_HEADER = "# dra-migrate: kustomize name references for DRA claims"
CONTAINER_LISTS = ("containers", "initContainers", "ephemeralContainers")


def merge_keys_for(obj: Mapping[str, Any], rules: KindRuleSet) -> MergeKey:
    """The merge key of each list of `obj` as kustomize's strategic merge sees it."""
    f = facts()
    api, kind = str(obj.get("apiVersion", "")), str(obj.get("kind", ""))
    rule = rules.lookup(api, kind)
    if (api, kind) not in f.openapi_kinds or rule is None:
        return no_merge_keys
    specs = [tuple(p) for p in rule.pod_specs]

    def key(path: DocPath) -> str | None:
        for spec in specs:
            n = len(spec)
            if len(path) <= n or tuple(path[:n]) != spec:
                continue
            rest = path[n:]
            if len(rest) == 1:
                return f.pod_spec_keys.get(str(rest[0]))
            if len(rest) == 3 and rest[0] in CONTAINER_LISTS and isinstance(rest[1], int):
                return f.container_keys.get(str(rest[2]))
        return None

    return key


def name_reference_config(objects: Iterable[Mapping[str, Any]], rules: KindRuleSet) -> str:
    """The transformer configuration (YAML) that lets namePrefix/nameSuffix rename the pod fields that name
    a ResourceClaimTemplate or ResourceClaim, for the kinds of `objects` (the workloads of one
    kustomization), in every pod spec the kind rules know for them. A `*` of a rule path over a list is
    dropped (kustomize paths go through lists); over a map, each key the objects have is written out."""
    specs: dict[tuple[str, str], set[str]] = {}
    for obj in objects:
        rule = rules.lookup(str(obj.get("apiVersion", "")), str(obj.get("kind", "")))
        if rule is None:
            continue
        group, _version = split_api_version(str(obj.get("apiVersion", "")))
        paths = specs.setdefault((rule.kind, group), set())
        for spec in rule.pod_specs:
            paths.update(_kustomize_paths(obj, tuple(spec)))
    lines = [NAMEREF_HEADER, "# (listed under `configurations:`; the next run rewrites it from the workloads)",
             "nameReference:"]
    for kind, group, fld in facts().name_references:
        lines += [f"- kind: {kind}", f"  group: {group}", "  fieldSpecs:"]
        for (wkind, wgroup), paths in sorted(specs.items()):
            for p in sorted(paths):
                group_line = f", group: {wgroup}" if wgroup else ""
                lines.append(f"  - {{kind: {wkind}{group_line}, path: {p + '/' if p else ''}{fld}}}")
    return "\n".join(lines) + "\n"


def _kustomize_paths(obj: Mapping[str, Any], spec: tuple[str, ...]) -> set[str]:
    """The rule path `spec` as kustomize field paths: list wildcards dropped, map wildcards expanded."""
    if WILDCARD not in spec:
        return {"/".join(spec)}
    out: set[str] = set()
    lists_dropped = tuple(s for s in spec if s != WILDCARD)
    for concrete, _node in resolve(obj, spec):
        segs = [str(s) for s in concrete if not isinstance(s, int)]
        out.add("/".join(segs))
    if not out:
        out.add("/".join(lists_dropped))
    return out
