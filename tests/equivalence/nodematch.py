"""The scheduler's node-label and taint filters, written from the API documentation (core/v1 types.go):

* `nodeSelector`: every key present with exactly that value;
* required node affinity: `nodeSelectorTerms` are ORed, a term's requirements ANDed; a term without
  requirements matches nothing, and so does an empty term list; `matchFields` knows only `metadata.name`;
  `In`/`NotIn` (NotIn and DoesNotExist also match a node without the key), `Exists`/`DoesNotExist`, `Gt`/`Lt`
  (the label and the single value parse as integers, else no match);
* taints: a toleration matches on key (empty key + Exists: every key), operator (Equal by default) and value,
  and effect (empty: every effect).

Independent of dra_migrate.lower.selection on purpose: the oracle must not share the compiler's reading.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

INT = re.compile(r"^[-+]?\d+$")


def selector_matches(selector: Mapping[str, Any] | None, labels: Mapping[str, str]) -> bool:
    return all(str(k) in labels and labels[str(k)] == str(v) for k, v in (selector or {}).items())


def _requirement(req: Mapping[str, Any], value: str | None) -> bool:
    op = req.get("operator")
    values = [str(v) for v in req.get("values") or []]
    if op == "In":
        return value is not None and value in values
    if op == "NotIn":
        return value is None or value not in values
    if op == "Exists":
        return value is not None
    if op == "DoesNotExist":
        return value is None
    if op in ("Gt", "Lt"):
        if value is None or len(values) != 1 or not INT.match(value) or not INT.match(values[0]):
            return False
        return int(value) > int(values[0]) if op == "Gt" else int(value) < int(values[0])
    return False


def term_matches(term: Mapping[str, Any], labels: Mapping[str, str], node_name: str) -> bool:
    exprs = list(term.get("matchExpressions") or [])
    fields = list(term.get("matchFields") or [])
    if not exprs and not fields:
        return False
    for e in exprs:
        if not _requirement(e, labels.get(str(e.get("key")))):
            return False
    return all(f.get("key") == "metadata.name" and _requirement(f, node_name) for f in fields)


def required_terms(spec: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    affinity = spec.get("affinity")
    na = affinity.get("nodeAffinity") if isinstance(affinity, dict) else None
    req = na.get("requiredDuringSchedulingIgnoredDuringExecution") if isinstance(na, dict) else None
    if not isinstance(req, dict):
        return None
    return [t for t in req.get("nodeSelectorTerms") or [] if isinstance(t, dict)]


def pod_matches_node(spec: Mapping[str, Any], labels: Mapping[str, str], node_name: str) -> bool:
    """nodeSelector AND required node affinity (the scheduler's NodeAffinity filter)."""
    if not selector_matches(spec.get("nodeSelector") or {}, labels):
        return False
    terms = required_terms(spec)
    return terms is None or any(term_matches(t, labels, node_name) for t in terms)


def tolerates(toleration: Mapping[str, Any], taint: Mapping[str, Any]) -> bool:
    effect = toleration.get("effect")
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key")
    op = toleration.get("operator") or "Equal"
    if not key:
        return op == "Exists"
    if key != taint.get("key"):
        return False
    return op == "Exists" or str(toleration.get("value") or "") == str(taint.get("value") or "")


def untolerated(
    taints: Iterable[Mapping[str, Any]], tolerations: Iterable[Mapping[str, Any]],
    effects: tuple[str, ...] = ("NoSchedule", "NoExecute"),
) -> list[Mapping[str, Any]]:
    tols = [t for t in tolerations if isinstance(t, Mapping)]
    return [t for t in taints if t.get("effect") in effects and not any(tolerates(x, t) for x in tols)]
