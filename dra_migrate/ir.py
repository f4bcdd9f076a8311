"""The intermediate representation: plain typed dataclasses, no YAML objects.

workload → pod template → containers with GPU demands, plus what the pod already has (claims,
tolerations, node selection). Paths are tuples of keys/indexes from the document root.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from dra_migrate.diagnostics.model import Diagnostic

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


@dataclass(frozen=True, slots=True)
class ImpliedSharing:
    """The node selection picks nodes where the device plugin shared `resource` (time-slicing or MPS)."""

    resource: str  # nvidia.com/gpu, or nvidia.com/mig-<profile> for a mixed-strategy label
    strategy: str  # time-slicing | mps | shared (GFD's -SHARED suffix or a replicas count: either of the two)
    replicas: int | None  # clients per device, when a label says
    evidence: tuple[str, ...]  # e.g. "nodeSelector nvidia.com/gpu.replicas=4"


@dataclass(frozen=True, slots=True)
class NodeImplication:
    """What the pod's node selection says about how the device plugin served GPUs on the nodes it selects
    (rules/labels.yaml `implications`, read by dra_migrate.frontend.implies)."""

    sharing: tuple[ImpliedSharing, ...] = ()  # some alternative of the node selection lands on shared GPUs
    mig_strategy: str | None = None  # single | mixed when every alternative of the node selection pins it
    # "every" | "some" alternative(s) of the node selection require a label only single-strategy MIG slices
    # carry (nvidia.com/gpu.multiprocessors, gpu.slices.*, gpu.engines.*): there nvidia.com/gpu is a MIG slice
    mig_slice: str = ""
    # some alternative admits single-strategy nodes by their strategy label (Exists, In [single, ...]) while not
    # every alternative pins single: nvidia.com/gpu is a slice on some of the pod's nodes, a full GPU on others
    mig_single_some: bool = False
    provider: tuple[str, ...] = ()  # evidence of a cloud provider's own MIG/sharing node pool (e.g. GKE)
    provider_name: str = ""  # that provider (gke)
    provider_feature: str = ""  # what its node pool does: "MIG partition", "GPU sharing", or both

    def sharing_of(self, resource: str) -> ImpliedSharing | None:
        return next((s for s in self.sharing if s.resource == resource), None)


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
    implied: NodeImplication = field(default_factory=NodeImplication)  # what the node selection implies
    topology_spread: list[dict[str, Any]] = field(default_factory=list)  # spec.topologySpreadConstraints
    topology_spread_line: int = 0  # line of the `topologySpreadConstraints` key (0: absent)
    node_name: str | None = None  # spec.nodeName when preset (the pod bypasses the scheduler)
    node_name_line: int = 0
    scheduler_name: str | None = None  # spec.schedulerName when set to a non-empty string
    scheduler_name_line: int = 0
    # what keeps two pods of the template off one node: a required pod anti-affinity term, a DoNotSchedule
    # topology spread constraint, a host port (empty: nothing known does)
    apart: list[str] = field(default_factory=list)

    @property
    def gpu_containers(self) -> list[Container]:
        return [c for c in self.containers if c.demands]

    @property
    def selection_line(self) -> int:
        """Where a diagnostic about the node selection points: nodeSelector, else affinity, else the template."""
        return self.node_selector_line or self.affinity_line or self.line


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
    # an autoscaler of its file that scales it: (the most replicas it may set, "HorizontalPodAutoscaler/<name>")
    autoscaled: tuple[int, str] | None = None
    side_effects: tuple[str, ...] = ()  # named side effects of the kind rule (lowering passes check them)
    # (minVersion, note) of the controller that turns this custom resource into pods; None for core kinds
    claims_support: tuple[str, str] | None = None
    data: Any = None  # the object as plain data, for passes that look beyond the pod templates
    extra_ops: list[Any] = field(default_factory=list)  # object-level plan ops decided by the frontend
    # An object embedded in another one (a Katib trialSpec, an AppWrapper component, an Argo manifest):
    # the path of the outermost object in its document (() or ("items", i)), and the outer objects' refs.
    outer_path: DocPath | None = None
    via: str = ""  # "Experiment/ns/name > " for an embedded object
    embedded_note: str = ""  # the kind rule's note on where the outer controller creates it
    # (kind, apiVersion, minVersion, note) of each outer controller that creates this object
    carriers: list[tuple[str, str, str, str]] = field(default_factory=list)
    # where the pods run when a namespaced claim template beside the object cannot reach them: a cluster-scoped
    # kind's pods run in the namespace of each object that uses it (kind rule clusterScoped), "" otherwise
    pods_run_in: str = ""
    # an object inside a YAML string (frontend.embedded.StringHost): item_path and every path of the
    # workload are then paths in that string's own document
    host: Any = None

    @property
    def ref(self) -> str:
        ns = f"{self.namespace}/" if self.namespace else ""
        return f"{self.via}{self.kind}/{ns}{self.name}"

    @property
    def top_path(self) -> DocPath:
        """Path of the document-level object this workload belongs to (the outer one when embedded)."""
        return self.item_path if self.outer_path is None else self.outer_path

    @property
    def needs_gpus(self) -> bool:
        return any(t.gpu_containers for t in self.pod_templates)
