"""What the repository says about device plugin sharing, as plain dataclasses.

Filled once per run by `run.sharing_configs.scan_sharing_configs` before any workload is lowered: the
config usually lives in another file (a ConfigMap, Helm values, a ClusterPolicy) than the workloads.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dra_migrate.lower.sharing.scope import Scope

TIME_SLICING, MPS, NONE = "time-slicing", "mps", "none"
CONFIG_LABEL = "nvidia.com/device-plugin.config"  # node label selecting a config key per node


@dataclass(slots=True)
class SharedResource:
    name: str  # resource the config shares, e.g. nvidia.com/gpu or nvidia.com/mig-1g.5gb
    replicas: int


@dataclass(slots=True)
class SharingConfig:
    """One device plugin config file (`version: v1`), wherever it was found."""

    source: str  # file it was read from
    line: int
    origin: str  # ConfigMap | HelmValues | ConfigFile
    config_map: str | None  # ConfigMap name holding it (None for a bare config file)
    namespace: str | None
    key: str | None  # data key inside the ConfigMap (= value of the node label selecting it)
    strategy: str = NONE  # time-slicing | mps | none
    resources: list[SharedResource] = field(default_factory=list)
    rename_by_default: bool = False
    fail_requests_greater_than_one: bool = False
    mig_strategy: str | None = None  # flags.migStrategy
    nodes: list[str] = field(default_factory=list)  # Node objects labelled with this key
    allocation_policy: str | None = None  # flags.plugin.sharedDevicesAllocationPolicy (distributed | packed)
    scope: Scope = field(default_factory=Scope)  # the workloads it governs (sharing.scope); global by default
    reaches_workloads: bool = True  # its scope holds a file with a GPU workload (set by the pre-pass)

    @property
    def label(self) -> str:
        where = self.config_map or self.source
        return f"{where}[{self.key}]" if self.key else where

    @property
    def unit(self) -> tuple[str, str | None]:
        """Configs of one unit (one file's ConfigMap or values) are the per-node choices of one cluster."""
        return self.source, self.config_map

    def settings(self, advertised: str) -> tuple[str, int | None]:
        return self.strategy, self.replicas_for(advertised)

    def advertised(self, resource: str) -> str:
        return resource + ".shared" if self.rename_by_default else resource

    def replicas_for(self, advertised: str) -> int | None:
        """Replicas per device behind an advertised resource name, if this config shares it."""
        if self.strategy == NONE:
            return None
        for r in self.resources:
            if self.advertised(r.name) == advertised:
                return r.replicas
        return None


@dataclass(slots=True)
class ConfigPointer:
    """A ClusterPolicy or Helm values entry selecting which ConfigMap (and default key) the plugin uses."""

    source: str
    line: int
    origin: str  # ClusterPolicy | HelmValues
    config_map: str | None
    default: str | None
    scope: Scope = field(default_factory=Scope)


@dataclass(slots=True)
class Resolution:
    config: SharingConfig | None  # the one config that decides, if any
    replicas: int | None
    candidates: list[SharingConfig] = field(default_factory=list)  # configs that share it somewhere
    reason: str = ""
    # configs of different clusters (units) whose scopes all reach the file and that disagree
    conflict: list[SharingConfig] = field(default_factory=list)
    # configs sharing the resource whose scope reaches no workload at all: they may have been meant here
    orphans: list[SharingConfig] = field(default_factory=list)


@dataclass(slots=True)
class SharingInventory:
    configs: list[SharingConfig] = field(default_factory=list)
    pointers: list[ConfigPointer] = field(default_factory=list)
    node_config_labels: dict[str, str] = field(default_factory=dict)  # node name → config key
    mig_strategies: list[tuple[str, str]] = field(default_factory=list)  # (where, none|single|mixed)

    @property
    def empty(self) -> bool:
        return not (self.configs or self.pointers or self.node_config_labels or self.mig_strategies)

    def defaults(self, file: str | None = None) -> list[SharingConfig]:
        """Configs a node without the per-node label gets (the pointers' default keys); with `file`, only
        the pointers and configs whose scope reaches it."""
        configs, pointers = self.in_scope(file)
        out: list[SharingConfig] = []
        for p in pointers:
            if p.default is None:
                continue
            out.extend(
                c for c in configs
                if c.key == p.default and (p.config_map is None or c.config_map in (None, p.config_map))
            )
        return out

    def in_scope(self, file: str | None) -> tuple[list[SharingConfig], list[ConfigPointer]]:
        if file is None:
            return list(self.configs), list(self.pointers)
        return [c for c in self.configs if c.scope.contains(file)], [p for p in self.pointers if p.scope.contains(file)]

    def resolve(self, advertised: str, node_selector: dict[str, str], file: str | None = None) -> Resolution:
        """Which config governs `advertised` for a pod with this nodeSelector, in file `file` (None: every
        config applies everywhere).

        Only configs whose scope reaches the file take part. Decides only when the answer is unambiguous:
        the key the pod's nodeSelector names, else the pointers' default, else the only config there is.
        Otherwise it reports the candidates, and the configs of different clusters that disagree.
        """
        configs, pointers = self.in_scope(file)
        sharing = [c for c in configs if c.replicas_for(advertised) is not None]
        # no config at all speaks for this file, while one that shares the resource speaks for no workload
        orphans = [] if configs else [
            c for c in self.configs if not c.reaches_workloads and c.replicas_for(advertised) is not None
        ]
        key = node_selector.get(CONFIG_LABEL)
        defaults = self.defaults(file)
        if key is not None:
            chosen = [c for c in configs if c.key == key]
            reason = f"nodeSelector {CONFIG_LABEL}={key}"
        elif defaults:
            chosen = defaults
            reason = "the default config of " + ", ".join(sorted({f"{p.origin} ({p.source})" for p in pointers}))
        else:
            chosen = configs
            reason = "the only device plugin config found"
        settings = {c.settings(advertised) for c in chosen}
        if len(settings) == 1 and chosen:
            c = chosen[0]
            return Resolution(c, c.replicas_for(advertised), sharing, reason, orphans=orphans)
        conflict = chosen if len({c.unit for c in chosen}) > 1 else []
        return Resolution(None, None, sharing, "several configs with different settings" if chosen else "",
                          conflict, orphans)

    def mig_strategy(self) -> str | None:
        values = {v for _, v in self.mig_strategies}
        return values.pop() if len(values) == 1 else ("single" if "single" in values else None)
