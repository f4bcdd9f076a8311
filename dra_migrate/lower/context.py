"""What lowering passes share: options, the repository's facts from the pre-pass, the run-wide namer, and the
per-pod-template state."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dra_migrate.config import Options
from dra_migrate.diagnostics.model import Diagnostic, Location, make
from dra_migrate.ir import Container, DocPath, PodTemplate, Workload
from dra_migrate.lower.backends import DeviceChoice, Request
from dra_migrate.lower.names import NameTable, TemplateNamer
from dra_migrate.lower.sharing.model import SharingInventory
from dra_migrate.lower.sharing.scope import Scope
from dra_migrate.plan import Op


@dataclass(frozen=True, slots=True)
class RepoFacts:
    """What the run's pre-pass learned of the repository (dra_migrate.run.driver: _repo_prepass, _name_prepass),
    built before any workload is translated and never changed after: the passes read it, nothing writes it."""

    # the device plugin sharing configs (and MIG strategies) found, with the workloads each governs
    sharing: SharingInventory = field(default_factory=SharingInventory)
    # extended resource name → DeviceClass that already maps it to DRA (KEP-5004), for every workload: the
    # caller's (Options.extended_resource_classes) and, in bridge mode, the repository's
    extended_resource_classes: Mapping[str, str] = field(default_factory=dict)
    names: NameTable | None = None  # the pod template names of apply units spanning files (unit_names)
    # the repository's DeviceClasses that map an extended resource, each for the workloads of its own cluster
    # only, as a sharing config (its directory tree and the kustomize builds that include it), in walk order
    scoped_classes: tuple[ScopedClass, ...] = ()

    def classes_for(self, path: str) -> dict[str, str]:
        """extended resource name → DeviceClass for a workload in the file `path`: the caller's win, then the
        first of the repository's whose scope holds the file."""
        out = dict(self.extended_resource_classes)
        for c in self.scoped_classes:
            if c.resource not in out and c.scope.contains(path):
                out[c.resource] = c.name
        return out


@dataclass(frozen=True, slots=True)
class ScopedClass:
    """A DeviceClass of the repository mapping an extended resource (KEP-5004), and where it applies."""

    resource: str
    name: str
    source: str  # the file it was found in, as displayed
    scope: Scope


@dataclass(slots=True)
class RunContext:
    options: Options
    namer: TemplateNamer = field(default_factory=TemplateNamer)
    facts: RepoFacts = field(default_factory=RepoFacts)  # the pre-pass's (none before it ran)
    # run-wide state of later passes (e.g. which shared ResourceClaims were already emitted)
    state: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.namer.facts is None:
            self.namer.facts = self.facts  # the pre-pass's names (RepoFacts.names)

    def use(self, facts: RepoFacts) -> None:
        """The pre-pass is done: its facts, for the passes and the namer, from the next translation on."""
        self.facts = facts
        self.namer.facts = facts


@dataclass(slots=True)
class InitDemand:
    """The devices of one resource a plain init container asks for, left for the init-containers pass to place
    on requests of that resource (device reuse, as the kubelet's device manager did)."""

    container: Container
    resource: str  # the device plugin resource: the kubelet reuses devices per resource
    count: int
    kind: DeviceChoice  # class and selectors of the resource's requests (the count is ignored)
    name: str  # base name of the extra request, should this container be the first to need one
    # firstAvailable alternatives of the resource's requests (the counts are ignored), when it has them
    alternatives: list[tuple[str, DeviceChoice]] = field(default_factory=list)


@dataclass(slots=True)
class TemplateLowering:
    """The translation of one pod template, built up by the passes in order."""

    workload: Workload
    template: PodTemplate
    template_name: str
    pod_claim_name: str
    requests: list[Request] = field(default_factory=list)
    # request names each container references, keyed by the container's path
    container_refs: dict[DocPath, list[str]] = field(default_factory=dict)
    ops: list[Op] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    config: list[dict[str, Any]] = field(default_factory=list)
    constraints: list[dict[str, Any]] = field(default_factory=list)
    # a named ResourceClaim shared by every pod instead of a per-pod template (sharing pass)
    shared_claim: dict[str, Any] | None = None
    sharing: Any = None  # the sharing pass's plan, carried to its finishing step (passes.sharing.Plan)
    extra_documents: list[dict[str, Any]] = field(default_factory=list)
    # device plugin resource each per-container request stands for (request name → resource); init containers
    # reuse only requests listed here, and only of their own resource
    request_resources: dict[str, str] = field(default_factory=dict)
    init_demands: list[InitDemand] = field(default_factory=list)  # placed by the init-containers pass
    # resource names a pass translated itself; gpu-requests leaves their demands alone and removes their keys
    handled: set[str] = field(default_factory=set)
    skip: bool = False  # a pass found a reason to leave this pod template untouched
    decisions: list[str] = field(default_factory=list)

    def diag(self, code: str, message: str, line: int = 0, container: Container | None = None) -> None:
        line = line or (container.line if container else self.template.line)
        self.diagnostics.append(make(code, message, Location(self.workload.file, line, 0), self.workload.ref))
