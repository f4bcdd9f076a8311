"""The run's typed settings, as every layer sees them once the command line, environment and config file are
resolved (cli/settings.py does that)."""

from __future__ import annotations

from dataclasses import dataclass, field

DEFAULT_API_VERSION = "resource.k8s.io/v1"


@dataclass(frozen=True, slots=True)
class SharingOptions:
    """What the sharing and share-within-pod lowering passes read (dra_migrate.lower.passes.sharing,
    share_within_pod); a workload's annotations win over both."""

    strategy: str = "shared-claim"  # --sharing: shared-claim | consumable | exclusive
    within_pod: bool = False  # --share-within-pod: GPU containers of one pod reference one request


@dataclass(slots=True)
class Options:
    target_version: str = "1.34"
    api_version: str = DEFAULT_API_VERSION
    move_cloud_labels: bool = False
    add_toleration: bool = True
    feature_gates: dict[str, bool] = field(default_factory=dict)
    validate: bool = True  # check emitted objects against the official schema of the target
    strategy: str = "rewrite"  # rewrite | extended-resource (bridge mode, dra_migrate.run.bridge)
    bridge_emit_gpu_class: bool = False  # bridge: emit a class for nvidia.com/gpu besides the chart's own
    # extended resource name → DeviceClass that already maps it to DRA (KEP-5004), given by the caller: the
    # repository's own are found by the pre-pass (lower.context.RepoFacts), these win over them
    extended_resource_classes: dict[str, str] = field(default_factory=dict)
    sharing: SharingOptions = field(default_factory=SharingOptions)
    # the resourcequota-dra-devices side effect adds the DRA device-class entry (--no-dra-quota: report only)
    dra_quota: bool = True
    strict: bool = False  # --strict: a skipped GPU workload (dra-migrate.io/skip) is an error, not a note
