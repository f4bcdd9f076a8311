"""rules/kustomize.yaml: the kinds kustomize's own OpenAPI knows, the strategic-merge keys of pod specs and
containers, and the name references its built-in table lacks (ResourceClaimTemplate, ResourceClaim)."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass

from dra_migrate.ruleset._paths import rules_file, schema_file
from dra_migrate.ruleset.files import rules_data

RULES_FILE = rules_file("kustomize.yaml")
SCHEMA_FILE = schema_file("kustomize.schema.json")


@dataclass(frozen=True)
class Facts:
    openapi_kinds: frozenset[tuple[str, str]]  # (apiVersion, kind)
    pod_spec_keys: Mapping[str, str]
    container_keys: Mapping[str, str]
    name_references: tuple[tuple[str, str, str], ...]  # (kind, group, pod-spec field path)


@functools.cache
def facts() -> Facts:
    data = rules_data("kustomize.yaml")
    return Facts(
        frozenset((k["apiVersion"], k["kind"]) for k in data["openapiKinds"]),
        dict(data["podSpecMergeKeys"]),
        dict(data["containerMergeKeys"]),
        tuple((r["kind"], r["group"], r["podSpecField"]) for r in data["nameReferences"]),
    )
