"""Expected NVIDIA DRA ResourceSlices derived from GPU Feature Discovery node labels.

For clusters that still run the device plugin: the labels GFD puts on each node say roughly what the
NVIDIA DRA driver would publish there (shared/reference/nvidia.md §B8). The result is an estimate:

* productName: GFD's label is sanitise(NVML name) (spaces -> '-'). Known names come from
  rules/simulate/nvidia.yaml; otherwise only the first '-' (after the vendor prefix "NVIDIA"/"Tesla") becomes
  a space, e.g. NVIDIA-A10G -> "NVIDIA A10G". Names with more spaces are then wrong; add them to the table.
* architecture from gpu.family, cudaComputeCapability from gpu.compute.major/minor, driverVersion from
  cuda.driver-version.* (leading zeros dropped, as the driver's semver coercion does), cudaDriverVersion
  from cuda.runtime-version.* (the "runtime" labels hold the CUDA driver API version), memory from
  gpu.memory (MiB).
* uuid, parentUUID and pciBusID are synthetic; pcieRoot, brand and addressingMode are unknown and absent
  (a selector reading them gets a CEL "no such key" error, a matchAttribute on them cannot be satisfied).
* MIG: strategy single -> gpu.count MIG devices of the profile in gpu.product; mixed -> per
  nvidia.com/mig-<profile>.count. Which GPUs host them is unknown: MIG devices are packed onto parents by
  GI slices (7 per GPU, 4 on A30) and, under mixed, those parents are subtracted from gpu.count.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

from dra_migrate.ruleset.nvidia_cluster import cluster_rules
from dra_migrate.simulate.inventory import Inventory, InventoryWarning

DRIVER = "gpu.nvidia.com"
_MIG_COUNT = re.compile(r"^nvidia\.com/mig-(?P<profile>.+)\.count$")
_PROFILE = re.compile(r"^(?:\d+c\.)?(?P<g>\d+)g\.\d+gb")


def product_name(label: str) -> str:
    table: Mapping[str, str] = cluster_rules()["productNames"]
    if label in table:
        return table[label]
    return label.replace("-", " ", 1)


def dra_profile(label_profile: str) -> str:
    """Resource-name form (`1g.10gb.me`) -> DRA `profile` attribute (`1g.10gb+me`)."""
    m = _PROFILE.match(label_profile)
    if not m:
        return label_profile
    rest = label_profile[m.end() :]
    return label_profile[: m.end()] + rest.replace(".", "+")


def _semver(parts: Iterable[str]) -> str | None:
    nums = []
    for p in parts:
        if p == "":
            continue
        if not p.isdigit():
            return None
        nums.append(str(int(p)))
    if not nums:
        return None
    nums = (nums + ["0", "0"])[:3]
    return ".".join(nums)


def _common_attributes(labels: Mapping[str, str], product: str) -> dict[str, dict[str, Any]]:
    attrs: dict[str, dict[str, Any]] = {"productName": {"string": product_name(product)}}
    family = labels.get("nvidia.com/gpu.family")
    arch = cluster_rules()["architectures"].get(family or "")
    if arch:
        attrs["architecture"] = {"string": arch}
    major, minor = labels.get("nvidia.com/gpu.compute.major"), labels.get("nvidia.com/gpu.compute.minor")
    if major is not None and minor is not None:
        cc = _semver([major, minor])
        if cc:
            attrs["cudaComputeCapability"] = {"version": cc}
    full = labels.get("nvidia.com/cuda.driver-version.full")
    drv = (
        _semver(full.split("."))
        if full
        else _semver(labels.get(f"nvidia.com/cuda.driver.{k}", "") for k in ("major", "minor", "rev"))
    )
    if drv:
        attrs["driverVersion"] = {"version": drv}
    cuda = _semver(
        [
            labels.get(
                "nvidia.com/cuda.runtime-version.major", labels.get("nvidia.com/cuda.runtime.major", "")
            ),
            labels.get(
                "nvidia.com/cuda.runtime-version.minor", labels.get("nvidia.com/cuda.runtime.minor", "")
            ),
        ]
    )
    if cuda:
        attrs["cudaDriverVersion"] = {"version": cuda}
    return attrs


def _int(labels: Mapping[str, str], key: str) -> int:
    try:
        return int(labels.get(key, "0"))
    except ValueError:
        return 0


def _gi_slices(profile: str) -> int:
    m = _PROFILE.match(profile)
    return int(m.group("g")) if m else 1


def slices_from_node(node: Mapping[str, Any], warnings: list[InventoryWarning]) -> list[dict[str, Any]]:
    """The ResourceSlice (v1 shape) the NVIDIA DRA driver would publish on this node, or none."""
    name = str((node.get("metadata") or {}).get("name", ""))
    labels: Mapping[str, str] = {
        k: str(v) for k, v in ((node.get("metadata") or {}).get("labels") or {}).items()
    }
    product = labels.get("nvidia.com/gpu.product", "")
    if product.endswith("-SHARED"):
        product = product[: -len("-SHARED")]
    strategy = labels.get("nvidia.com/mig.strategy", "none")
    count = _int(labels, "nvidia.com/gpu.count")
    base, _, single_profile = product.partition("-MIG-")
    if single_profile == "INVALID":
        warnings.append(
            InventoryWarning("lossy-label", f"node {name}: GFD reports an invalid MIG setup", name)
        )
        return []
    common = _common_attributes(labels, base)
    per_gpu = 4 if "A30" in base else 7

    migs: list[tuple[str, int, int | None]] = []  # (label profile, count, memory MiB)
    full_gpus = count
    if single_profile:
        migs.append((single_profile, count, _int(labels, "nvidia.com/gpu.memory") or None))
        full_gpus = 0
    elif strategy == "mixed":
        for key, value in labels.items():
            m = _MIG_COUNT.match(key)
            if m and value.isdigit() and int(value) > 0:
                p = m.group("profile")
                migs.append((p, int(value), _int(labels, f"nvidia.com/mig-{p}.memory") or None))
        migs.sort()
        if migs:
            used = sum(c * _gi_slices(p) for p, c, _ in migs)
            full_gpus = max(0, count - math.ceil(used / per_gpu))
            warnings.append(
                InventoryWarning(
                    "lossy-label",
                    f"node {name}: mig.strategy=mixed; assumed {count - full_gpus} of {count} GPUs host "
                    "the MIG devices (labels do not say which)",
                    name,
                )
            )
    if not full_gpus and not migs:
        return []

    devices: list[dict[str, Any]] = []
    memory = _int(labels, "nvidia.com/gpu.memory")
    for i in range(full_gpus):
        attrs = {
            "type": {"string": "gpu"},
            "uuid": {"string": f"GPU-sim-{name}-{i}"},
            **common,
            "resource.kubernetes.io/pciBusID": {"string": f"0000:{i + 1:02x}:00.0"},
        }
        dev: dict[str, Any] = {"name": f"gpu-{i}", "attributes": attrs}
        if memory and not single_profile:
            dev["capacity"] = {"memory": {"value": f"{memory}Mi"}}
        devices.append(dev)
    parent, used_on_parent = full_gpus, 0
    for label_profile, n, mem in migs:
        profile, g = dra_profile(label_profile), _gi_slices(label_profile)
        for k in range(n):
            if used_on_parent + g > per_gpu:
                parent, used_on_parent = parent + 1, 0
            used_on_parent += g
            attrs = {
                "type": {"string": "mig"},
                "uuid": {"string": f"MIG-sim-{name}-{parent}-{len(devices)}"},
                "parentUUID": {"string": f"GPU-sim-{name}-{parent}"},
                "profile": {"string": profile},
                **common,
            }
            slug = re.sub(r"[^a-z0-9]", "", profile.lower())
            dev = {"name": f"gpu-{parent}-mig-{slug}-{k}", "attributes": attrs}
            if mem:
                dev["capacity"] = {"memory": {"value": f"{mem}Mi"}}
            devices.append(dev)
    if base and base not in cluster_rules()["productNames"]:
        warnings.append(
            InventoryWarning(
                "lossy-label",
                f"node {name}: productName {product_name(base)!r} guessed from label {base!r}",
                name,
            )
        )
    return [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": f"{name}-{DRIVER}-expected"},
            "spec": {
                "driver": DRIVER,
                "nodeName": name,
                "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                "devices": devices,
            },
        }
    ]


def inventory_from_nodes(nodes: Iterable[Mapping[str, Any]]) -> Inventory:
    """Nodes (with GFD labels) -> Inventory with expected slices, the Nodes and the default NVIDIA classes."""
    warnings: list[InventoryWarning] = []
    objects: list[Mapping[str, Any]] = []
    for node in nodes:
        if node.get("kind", "Node") != "Node":
            continue
        objects.append({**node, "kind": "Node"})
        objects.extend(slices_from_node(node, warnings))
    inv = Inventory.from_objects(objects)
    inv.warnings.extend(warnings)
    return inv
