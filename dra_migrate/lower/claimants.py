"""The pod templates of a file that have (or get) a claim template of their own, and what each is for.

Read from the frontend's workloads (embedded objects included), the same way for the file being translated and
for the other files of its apply unit (integrations.unit_names), so both see the same identities and roles.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from dra_migrate.ir import PodTemplate, Workload
from dra_migrate.lower.names import Claimant, Existing, FileNames, NameKey, Scopes, UnitKey, compose, words
from dra_migrate.lower.names import resolve as resolve_names
from dra_migrate.ruleset.kinds import WILDCARD, KindRuleSet
from dra_migrate.source.plain import as_map

if TYPE_CHECKING:
    from dra_migrate.frontend.parsed import ParsedDocument

# Words of schema keys that say nothing about a template's role (`leaderWorkerTemplate.leaderTemplate.spec`
# is the `leader`; `headGroupSpec` the `head`).
_GENERIC = frozenset({"spec", "specs", "template", "templates", "pod", "pods", "container", "containers",
                      "group", "groups", "replica", "replicas"})
_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+")
# Fields that name an item of a list of pod templates (JobSet replicatedJobs, Volcano tasks, Argo templates:
# `name`; KubeRay workerGroupSpecs: `groupName`).
_ITEM_NAMES = ("name", "groupName")


def key_of(wl: Workload, pt: PodTemplate) -> NameKey:
    """Where a pod template is in its file: document, its object's line (an object inside a manifest string has
    paths of the string's own document, but the outer file's lines), the PodSpec's path."""
    return (wl.doc_index, wl.line, tuple(pt.path))


def file_claimants(
    documents: Iterable[ParsedDocument], rules: KindRuleSet, where: str
) -> tuple[list[Claimant], list[Existing]]:
    """The claimants and the ResourceClaimTemplates of a file's documents, as the frontend read them."""
    claimants: list[Claimant] = []
    existing: list[Existing] = []
    for pd in documents:
        data = pd.data
        items = data.get("items") if isinstance(data, dict) and data.get("kind") == "List" else None
        for obj in items if isinstance(items, list) else [data]:
            if isinstance(obj, dict) and obj.get("kind") == "ResourceClaimTemplate":
                meta = as_map(obj.get("metadata"))
                if meta.get("name"):
                    ns = meta.get("namespace")
                    existing.append(Existing(str(meta["name"]), ns if isinstance(ns, str) else None, where))
        for wl in pd.workloads:
            claimants.extend(_workload_claimants(wl, rules, where))
    return claimants, existing


def _workload_claimants(wl: Workload, rules: KindRuleSet, where: str) -> list[Claimant]:
    if wl.pods_run_in:
        return []  # a cluster-scoped kind's pod templates never get a claim template here (DRA140): no name
    found = [(pt, bool(pt.gpu_containers), frozenset(c.template for c in pt.pod_claims if c.template))
             for pt in wl.pod_templates]
    found = [f for f in found if f[1] or f[2]]
    rule = rules.lookup(wl.api_version, wl.kind)
    patterns = rule.pod_specs if rule is not None else ()
    roles = template_roles([_role_words(wl.data, _pattern(patterns, _relative(wl, pt)), _relative(wl, pt))
                            for pt, _g, _o in found])
    return [Claimant(key_of(wl, pt), wl.kind, wl.name or "workload", wl.namespace, role, where, gpu, owns)
            for (pt, gpu, owns), role in zip(found, roles, strict=True)]


def _relative(wl: Workload, pt: PodTemplate) -> tuple[Any, ...]:
    return tuple(pt.path[len(wl.item_path):])


def _pattern(patterns: Sequence[Sequence[str]], rel: Sequence[Any]) -> Sequence[str] | None:
    """The kind rule's PodSpec path that `rel` is an instance of."""
    for pattern in patterns:
        if len(pattern) == len(rel) and all(p in (WILDCARD, r) for p, r in zip(pattern, rel, strict=True)):
            return pattern
    return None


def _role_words(obj: Any, pattern: Sequence[str] | None, concrete: Sequence[Any]) -> list[str]:
    """What the pod template at `concrete` is within `obj`: the keys and item names that choose it.

    With the kind rule's `pattern`, a wildcard segment is a role (a map key like `Worker`, or a list item's
    name); the segment holding it is only the collection; other keys give their meaningful words. Without one
    (an object the rules reach otherwise), list indexes and the keys before them play those parts."""
    out: list[str] = []
    node = obj
    for i, seg in enumerate(concrete):
        child = _child(node, seg)
        chosen = pattern[i] == WILDCARD if pattern is not None else isinstance(seg, int)
        holder = (pattern[i + 1] == WILDCARD if pattern is not None else isinstance(_at(concrete, i + 1), int)) \
            if i + 1 < len(concrete) else False
        if chosen:
            out.append(_item_label(child, seg) if isinstance(seg, int) else str(seg))
        elif not holder:
            out.extend(w.lower() for w in _CAMEL.findall(str(seg)) if w.lower() not in _GENERIC)
        node = child
    return ["-".join(words(w)) for w in out if words(w)]


def _at(seq: Sequence[Any], i: int) -> Any:
    return seq[i] if i < len(seq) else None


def _child(node: Any, seg: Any) -> Any:
    if isinstance(node, dict):
        return node.get(seg)
    if isinstance(node, list) and isinstance(seg, int) and 0 <= seg < len(node):
        return node[seg]
    return None


def _item_label(item: Any, index: int) -> str:
    if isinstance(item, dict):
        for key in _ITEM_NAMES:
            if isinstance(item.get(key), str) and item[key]:
                return str(item[key])
        meta = item.get("metadata")
        if isinstance(meta, dict) and isinstance(meta.get("name"), str) and meta["name"]:
            return str(meta["name"])
    return str(index)


def template_roles(raw: list[list[str]]) -> list[tuple[str, ...]]:
    """The roles of a workload's claimant templates: nothing for its only one; else the words that tell them
    apart (the leading words they all share are dropped: `leader-worker` of an LWS)."""
    if len(raw) <= 1:
        return [()] * len(raw)
    k = 0
    while all(len(r) > k for r in raw) and len({r[k] for r in raw}) == 1:
        k += 1
    roles = [tuple(r[k:]) for r in raw]
    if len(set(roles)) < len(roles):
        roles = [tuple(r) for r in raw]
    if len(set(roles)) < len(roles):  # two templates the same words describe: their order tells them apart
        roles = [(*r, str(i)) for i, r in enumerate(roles)]
    return roles


def local_names(claimants: list[Claimant], existing: list[Existing], file: str, merged: bool) -> FileNames:
    """The names of a file's claimants resolved within the file alone (its apply unit holds no other file with
    claimants); `merged`: a build puts all of its objects in one namespace."""
    unit: UnitKey = ("file", file)

    def scopes(namespace: str | None) -> Scopes:
        return ((unit, "" if merged else namespace),)

    named = resolve_names([(c, scopes(c.namespace)) for c in claimants], [(e, scopes(e.namespace)) for e in existing])
    return {c.key: n for c, n in zip(claimants, named, strict=True)}


def fallback_name(wl: Workload, pt: PodTemplate) -> str:
    """The plain name of a GPU pod template the file's names do not hold (lower_workload called on its own)."""
    return compose(wl.name or "workload", *template_role(wl, pt), "gpu")


def template_role(wl: Workload, pt: PodTemplate) -> tuple[str, ...]:
    """What a GPU pod template is among its workload's GPU pod templates (empty for the only one)."""
    gpu = [t for t in wl.pod_templates if t.gpu_containers]
    raw = [_role_words(wl.data, None, _relative(wl, t)) for t in gpu]
    roles = dict(zip((id(t) for t in gpu), template_roles(raw), strict=True))
    return roles.get(id(pt), ())
