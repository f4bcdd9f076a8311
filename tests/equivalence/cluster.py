"""The synthetic cluster both sides of the oracle run on.

Every node has two faces: BEFORE, what the NVIDIA device plugin advertised on it (`allocatable`, its sharing
and MIG strategy) and the labels GPU Feature Discovery, the GPU Operator and the cloud provider wrote
(shared/reference/nvidia.md §B6-B8, scheduling-semantics.md §5-6); AFTER, the devices the NVIDIA DRA driver
publishes in its ResourceSlice (the fixture dra_migrate/data/devices/nvidia.yaml; a MIG-enabled GPU publishes
only its MIG devices). `device_resource` ties the two: which device plugin resource each published device was.

Nodes (built once and cached):
* per fixture node, as it is (a node with MIG devices runs the mixed strategy), in two zone/instance variants;
* per full-GPU model, an 8-GPU node (two variants) and a node with exactly 3 GPUs;
* per MIG profile of the fixture, a single-strategy node: one GPU of that profile only, advertised as
  `nvidia.com/gpu` (the product label carries `-MIG-<profile>`); a larger mixed-strategy node (2 full GPUs,
  7x 1g.5gb, 2x 3g.20gb); A100 nodes under the older driver naming (`A100-SXM4-40GB`, no `NVIDIA `); a
  single-strategy node whose GPUs have MIG off (whole GPUs as `nvidia.com/gpu`);
* GKE pools (GKE labels only, tainted nvidia.com/gpu=present:NoSchedule): full A100s, MIG partitions whose
  `nvidia.com/gpu` is a partition, time-sharing and MPS pools (`gke-max-shared-clients-per-gpu`);
* device plugin sharing: time-slicing (`-SHARED` product, `gpu.replicas`), renamed (`nvidia.com/gpu.shared`),
  MPS (failRequestsGreaterThanOne by default), time-sliced MIG slices on a mixed node;
* GPU-less nodes in every zone and in `zone-c`, where no GPU node is (spread domains).
Per case, `with_extras` adds nodes for the device plugin configs the case selects and for preset nodeNames.

The cloud labels of the per-model nodes assume one provider labels every GPU node (the situation
--move-cloud-labels is for), so those nodes carry every provider's names for their model.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from importlib import resources
from typing import Any

import yaml

from dra_migrate.simulate.inventory import Inventory

MIB = 2**20
GPU = "nvidia.com/gpu"
ZONES = ["zone-a", "zone-b", "us-east-1a", "us-central1-a", "us-central1-f"]
GPU_LESS_ZONE = "zone-c"
INSTANCE_TYPES = ["p4d.24xlarge", "a3-highgpu-8g", "g5.xlarge", "p5.48xlarge"]
GKE_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}

# Cloud names per NVML product name: GKE accelerator (cloud.google.com/gke-accelerator), EC2/Karpenter GPU
# name and catalogue memory in MiB (karpenter.k8s.aws/instance-gpu-*). None: the provider does not offer it.
CLOUD: dict[str, tuple[str | None, str | None, int | None]] = {
    "NVIDIA A100-SXM4-40GB": ("nvidia-tesla-a100", "a100", 40960),
    "NVIDIA A100-PCIE-40GB": ("nvidia-tesla-a100", "a100", 40960),
    "NVIDIA A100-SXM4-80GB": ("nvidia-a100-80gb", "a100", 81920),
    "NVIDIA H100 80GB HBM3": ("nvidia-h100-80gb", "h100", 81920),
    "NVIDIA H100 PCIe": (None, "h100", 81920),
    "NVIDIA H200": ("nvidia-h200-141gb", "h200", 144384),
    "NVIDIA GH200 96GB HBM3": (None, "gh200", 98304),
    "NVIDIA L4": ("nvidia-l4", "l4", 24576),
    "NVIDIA L40S": (None, "l40s", 49152),
    "Tesla T4": ("nvidia-tesla-t4", "t4", 16384),
    "NVIDIA A10G": (None, "a10g", 24576),
    "Tesla V100-SXM2-16GB": ("nvidia-tesla-v100", "v100", 16384),
    "NVIDIA B200": ("nvidia-b200", "b200", 184320),
    "NVIDIA RTX 6000 Ada Generation": (None, "rtx6000ada", 49152),
}

# MIG instances of one profile that fit on one GPU (NVIDIA MIG user guide profile tables).
MIG_PER_GPU = {"1g.5gb": 7, "1g.5gb+me": 1, "2g.10gb": 3, "3g.20gb": 2, "4g.20gb": 1, "7g.40gb": 1,
               "1g.10gb+me": 1, "2g.20gb": 3, "1g.20gb": 4}
MIG_1G10GB = {"NVIDIA A100-SXM4-40GB": 4}  # 1g.10gb is the double-memory 1g profile on A100-40GB, 7 elsewhere


@dataclass(frozen=True)
class Sharing:
    """A device plugin sharing config as it applies on one node (nvidia.md §B7)."""

    strategy: str  # time-slicing | mps
    replicas: Mapping[str, int]  # config resource name (nvidia.com/gpu, nvidia.com/mig-1g.5gb) -> replicas
    rename: bool = False  # renameByDefault: advertised as <name>.shared
    fail_gt_one: bool = False  # failRequestsGreaterThanOne (MPS default true)

    def advertised(self, resource: str) -> str:
        return f"{resource}.shared" if self.rename and resource in self.replicas else resource


@dataclass(frozen=True)
class SynthNode:
    name: str
    labels: Mapping[str, str]
    taints: tuple[Mapping[str, Any], ...]
    devices: tuple[Mapping[str, Any], ...]  # as the DRA driver publishes them
    allocatable: Mapping[str, int]  # device plugin resources (replicas counted)
    device_resource: Mapping[str, str]  # published device name -> device plugin resource it was
    sharing: Sharing | None = None
    sliced: bool = False  # nvidia.com/gpu is a MIG slice here (single strategy, GKE partitions)

    def shares(self, resource: str) -> bool:
        return self.sharing is not None and any(
            resource == self.sharing.advertised(r) for r, n in self.sharing.replicas.items() if n > 1)


# --- GFD label derivation (nvidia.md §B8) ------------------------------------------------------------------

def sanitise(name: str) -> str:
    """GFD: drop every character outside [A-Za-z0-9-_. ], join whitespace-separated fields with '-'."""
    return "-".join(re.sub(r"[^A-Za-z0-9\-_. ]", "", name).split())


def family(major: int, minor: int) -> str:
    if major == 7:
        return "volta" if minor < 5 else "turing"
    if major == 8:
        return "ada-lovelace" if minor == 9 else "ampere"
    return {1: "tesla", 2: "fermi", 3: "kepler", 5: "maxwell", 6: "pascal", 9: "hopper", 10: "blackwell",
            12: "blackwell", 13: "rubin"}.get(major, "undefined")


def attr(dev: Mapping[str, Any], name: str) -> str:
    value = dev["attributes"][name]
    return str(value.get("string", value.get("version")))


BINARY_SUFFIX = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "": 1}


def mib(dev: Mapping[str, Any]) -> int:
    """A device's memory capacity (a binary-SI quantity such as 40960Mi) in MiB, as GFD labels it."""
    m = re.fullmatch(r"(\d+)(Ki|Mi|Gi|Ti|)", str(dev["capacity"]["memory"]["value"]))
    assert m, dev["capacity"]["memory"]
    return int(m.group(1)) * BINARY_SUFFIX[m.group(2)] // MIB


def resource_profile(profile: str) -> str:
    return profile.replace("+", ".")  # resource-name spelling: 1g.10gb+me -> 1g.10gb.me


def gpu_labels(model: Mapping[str, Any]) -> dict[str, str]:
    """Labels GFD derives from one device's NVML data (product, memory, family, versions)."""
    cc = [int(p) for p in attr(model, "cudaComputeCapability").split(".")]
    drv = [int(p) for p in attr(model, "driverVersion").split(".")]
    cuda = [int(p) for p in attr(model, "cudaDriverVersion").split(".")]
    # NVIDIA writes the driver revision with two digits (550.107.02); the device drops the zero.
    rev = f"{drv[2]:02d}"
    labels = {
        "nvidia.com/gpu.product": sanitise(attr(model, "productName")),
        "nvidia.com/gpu.family": family(cc[0], cc[1]),
        "nvidia.com/gpu.compute.major": str(cc[0]),
        "nvidia.com/gpu.compute.minor": str(cc[1]),
        "nvidia.com/cuda.driver-version.major": str(drv[0]),
        "nvidia.com/cuda.driver-version.minor": str(drv[1]),
        "nvidia.com/cuda.driver-version.revision": rev,
        "nvidia.com/cuda.driver-version.full": f"{drv[0]}.{drv[1]}.{rev}",
        "nvidia.com/cuda.driver.major": str(drv[0]),
        "nvidia.com/cuda.driver.minor": str(drv[1]),
        "nvidia.com/cuda.driver.rev": rev,
        "nvidia.com/cuda.runtime-version.major": str(cuda[0]),
        "nvidia.com/cuda.runtime-version.minor": str(cuda[1]),
        "nvidia.com/cuda.runtime-version.full": f"{cuda[0]}.{cuda[1]}",
        "nvidia.com/cuda.runtime.major": str(cuda[0]),
        "nvidia.com/cuda.runtime.minor": str(cuda[1]),
    }
    if "memory" in (model.get("capacity") or {}):
        labels["nvidia.com/gpu.memory"] = str(mib(model))
    return labels


def cloud_labels(product: str, gpus: int) -> dict[str, str]:
    gke, ec2, nominal = CLOUD.get(product) or CLOUD[f"NVIDIA {product}"]
    labels = {
        "kubernetes.azure.com/accelerator": "nvidia",
        "karpenter.k8s.aws/instance-gpu-manufacturer": "nvidia",
        "karpenter.k8s.aws/instance-gpu-count": str(gpus),
    }
    if gke:
        labels["cloud.google.com/gke-accelerator"] = gke
        labels["cloud.google.com/gke-accelerator-count"] = str(gpus)
    if ec2:
        labels["karpenter.k8s.aws/instance-gpu-name"] = ec2
    if nominal:
        labels["karpenter.k8s.aws/instance-gpu-memory"] = str(nominal)
    return labels


def _is(dev: Mapping[str, Any], kind: str) -> bool:
    return attr(dev, "type") == kind


def _gpu_count(devices: Sequence[Mapping[str, Any]]) -> int:
    return sum(1 for d in devices if _is(d, "gpu")) + len({attr(d, "parentUUID") for d in devices if _is(d, "mig")})


def _mig_capacity_labels(mig: Mapping[str, Any], prefix: str) -> dict[str, str]:
    out = {}
    for cap, label in [("multiprocessors", "multiprocessors"), ("copyEngines", "engines.copy"),
                       ("decoders", "engines.decoder"), ("encoders", "engines.encoder"),
                       ("jpegEngines", "engines.jpeg"), ("ofaEngines", "engines.ofa")]:
        out[f"{prefix}.{label}"] = str(mig["capacity"][cap]["value"])
    return out


def gfd_labels(devices: Sequence[Mapping[str, Any]], *, single: bool, sharing: Sharing | None) -> dict[str, str]:
    """What GFD writes for a node holding `devices` (one model, as GFD assumes)."""
    full = [d for d in devices if _is(d, "gpu")]
    migs = [d for d in devices if _is(d, "mig")]
    model = (full or migs)[0]
    labels = {**gpu_labels(model)}
    labels.update({
        "nvidia.com/gpu.count": str(_gpu_count(devices)),
        "nvidia.com/gpu.present": "true",
        "nvidia.com/gpu.replicas": "1",
        "nvidia.com/gpu.sharing-strategy": "none",
        "nvidia.com/mig.capable": "true" if migs else "false",
        "nvidia.com/mps.capable": "false",
    })
    if not full:
        labels.pop("nvidia.com/gpu.memory", None)  # the parent's total is unknown from its slices
    if single:
        profile = resource_profile(attr(migs[0], "profile"))
        labels["nvidia.com/mig.strategy"] = "single"
        labels["nvidia.com/gpu.product"] += f"-MIG-{profile}"
        labels["nvidia.com/gpu.count"] = str(len(migs))
        labels["nvidia.com/gpu.memory"] = str(mib(migs[0]))
        labels.update(_mig_capacity_labels(migs[0], "nvidia.com/gpu"))
    elif migs:
        labels["nvidia.com/mig.strategy"] = "mixed"
        for profile in sorted({attr(d, "profile") for d in migs}):
            same = [d for d in migs if attr(d, "profile") == profile]
            key = f"nvidia.com/mig-{resource_profile(profile)}"
            labels[f"{key}.count"] = str(len(same))
            labels[f"{key}.memory"] = str(mib(same[0]))
            labels[f"{key}.product"] = f"{sanitise(attr(same[0], 'productName'))}-MIG-{resource_profile(profile)}"
            labels[f"{key}.replicas"] = "1"
            labels[f"{key}.sharing-strategy"] = "none"
    if sharing is not None:
        for resource, n in sharing.replicas.items():
            if n < 2:
                continue
            stem = "nvidia.com/gpu" if resource == GPU else resource
            labels[f"{stem}.replicas"] = str(n)
            labels[f"{stem}.sharing-strategy"] = sharing.strategy
            product = f"{stem}.product"
            if product in labels and not sharing.rename:
                labels[product] += "-SHARED"
        if sharing.strategy == "mps":
            labels["nvidia.com/mps.capable"] = "true"
    return labels


def dp_resources(
    devices: Sequence[Mapping[str, Any]], *, sliced: bool, sharing: Sharing | None
) -> tuple[dict[str, int], dict[str, str]]:
    """(allocatable, device -> resource) as the device plugin advertises `devices` (nvidia.md §B6)."""
    device_resource: dict[str, str] = {}
    for d in devices:
        plain = _is(d, "gpu") or sliced
        base = GPU if plain else f"nvidia.com/mig-{resource_profile(attr(d, 'profile'))}"
        device_resource[str(d["name"])] = sharing.advertised(base) if sharing else base
    allocatable: dict[str, int] = {}
    for resource in device_resource.values():
        base = resource.removesuffix(".shared") if sharing and sharing.rename else resource
        n = sharing.replicas.get(base, 1) if sharing else 1
        allocatable[resource] = allocatable.get(resource, 0) + max(n, 1)
    return allocatable, device_resource


# --- devices ------------------------------------------------------------------------------------------------

@cache
def fixture_slices() -> tuple[dict[str, Any], ...]:
    text = resources.files("dra_migrate").joinpath("data/devices/nvidia.yaml").read_text(encoding="utf-8")
    out: list[dict[str, Any]] = []
    for doc in yaml.load_all(text, Loader=yaml.CSafeLoader):
        out.extend(doc["items"] if doc.get("kind") == "List" else [doc])
    return tuple(out)


def full_gpus(dev: Mapping[str, Any], n: int) -> list[dict[str, Any]]:
    """n copies of one full GPU (same attributes: the selector results are shared between copies)."""
    return [{**copy.deepcopy(dict(dev)), "name": f"gpu-{i}"} for i in range(n)]


def mig_gpu(dev: Mapping[str, Any], n: int, parent: int = 0) -> list[dict[str, Any]]:
    """MIG-enabled GPU number `parent` holding n instances of `dev`'s profile. Like `full_gpus`, the copies
    keep their attributes and capacity (memory slices included); only the name and parentUUID differ."""
    out = []
    for i in range(n):
        d = copy.deepcopy(dict(dev))
        d["name"] = f"gpu-{parent}-mig-{attr(dev, 'profile').replace('.', '').replace('+', '')}-{i}"
        d["attributes"]["parentUUID"] = {"string": f"{attr(dev, 'parentUUID')[:-2]}{parent:02d}"}
        out.append(d)
    return out


def legacy(devices: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The devices as an older driver names them: NVML reported `A100-SXM4-40GB` without `NVIDIA ` (the old
    GFD docs' product labels); the DRA driver publishes the same name."""
    out = []
    for d in devices:
        d2 = copy.deepcopy(dict(d))
        d2["attributes"]["productName"] = {"string": attr(d, "productName").removeprefix("NVIDIA ")}
        out.append(d2)
    return out


def mig_per_gpu(dev: Mapping[str, Any]) -> int:
    profile, product = attr(dev, "profile"), attr(dev, "productName")
    if profile == "1g.10gb":
        return MIG_1G10GB.get(product, 7)
    return MIG_PER_GPU.get(profile, 1)


# --- nodes --------------------------------------------------------------------------------------------------

@dataclass
class _Builder:
    nodes: list[SynthNode] = field(default_factory=list)

    def add(
        self, name: str, devices: Sequence[Mapping[str, Any]], *, zone: str, instance: int = 0,
        single: bool = False, sharing: Sharing | None = None, gfd: bool = True, cloud: bool = True,
        extra: Mapping[str, str] | None = None, taints: tuple[Mapping[str, Any], ...] = (),
        sliced: bool | None = None,
    ) -> None:
        labels = {
            "kubernetes.io/hostname": name,
            "kubernetes.io/os": "linux",
            "kubernetes.io/arch": "amd64",
            "topology.kubernetes.io/zone": zone,
            "node.kubernetes.io/instance-type": INSTANCE_TYPES[instance % len(INSTANCE_TYPES)],
        }
        if devices and gfd:
            labels.update(gfd_labels(devices, single=single, sharing=sharing))
        if devices and cloud:
            labels.update(cloud_labels(attr(devices[0], "productName"), _gpu_count(devices)))
        labels.update(extra or {})
        is_sliced = single if sliced is None else sliced
        allocatable, device_resource = dp_resources(devices, sliced=is_sliced, sharing=sharing)
        self.nodes.append(SynthNode(name, labels, taints, tuple(devices), allocatable, device_resource,
                                    sharing, is_sliced))


def _gke(accelerator: str, gpus: int, **extra: str) -> dict[str, str]:
    return {"cloud.google.com/gke-accelerator": accelerator, "cloud.google.com/gke-accelerator-count": str(gpus),
            "cloud.google.com/gke-nodepool": f"pool-{accelerator}", **extra}


@cache
def base_nodes() -> tuple[SynthNode, ...]:
    b = _Builder()
    slices = fixture_slices()
    by_product: dict[str, dict[str, Any]] = {}
    for i, s in enumerate(slices):
        base = s["spec"]["nodeName"]
        devices = s["spec"]["devices"]
        for v in (0, 1):
            b.add(f"{base}-v{v}", devices, zone=ZONES[(i + 2 * v) % len(ZONES)], instance=i + v)
        full = [d for d in devices if _is(d, "gpu")]
        if full:
            by_product.setdefault(attr(full[0], "productName"), full[0])
            for v in (0, 1):
                b.add(f"{base}-x8-v{v}", full_gpus(full[0], 8), zone=ZONES[(i + 1 + 2 * v) % len(ZONES)],
                      instance=i + 1 + v)
            b.add(f"{base}-x3", full_gpus(full[0], 3), zone=ZONES[(i + 3) % len(ZONES)], instance=i + 2)
        for profile in sorted({attr(d, "profile") for d in devices if _is(d, "mig")}):
            dev = next(d for d in devices if _is(d, "mig") and attr(d, "profile") == profile)
            name = f"{base}-single-{profile.replace('.', '').replace('+', '')}"
            b.add(name, mig_gpu(dev, mig_per_gpu(dev)), zone=ZONES[i % len(ZONES)], instance=i, single=True)
    a100 = by_product["NVIDIA A100-SXM4-40GB"]
    a100_migs = {attr(d, "profile"): d for s in slices if s["spec"]["nodeName"] == "node-a100-sxm4-40gb"
                 for d in s["spec"]["devices"] if _is(d, "mig")}
    h100_migs = {attr(d, "profile"): d for s in slices if s["spec"]["nodeName"] == "node-h100-sxm"
                 for d in s["spec"]["devices"] if _is(d, "mig")}
    gke: dict[str, Any] = {"gfd": False, "cloud": False, "taints": (GKE_TAINT,)}
    # A full-GPU pool with the GPU Operator (GFD labels; the per-model cloud labels too, see above); the other
    # pools run GKE's own device plugin and carry GKE's labels only.
    b.add("gke-a100-full", full_gpus(a100, 2), zone="us-central1-a", extra=_gke("nvidia-tesla-a100", 2),
          taints=(GKE_TAINT,))
    for profile, dev, accel in [("1g.5gb", a100_migs["1g.5gb"], "nvidia-tesla-a100"),
                                ("3g.20gb", a100_migs["3g.20gb"], "nvidia-tesla-a100"),
                                ("1g.10gb", h100_migs["1g.10gb"], "nvidia-h100-80gb")]:
        b.add(f"gke-{accel.removeprefix('nvidia-')}-{profile.replace('.', '')}", mig_gpu(dev, mig_per_gpu(dev)),
              zone="us-central1-f", sliced=True,
              extra=_gke(accel, 1, **{"cloud.google.com/gke-gpu-partition-size": profile}), **gke)
    t4, l4 = by_product["Tesla T4"], by_product["NVIDIA L4"]
    for strategy, dev, accel in [("time-sharing", t4, "nvidia-tesla-t4"), ("mps", l4, "nvidia-l4")]:
        sharing = Sharing("mps" if strategy == "mps" else "time-slicing", {GPU: 3}, fail_gt_one=True)
        b.add(f"gke-{accel.removeprefix('nvidia-')}-{strategy}", full_gpus(dev, 1), zone="us-central1-a",
              sharing=sharing, **gke, extra=_gke(accel, 1, **{
                  "cloud.google.com/gke-gpu-sharing-strategy": strategy,
                  "cloud.google.com/gke-max-shared-clients-per-gpu": "3"}))
    a100_80 = by_product["NVIDIA A100-SXM4-80GB"]
    b.add("ts-t4", full_gpus(t4, 2), zone="zone-a", sharing=Sharing("time-slicing", {GPU: 4}))
    b.add("ts-a100-80gb-renamed", full_gpus(a100_80, 2), zone="zone-b",
          sharing=Sharing("time-slicing", {GPU: 4}, rename=True))
    b.add("mps-l4", full_gpus(l4, 2), zone="us-east-1a", sharing=Sharing("mps", {GPU: 3}, fail_gt_one=True))
    mixed_a100 = next(s for s in slices if s["spec"]["nodeName"] == "node-a100-sxm4-40gb")["spec"]["devices"]
    b.add("ts-a100-40gb-mig", mixed_a100, zone="zone-a",
          sharing=Sharing("time-slicing", {"nvidia.com/mig-1g.5gb": 2}))
    b.add("ts-a100-40gb-mig-renamed", mixed_a100, zone="zone-b",
          sharing=Sharing("time-slicing", {"nvidia.com/mig-1g.5gb": 2, "nvidia.com/mig-2g.10gb": 2}, rename=True))
    a100_40_full = by_product["NVIDIA A100-SXM4-40GB"]
    big_mixed = [*(full_gpus(a100_40_full, 2)), *mig_gpu(a100_migs["1g.5gb"], 7, parent=2),
                 *mig_gpu(a100_migs["3g.20gb"], 2, parent=3)]
    b.add("mixed-a100-40gb-big", big_mixed, zone="us-east-1a")
    # The same, tainted for nvidia.com/gpu only (as GKE taints GPU nodes): a pod requesting MIG resources alone
    # got no toleration for that key from the ExtendedResourceToleration plugin, so it never ran here.
    b.add("mixed-a100-40gb-gpu-tainted", big_mixed, zone="us-east-1a", taints=(GKE_TAINT,))
    for model in ("NVIDIA A100-SXM4-40GB", "NVIDIA A100-SXM4-80GB"):
        short = sanitise(model).lower().removeprefix("nvidia-")
        b.add(f"legacy-{short}-x8", legacy(full_gpus(by_product[model], 8)), zone="zone-b")
    for profile in ("1g.5gb", "3g.20gb"):
        dev = a100_migs[profile]
        b.add(f"legacy-a100-sxm4-40gb-single-{profile.replace('.', '')}", legacy(mig_gpu(dev, mig_per_gpu(dev))),
              zone="zone-a", single=True)
    # The GPU Operator's default single strategy on a node whose GPUs have MIG off: GFD labels it
    # mig.strategy=single and the device plugin serves whole GPUs as nvidia.com/gpu.
    b.add("single-no-mig", full_gpus(a100_40_full, 8), zone="zone-b",
          extra={"nvidia.com/mig.strategy": "single", "nvidia.com/mig.capable": "true"})
    for zone in [*ZONES, GPU_LESS_ZONE]:
        b.add(f"cpu-{zone}", [], zone=zone)
    b.add("cpu-v0", [], zone=ZONES[0])
    return tuple(b.nodes)


def _slice(node: SynthNode) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node.name}-gpu.nvidia.com"},
        "spec": {"driver": "gpu.nvidia.com", "nodeName": node.name,
                 "pool": {"name": node.name, "generation": 1, "resourceSliceCount": 1},
                 "devices": copy.deepcopy(list(node.devices))},
    }


def objects(nodes: Sequence[SynthNode]) -> list[dict[str, Any]]:
    """Node and ResourceSlice objects for the simulator's inventory."""
    out: list[dict[str, Any]] = []
    for n in nodes:
        out.append({"apiVersion": "v1", "kind": "Node",
                    "metadata": {"name": n.name, "labels": dict(n.labels)},
                    "spec": {"taints": [dict(t) for t in n.taints]}})
        if n.devices:
            out.append(_slice(n))
    return out


@cache
def base_inventory() -> Inventory:
    return Inventory.from_objects(objects(base_nodes()))


def config_nodes(key: str, sharing: Sharing | None) -> list[SynthNode]:
    """Nodes labelled nvidia.com/device-plugin.config=<key>, running that config: two T4s, two A100-80GBs
    and the fixture's mixed-strategy A100-40GB (for configs that share MIG resources)."""
    by_name = {s["spec"]["nodeName"]: s["spec"]["devices"] for s in fixture_slices()}
    t4 = next(d for d in by_name["node-t4"] if _is(d, "gpu"))
    a100 = next(d for d in by_name["node-a100-sxm4-80gb"] if _is(d, "gpu"))
    b = _Builder()
    safe = re.sub(r"[^a-z0-9-]", "-", key.lower())[:40]
    extra = {"nvidia.com/device-plugin.config": key}
    b.add(f"cfg-{safe}-t4", full_gpus(t4, 2), zone="zone-a", sharing=sharing, extra=extra)
    b.add(f"cfg-{safe}-a100-80gb", full_gpus(a100, 2), zone="zone-b", sharing=sharing, extra=extra)
    b.add(f"cfg-{safe}-a100-40gb-mixed", by_name["node-a100-sxm4-40gb"], zone="us-east-1a", sharing=sharing,
          extra=extra)
    return b.nodes


def renamed(node: SynthNode, name: str) -> SynthNode:
    """The same node under another name (a preset spec.nodeName that the cluster must have)."""
    return replace(node, name=name, labels={**node.labels, "kubernetes.io/hostname": name})


@dataclass
class Cluster:
    nodes: tuple[SynthNode, ...]
    inventory: Inventory
    by_name: dict[str, SynthNode] = field(init=False)

    def __post_init__(self) -> None:
        self.by_name = {n.name: n for n in self.nodes}


@cache
def base_cluster() -> Cluster:
    return Cluster(base_nodes(), base_inventory())


def with_extras(extra: Sequence[SynthNode]) -> Cluster:
    if not extra:
        return base_cluster()
    nodes = (*base_nodes(), *extra)
    return Cluster(nodes, Inventory.from_objects(objects(nodes)))
