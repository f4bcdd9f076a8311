"""Kubernetes node selection semantics (core/v1 NodeSelector) on plain dicts.

Used for ResourceSlice `nodeSelector`, pod `nodeSelector` and required node affinity. Mirrors
k8s.io/component-helpers/scheduling/corev1/nodeaffinity: terms are ORed, the requirements inside a term
are ANDed, and a term without any requirement matches nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dra_migrate.lower.selection import nodematch


@dataclass(frozen=True, slots=True)
class Node:
    name: str
    labels: Mapping[str, str] = field(default_factory=dict)

    @staticmethod
    def from_object(obj: Mapping[str, Any]) -> Node:
        meta = obj.get("metadata") or {}
        labels = {str(k): str(v) for k, v in (meta.get("labels") or {}).items()}
        return Node(name=str(meta.get("name", "")), labels=labels)


def term_matches(term: Mapping[str, Any], node: Node) -> bool:
    """One NodeSelectorTerm against a node (the semantics live in dra_migrate.lower.selection.nodematch)."""
    return nodematch.term_matches(node.labels, term, node.name)


def node_selector_matches(selector: Mapping[str, Any] | None, node: Node) -> bool:
    """A core/v1 NodeSelector ({nodeSelectorTerms: [...]}) against a node."""
    if not selector:
        return False
    return any(term_matches(t, node) for t in selector.get("nodeSelectorTerms") or [])


def label_selector_matches(selector: Mapping[str, Any] | None, node: Node) -> bool:
    """The pod-level `nodeSelector` map: every key must be present with exactly that value."""
    return all(node.labels.get(str(k)) == str(v) for k, v in (selector or {}).items())
