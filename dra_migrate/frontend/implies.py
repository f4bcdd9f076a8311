"""What a pod's node selection says about how the device plugin served its GPUs (MIG slice, shared replica).

Pure: the node selection in, a `NodeImplication` out, from the `implications` of rules/labels.yaml. Kubernetes
semantics: nodeSelector entries and the required node affinity are ANDed, the required nodeSelectorTerms are
ORed. Sharing and provider features count when *some* alternative selects such nodes (the pod may land there);
a MIG strategy counts only when *every* alternative pins it (only then is `nvidia.com/gpu` known to be read that
way on every node the pod may use).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dra_migrate.frontend.mig import MIG_STRATEGY_LABEL, profile_from_product
from dra_migrate.ir import ImpliedSharing, NodeImplication
from dra_migrate.ruleset.labels import Implication, LabelRules, load_label_rules

GPU = "nvidia.com/gpu"
SHARED_SUFFIX = "-SHARED"
REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
NONE = NodeImplication()


@dataclass(frozen=True, slots=True)
class _Req:
    key: str
    op: str
    values: tuple[str, ...]
    where: str

    def text(self) -> str:
        if self.where == "nodeSelector":
            return f"nodeSelector {self.key}={self.values[0]}"
        vals = f" [{', '.join(self.values)}]" if self.values else ""
        return f"{self.where} {self.key} {self.op}{vals}"


@dataclass(frozen=True, slots=True)
class _Found:
    resource: str
    sharing: str  # "" when the label implies no sharing
    replicas: int | None
    mig: str
    provider: str
    evidence: str


def _required_terms(affinity: dict[str, Any] | None) -> list[dict[str, Any]]:
    na = affinity.get("nodeAffinity") if isinstance(affinity, dict) else None
    req = na.get(REQUIRED) if isinstance(na, dict) else None
    terms = req.get("nodeSelectorTerms") if isinstance(req, dict) else None
    return [t for t in terms if isinstance(t, dict)] if isinstance(terms, list) else []


def _term_reqs(term: dict[str, Any], where: str) -> list[_Req]:
    out: list[_Req] = []
    for e in term.get("matchExpressions") or []:
        if isinstance(e, dict) and isinstance(e.get("key"), str):
            values = tuple(str(v) for v in e.get("values") or [])
            out.append(_Req(e["key"], str(e.get("operator", "")), values, where))
    return out


def _replicas(req: _Req) -> tuple[bool, int | None]:
    """(shared, replicas) for a replicas label requirement."""
    if req.op == "In":
        counts = [int(v) for v in req.values if v.strip().isdigit()]
        if counts and all(n > 1 for n in counts):
            return True, counts[0] if len(set(counts)) == 1 else None
        return False, None
    if req.op == "Gt" and len(req.values) == 1 and req.values[0].strip().isdigit():
        return int(req.values[0]) >= 1, None  # more than 1 client per device: shared, count unknown
    return False, None


def _found(imp: Implication, groups: dict[str, str], req: _Req) -> list[_Found]:
    resource = f"nvidia.com/mig-{groups['profile']}" if "profile" in groups else GPU
    evidence = req.text()
    values = req.values if req.op == "In" else ()
    implied: list[dict[str, str]] = []
    replicas: int | None = None
    if imp.value == "replicas":
        shared, replicas = _replicas(req)
        if shared:
            implied.append({"sharing": "shared"})
    for v in values:
        if imp.values and v in imp.values:
            implied.append(imp.values[v])
        if imp.value == "gfd-product":
            if v.endswith(SHARED_SUFFIX):
                implied.append({"sharing": "shared"})
            if "profile" not in groups and profile_from_product(v) is not None:
                implied.append({"mig": "single"})
    if imp.implies and (values or req.op == "Exists"):
        implied.append(imp.implies)
    out = [
        _Found(resource, i.get("sharing", ""), replicas, i.get("mig", ""), imp.provider, evidence) for i in implied
    ]
    if imp.provider and not out and req.op in ("In", "Exists"):
        out.append(_Found(resource, "", None, "", imp.provider, evidence))  # the label alone marks the pool
    return out


def _scan(reqs: list[_Req], rules: LabelRules) -> list[_Found]:
    out: list[_Found] = []
    for r in reqs:
        for imp in rules.implications:
            groups = imp.groups(r.key)
            if groups is not None:
                out.extend(_found(imp, groups, r))
    return out


def _pinned_mig_strategy(node_selector: dict[str, str], per_term: list[list[_Found]]) -> str | None:
    value = node_selector.get(MIG_STRATEGY_LABEL)
    if value in ("single", "mixed"):
        return value
    return None if not per_term else _common_mig(per_term)


def _common_mig(per_term: list[list[_Found]]) -> str | None:
    """The MIG strategy every ORed term pins (single through the strategy label or a -MIG- product)."""
    pinned: set[str] = set()
    for found in per_term:
        migs = {f.mig for f in found if f.mig in ("single", "mixed")}
        if len(migs) != 1:
            return None
        pinned |= migs
    return pinned.pop() if len(pinned) == 1 else None


def _merge(found: list[_Found]) -> tuple[ImpliedSharing, ...]:
    by_resource: dict[str, list[_Found]] = {}
    for f in found:
        if f.sharing:
            by_resource.setdefault(f.resource, []).append(f)
    out: list[ImpliedSharing] = []
    for resource, items in by_resource.items():
        strategies = {f.sharing for f in items} - {"shared"}
        strategy = strategies.pop() if len(strategies) == 1 else "shared"
        counts = {f.replicas for f in items if f.replicas}
        replicas = counts.pop() if len(counts) == 1 else None
        out.append(ImpliedSharing(resource, strategy, replicas, tuple(dict.fromkeys(f.evidence for f in items))))
    return tuple(out)


# Operators that require the label to be there (NotIn and DoesNotExist also match nodes without it).
_PRESENT_OPS = ("In", "Exists", "Gt", "Lt")


def _slice_only(node_selector: dict[str, str], terms: list[dict[str, Any]], rules: LabelRules) -> str:
    """"every" when every alternative requires a label that only MIG slices under the single strategy carry
    (`mig_only` in rules/labels.yaml): then nvidia.com/gpu was a slice on every node the pod may use; "some"
    when only some ORed terms do (a slice there, a full GPU elsewhere); "" otherwise."""
    def slicing(key: str) -> bool:
        rule = rules.lookup(key)
        return rule is not None and rule.mig_only

    if any(slicing(k) for k in node_selector):
        return "every"
    per_term = [any(slicing(r.key) and r.op in _PRESENT_OPS for r in _term_reqs(t, "")) for t in terms]
    return "every" if per_term and all(per_term) else "some" if any(per_term) else ""


def implied_by_selection(
    node_selector: dict[str, str], affinity: dict[str, Any] | None, rules: LabelRules | None = None
) -> NodeImplication:
    """What the pod's nodeSelector and required node affinity imply (NONE when they imply nothing)."""
    terms = _required_terms(affinity)
    if not node_selector and not terms:
        return NONE
    rules = rules or load_label_rules()
    if not rules.implications:
        return NONE
    ns = _scan([_Req(k, "In", (str(v),), "nodeSelector") for k, v in node_selector.items()], rules)
    many = len(terms) > 1
    per_term = [
        _scan(_term_reqs(t, f"required term {n}" if many else "required affinity"), rules)
        for n, t in enumerate(terms, 1)
    ]
    found = ns + [f for fs in per_term for f in fs]
    slice_only = _slice_only(node_selector, terms, rules)
    admits_single = node_selector.get(MIG_STRATEGY_LABEL) is None and any(
        r.key == MIG_STRATEGY_LABEL and (r.op == "Exists" or (r.op == "In" and "single" in r.values))
        for t in terms for r in _term_reqs(t, ""))
    if not found and not slice_only and not admits_single:
        return NONE
    mig = _pinned_mig_strategy(node_selector, per_term)
    if slice_only == "every":
        mig = "single"  # GFD writes these labels under the single strategy only
    if mig is None and any(f.mig == "single" for f in ns):
        mig = "single"  # a -MIG- product in the nodeSelector holds for every term
    providers = [f for f in found if f.provider]
    features = [name for name, on in (
        ("MIG partition", any(f.mig == "partition" for f in providers)),
        ("GPU sharing", any(f.sharing for f in providers) or any(not f.mig and not f.sharing for f in providers)),
    ) if on]
    return NodeImplication(
        sharing=_merge(found),
        mig_strategy=mig,
        mig_slice=slice_only,
        mig_single_some=admits_single and mig != "single" and slice_only != "every",
        provider=tuple(dict.fromkeys(f.evidence for f in providers)),
        provider_name=providers[0].provider if providers else "",
        provider_feature=" and ".join(features),
    )


__all__ = ["NONE", "implied_by_selection"]
