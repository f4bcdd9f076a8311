"""The device inventory the simulator allocates from: ResourceSlices, DeviceClasses, Nodes.

Inputs are plain dicts as parsed from YAML (`kubectl get resourceslices -o yaml` prints a `List`; a
multi-document file works too). Pool handling follows upstream `GatherPools`
(kubernetes/dynamic-resource-allocation structured/internal/stable/pools_stable.go @v0.36.2): only the
highest generation of a pool counts, a pool with fewer slices than `resourceSliceCount` is incomplete and
nothing is allocated from it, duplicate device names make a pool invalid.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dra_migrate.ruleset.nvidia_cluster import (
    DeviceClass,
    default_device_classes,
)
from dra_migrate.simulate.nodes import Node, node_selector_matches


@dataclass(frozen=True, slots=True, order=True)
class DeviceId:
    driver: str
    pool: str
    device: str

    def __str__(self) -> str:
        return f"{self.driver}/{self.pool}/{self.device}"


@dataclass(frozen=True, slots=True)
class Device:
    """One device as published in a slice, in the v1 shape (v1beta1 `basic:` is flattened).

    attributes: name -> {"string"|"int"|"bool"|"version": value}; capacity: name -> {"value": quantity}.
    Names are as published (bare names belong to the driver's domain).
    """

    name: str
    driver: str
    pool: str
    node: str | None
    attributes: Mapping[str, Mapping[str, Any]]
    capacity: Mapping[str, Mapping[str, Any]]
    raw: Mapping[str, Any]
    slice_name: str = ""
    taints: tuple[Mapping[str, Any], ...] = ()

    @property
    def id(self) -> DeviceId:
        return DeviceId(self.driver, self.pool, self.name)


@dataclass(slots=True)
class Slice:
    name: str
    driver: str
    pool: str
    generation: int
    resource_slice_count: int
    node_name: str | None
    node_selector: Mapping[str, Any] | None
    all_nodes: bool
    devices: list[Device]
    # Partitionable devices (sharedCounters / perDeviceNodeSelection) are not modelled.
    unsupported: str | None = None


@dataclass(slots=True)
class Pool:
    driver: str
    name: str
    slices: list[Slice] = field(default_factory=list)
    incomplete: bool = False
    invalid_reason: str | None = None

    @property
    def key(self) -> str:
        return f"{self.driver}/{self.name}"

    @property
    def devices(self) -> list[Device]:
        # Slice order within a pool is not defined upstream (informer order); name order keeps runs
        # reproducible. Devices keep their order inside a slice.
        return [d for s in sorted(self.slices, key=lambda s: s.name) for d in s.devices]


@dataclass(frozen=True, slots=True)
class InventoryWarning:
    kind: str  # stable key: incomplete-pool, invalid-pool, unsupported-slice, unknown-object, lossy-label
    message: str
    object: str = ""


def iter_objects(docs: Iterable[Any]) -> Iterator[Mapping[str, Any]]:
    """Flatten `List` objects (kubectl -o yaml) and skip empty documents."""
    for doc in docs:
        if not isinstance(doc, Mapping):
            continue
        if doc.get("kind") == "List" or str(doc.get("kind", "")).endswith("List"):
            yield from iter_objects(doc.get("items") or [])
        else:
            yield doc


def _attr_map(raw: Any) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for name, value in (raw or {}).items():
        out[str(name)] = dict(value) if isinstance(value, Mapping) else {}
    return out


def _capacity_map(raw: Any) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for name, value in (raw or {}).items():
        # v1alpha3 used a bare quantity; v1beta1 and later wrap it as {value: ...}.
        out[str(name)] = dict(value) if isinstance(value, Mapping) else {"value": value}
    return out


def parse_slice(obj: Mapping[str, Any]) -> Slice:
    spec = obj.get("spec") or {}
    meta = obj.get("metadata") or {}
    pool = spec.get("pool") or {}
    driver = str(spec.get("driver", ""))
    pool_name = str(pool.get("name", ""))
    node_name = spec.get("nodeName") or None
    devices: list[Device] = []
    for raw in spec.get("devices") or []:
        body = raw.get("basic") if isinstance(raw.get("basic"), Mapping) else raw
        devices.append(
            Device(
                name=str(raw.get("name", "")),
                driver=driver,
                pool=pool_name,
                node=str(node_name) if node_name else None,
                attributes=_attr_map(body.get("attributes")),
                capacity=_capacity_map(body.get("capacity")),
                raw=raw,
                slice_name=str(meta.get("name", "")),
                taints=tuple(body.get("taints") or ()),
            )
        )
    unsupported = None
    if spec.get("sharedCounters") or spec.get("perDeviceNodeSelection"):
        unsupported = "partitionable devices (sharedCounters/perDeviceNodeSelection) are not simulated"
    return Slice(
        name=str(meta.get("name", "")),
        driver=driver,
        pool=pool_name,
        generation=int(pool.get("generation", 0) or 0),
        resource_slice_count=int(pool.get("resourceSliceCount", 1) or 1),
        node_name=str(node_name) if node_name else None,
        node_selector=spec.get("nodeSelector"),
        all_nodes=bool(spec.get("allNodes", False)),
        devices=devices,
        unsupported=unsupported,
    )


def _slice_matches_node(s: Slice, node: Node) -> bool:
    if s.node_name:
        return s.node_name == node.name
    if s.all_nodes:
        return True
    if s.node_selector is not None:
        return node_selector_matches(s.node_selector, node)
    return False  # unknown future node-selection field: ignored like upstream


@dataclass(slots=True)
class Inventory:
    slices: list[Slice] = field(default_factory=list)
    classes: dict[str, DeviceClass] = field(default_factory=dict)
    nodes: dict[str, Node] = field(default_factory=dict)
    warnings: list[InventoryWarning] = field(default_factory=list)

    @staticmethod
    def from_objects(docs: Iterable[Any], *, default_classes: bool = True) -> Inventory:
        """Build from ResourceSlice, DeviceClass and Node objects (Lists are flattened).

        User DeviceClasses replace defaults of the same name; defaults are only added when requested.
        """
        inv = Inventory(classes=default_device_classes() if default_classes else {})
        for obj in iter_objects(docs):
            kind = obj.get("kind")
            if kind == "ResourceSlice":
                inv.slices.append(parse_slice(obj))
            elif kind == "DeviceClass":
                dc = DeviceClass.from_object(obj)
                inv.classes[dc.name] = dc
            elif kind == "Node":
                n = Node.from_object(obj)
                inv.nodes[n.name] = n
            else:
                name = (obj.get("metadata") or {}).get("name", "")
                inv.warnings.append(
                    InventoryWarning("unknown-object", f"ignored {kind or 'object'} {name!r}", str(name))
                )
        inv.warnings.extend(check_pools(inv.slices))
        return inv

    def node(self, name: str) -> Node:
        return self.nodes.get(name) or Node(name)

    def node_names(self) -> list[str]:
        """Nodes known from Node objects or named by a slice, sorted by name."""
        names = set(self.nodes)
        names.update(s.node_name for s in self.slices if s.node_name)
        return sorted(names)

    def pools_for_node(self, node_name: str) -> list[Pool]:
        return gather_pools(self.slices, self.node(node_name))


def _latest_generation(slices: Iterable[Slice]) -> dict[tuple[str, str], list[Slice]]:
    pools: dict[tuple[str, str], list[Slice]] = {}
    for s in slices:
        key = (s.driver, s.pool)
        current = pools.get(key)
        if current is None or s.generation > current[0].generation:
            pools[key] = [s]
        elif s.generation == current[0].generation:
            current.append(s)
    return pools


def _duplicate_device(slices: Sequence[Slice]) -> str | None:
    seen: set[str] = set()
    for s in slices:
        for d in s.devices:
            if d.name in seen:
                return f"duplicate device name {d.name}"
            seen.add(d.name)
    return None


def check_pools(slices: Sequence[Slice]) -> list[InventoryWarning]:
    """Cluster-wide view of pool health, for reporting (allocation uses the per-node view)."""
    out: list[InventoryWarning] = []
    for s in slices:
        if s.unsupported:
            out.append(
                InventoryWarning("unsupported-slice", f"slice {s.name}: {s.unsupported}; skipped", s.name)
            )
    supported = [s for s in slices if not s.unsupported]
    for (driver, pool), members in sorted(_latest_generation(supported).items()):
        want = members[0].resource_slice_count
        if len(members) != want:
            out.append(
                InventoryWarning(
                    "incomplete-pool",
                    f"pool {driver}/{pool} is incomplete: {len(members)} of {want} slices at generation "
                    f"{members[0].generation}; nothing is allocated from it",
                    f"{driver}/{pool}",
                )
            )
            continue
        reason = _duplicate_device(members)
        if reason:
            out.append(
                InventoryWarning(
                    "invalid-pool",
                    f"pool {driver}/{pool} is invalid: {reason}; nothing is allocated from it",
                    f"{driver}/{pool}",
                )
            )
    return out


def gather_pools(slices: Sequence[Slice], node: Node) -> list[Pool]:
    """Pools with devices reachable from `node`, like upstream GatherPools (stable, no partitionable
    devices). Sorted by driver and pool name: upstream iterates a Go map here, i.e. in random order."""
    supported = [s for s in slices if not s.unsupported]
    relevant = _latest_generation(s for s in supported if _slice_matches_node(s, node))
    pools: list[Pool] = []
    for (driver, name), members in sorted(relevant.items()):
        generation = members[0].generation
        want = members[0].resource_slice_count
        if len(members) != want:
            # Slices for other nodes may complete the pool; a newer generation elsewhere obsoletes it.
            same_pool = [s for s in supported if s.driver == driver and s.pool == name]
            if any(s.generation > generation for s in same_pool):
                continue
            if sum(1 for s in same_pool if s.generation == generation) != want:
                pools.append(Pool(driver, name, incomplete=True))
                continue
        pools.append(Pool(driver, name, list(members), invalid_reason=_duplicate_device(members)))
    return pools
