"""Kubernetes node selection semantics (core/v1 NodeSelector) on plain dicts.

Used for ResourceSlice `nodeSelector`, pod `nodeSelector` and required node affinity. Mirrors
k8s.io/component-helpers/scheduling/corev1/nodeaffinity: terms are ORed, the requirements inside a term
are ANDed, and a term without any requirement matches nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Node:
    name: str
    labels: Mapping[str, str] = field(default_factory=dict)

    @staticmethod
    def from_object(obj: Mapping[str, Any]) -> Node:
        meta = obj.get("metadata") or {}
        labels = {str(k): str(v) for k, v in (meta.get("labels") or {}).items()}
        return Node(name=str(meta.get("name", "")), labels=labels)


def _requirement_matches(req: Mapping[str, Any], values_by_key: Mapping[str, str]) -> bool:
    key = str(req.get("key", ""))
    op = str(req.get("operator", ""))
    values = [str(v) for v in (req.get("values") or [])]
    present = key in values_by_key
    value = values_by_key.get(key)
    if op == "In":
        return present and value in values
    if op == "NotIn":
        return not present or value not in values
    if op == "Exists":
        return present
    if op == "DoesNotExist":
        return not present
    if op in ("Gt", "Lt"):
        # Upstream parses both sides as integers; anything unparsable does not match.
        if not present or len(values) != 1:
            return False
        try:
            have, want = int(str(value)), int(values[0])
        except ValueError:
            return False
        return have > want if op == "Gt" else have < want
    return False


def term_matches(term: Mapping[str, Any], node: Node) -> bool:
    exprs = term.get("matchExpressions") or []
    fields = term.get("matchFields") or []
    if not exprs and not fields:
        return False
    if not all(_requirement_matches(r, node.labels) for r in exprs):
        return False
    # metadata.name is the only field upstream supports in matchFields.
    node_fields = {"metadata.name": node.name}
    return all(_requirement_matches(r, node_fields) for r in fields)


def node_selector_matches(selector: Mapping[str, Any] | None, node: Node) -> bool:
    """A core/v1 NodeSelector ({nodeSelectorTerms: [...]}) against a node."""
    if not selector:
        return False
    return any(term_matches(t, node) for t in selector.get("nodeSelectorTerms") or [])


def label_selector_matches(selector: Mapping[str, Any] | None, node: Node) -> bool:
    """The pod-level `nodeSelector` map: every key must be present with exactly that value."""
    return all(node.labels.get(str(k)) == str(v) for k, v in (selector or {}).items())
