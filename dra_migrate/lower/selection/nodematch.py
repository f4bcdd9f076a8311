"""Kubernetes node selection semantics on a plain label map (for before/after equivalence checks)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_INT64 = re.compile(r"^[+-]?[0-9]+$")


def _as_int(text: str) -> int | None:
    # Kubernetes parses Gt/Lt operands with strconv.ParseInt(…, 10, 64).
    if not _INT64.match(text):
        return None
    n = int(text)
    return n if -(2**63) <= n < 2**63 else None


def requirement_matches(labels: Mapping[str, str], expr: Mapping[str, Any]) -> bool:
    key, op = expr.get("key"), expr.get("operator")
    values = [str(v) for v in (expr.get("values") or [])]
    present = key in labels
    value = labels.get(str(key), "")
    if op == "In":
        return present and value in values
    if op == "NotIn":
        return not present or value not in values
    if op == "Exists":
        return present
    if op == "DoesNotExist":
        return not present
    if op in ("Gt", "Lt"):
        if not present or len(values) != 1:
            return False
        have, want = _as_int(value), _as_int(values[0])
        if have is None or want is None:
            return False
        return have > want if op == "Gt" else have < want
    return False  # an unknown operator is invalid; the API server would reject it


def _field_matches(name: str | None, expr: Mapping[str, Any]) -> bool:
    if expr.get("key") != "metadata.name" or name is None:
        return False
    return requirement_matches({"metadata.name": name}, expr)


def term_matches(labels: Mapping[str, str], term: Mapping[str, Any], name: str | None = None) -> bool:
    exprs = term.get("matchExpressions") or []
    fields = term.get("matchFields") or []
    if not exprs and not fields:
        return False  # "A null or empty node selector term matches no objects."
    return all(requirement_matches(labels, e) for e in exprs) and all(_field_matches(name, f) for f in fields)


def node_matches(
    labels: Mapping[str, str],
    node_selector: Mapping[str, str] | None,
    required_terms: list[dict[str, Any]] | None,
    *,
    name: str | None = None,
) -> bool:
    """True if a node with `labels` (and optionally metadata.name `name`) satisfies the pod's node selection.

    nodeSelector entries are ANDed; required terms are ORed
    (None = no required affinity, [] = matches nothing).
    """
    for k, v in (node_selector or {}).items():
        if labels.get(k) != str(v):
            return False
    if required_terms is None:
        return True
    return any(term_matches(labels, t, name) for t in required_terms)
