"""The intermediate representation: plain typed dataclasses, no YAML objects.

workload → pod template → containers with GPU demands, plus what the pod already has (claims,
tolerations, node selection). Paths are tuples of keys/indexes from the document root.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from dra_migrate.diagnostics import Diagnostic

DocPath = tuple[str | int, ...]


class ContainerRole(str, Enum):
    APP = "app"
    INIT = "init"
    SIDECAR = "sidecar"  # init container with restartPolicy: Always


@dataclass(slots=True)
class GpuDemand:
    resource: str  # e.g. "nvidia.com/gpu"
    count: int
    # where the count was written: "limits", "requests" or both; each path points at the key
    paths: list[DocPath]
    line: int


@dataclass(slots=True)
class ClaimRef:
    name: str
    request: str | None


@dataclass(slots=True)
class Container:
    name: str
    role: ContainerRole
    index: int  # index in its list (containers or initContainers)
    path: DocPath
    demands: list[GpuDemand] = field(default_factory=list)
    claim_refs: list[ClaimRef] = field(default_factory=list)
    has_resources: bool = False
    line: int = 0
    # every key of resources.limits / resources.requests (to know when a deletion empties the map)
    resource_sections: dict[str, list[str]] = field(default_factory=dict)
    resource_keys: list[str] = field(default_factory=list)  # keys of the container's resources mapping

    @property
    def gpu_count(self) -> int:
        return sum(d.count for d in self.demands)


@dataclass(slots=True)
class PodClaim:
    name: str
    template: str | None
    claim: str | None


@dataclass(slots=True)
class PodTemplate:
    path: DocPath  # path of the PodSpec
    containers: list[Container]
    pod_claims: list[PodClaim]
    tolerations: list[dict[str, Any]]
    node_selector: dict[str, str]
    affinity: dict[str, Any] | None
    line: int = 0
    present_keys: list[str] = field(default_factory=list)  # keys of the PodSpec mapping
    annotations: dict[str, str] = field(default_factory=dict)  # the pod template's metadata.annotations
    node_selector_line: int = 0  # line of the `nodeSelector` key (0: absent)
    affinity_line: int = 0  # line of the `affinity` key (0: absent)

    @property
    def gpu_containers(self) -> list[Container]:
        return [c for c in self.containers if c.demands]


@dataclass(slots=True)
class Workload:
    file: str
    doc_index: int
    item_path: DocPath  # () for a document root, ("items", i) inside a kind: List
    api_version: str
    kind: str
    name: str
    namespace: str | None
    line: int
    pod_templates: list[PodTemplate] = field(default_factory=list)
    annotations: dict[str, str] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    blocked: bool = False  # an error diagnostic makes the workload untouchable
    replicas: int | None = None  # pods it runs at once when known (spec.replicas / parallelism; 1 for a Pod)
    side_effects: tuple[str, ...] = ()  # named side effects of the kind rule (lowering passes check them)
    # (minVersion, note) of the controller that turns this custom resource into pods; None for core kinds
    claims_support: tuple[str, str] | None = None
    data: Any = None  # the object as plain data, for passes that look beyond the pod templates
    extra_ops: list[Any] = field(default_factory=list)  # object-level plan ops decided by the frontend

    @property
    def ref(self) -> str:
        ns = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind}/{ns}{self.name}"

    @property
    def needs_gpus(self) -> bool:
        return any(t.gpu_containers for t in self.pod_templates)
