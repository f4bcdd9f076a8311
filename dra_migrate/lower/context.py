"""What lowering passes share: options, the run-wide namer, and the per-pod-template state."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dra_migrate.diagnostics import Diagnostic, Location, make
from dra_migrate.ir import Container, DocPath, PodTemplate, Workload
from dra_migrate.lower.backends import DEFAULT_API_VERSION, Request
from dra_migrate.lower.names import TemplateNamer
from dra_migrate.plan import Op


@dataclass(slots=True)
class Options:
    target_version: str = "1.34"
    api_version: str = DEFAULT_API_VERSION
    move_cloud_labels: bool = False
    add_toleration: bool = True
    feature_gates: dict[str, bool] = field(default_factory=dict)
    validate: bool = True  # check emitted objects against the official schema of the target
    strategy: str = "rewrite"  # rewrite | extended-resource (bridge mode, dra_migrate.bridge)
    bridge_emit_gpu_class: bool = False  # bridge: emit a class for nvidia.com/gpu besides the chart's own
    # extended resource name → DeviceClass in the scanned repo that already maps it to DRA (KEP-5004)
    extended_resource_classes: dict[str, str] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)  # options of later passes (sharing, selection, …)


@dataclass(slots=True)
class RunContext:
    options: Options
    namer: TemplateNamer = field(default_factory=TemplateNamer)
    # run-wide state of later passes (e.g. which shared ResourceClaims were already emitted)
    state: dict[str, Any] = field(default_factory=dict)


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
    extra_documents: list[dict[str, Any]] = field(default_factory=list)
    # resource names a pass translated itself; gpu-requests leaves their demands alone and removes their keys
    handled: set[str] = field(default_factory=set)
    skip: bool = False  # a pass found a reason to leave this pod template untouched
    decisions: list[str] = field(default_factory=list)

    def diag(self, code: str, message: str, line: int = 0, container: Container | None = None) -> None:
        line = line or (container.line if container else self.template.line)
        self.diagnostics.append(make(code, message, Location(self.workload.file, line, 0), self.workload.ref))
