"""Selection equivalence: on a synthetic cluster, every migrated GPU pod fits on exactly the nodes it fitted
on before the migration.

The cluster has one Node per NVIDIA fixture node (dra_migrate/data/devices/nvidia.yaml), one per fixture
device, and an 8-GPU node per full-GPU model, each in two zone/instance-type variants, plus GPU-less nodes.
Node labels are what GPU Feature Discovery (shared/reference/nvidia.md §B8) and the cloud providers would
write for those GPUs; the devices are the fixture's, as the NVIDIA DRA driver publishes them.

BEFORE (device plugin): nodeSelector + required node affinity (`node_matches`) and enough `nvidia.com/gpu`.
Only full GPUs count: under mig.strategy=single the device plugin handed out MIG slices as `nvidia.com/gpu`,
but the migration maps `nvidia.com/gpu` to full GPUs (gpu.nvidia.com) on purpose; that is not a selection
question. AFTER (DRA): the migrated pod through the allocation simulator (node selection, class and request
CEL selectors, firstAvailable), with the real CEL environment. A CEL runtime error aborts scheduling and fails
the test.

Deliberate changes, each with a warning, are normalised out of the BEFORE side: a `-SHARED` product suffix
(DRA314) is read as the plain product. (Device-plugin configuration labels, DRA304, stay on the node
selector, so they need no normalising.) The cloud labels assume one provider labels every GPU node (the
situation in which --move-cloud-labels is meant to be used), so every model gets provider names.

Every golden case whose input has a GPU pod with a nodeSelector or node affinity takes part (found
automatically); its reviewed expected output is the AFTER side.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator, Mapping
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
import yaml

from dra_migrate.cel import parse_quantity
from dra_migrate.selection import node_matches
from dra_migrate.simulate.cluster import ClusterState, simulate_pod
from dra_migrate.simulate.inventory import Inventory
from tests.conftest import GOLDEN

MIB = 2**20
GPU = "nvidia.com/gpu"
ZONES = ["zone-a", "zone-b", "us-east-1a", "us-central1-a", "us-central1-f"]
INSTANCE_TYPES = ["p4d.24xlarge", "a3-highgpu-8g", "g5.xlarge"]

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


def _attr(dev: Mapping[str, Any], name: str) -> str:
    value = dev["attributes"][name]
    return str(value.get("string", value.get("version")))


def _mib(dev: Mapping[str, Any]) -> int:
    return parse_quantity(str(dev["capacity"]["memory"]["value"])).as_integer() // MIB


def _label_profile(profile: str) -> str:
    return profile.replace("+", ".")  # resource-name spelling: 1g.10gb+me → 1g.10gb.me


def gpu_labels(model: Mapping[str, Any]) -> dict[str, str]:
    """Labels GFD derives from one device's NVML data (product, memory, family, versions)."""
    cc = [int(p) for p in _attr(model, "cudaComputeCapability").split(".")]
    drv = [int(p) for p in _attr(model, "driverVersion").split(".")]
    cuda = [int(p) for p in _attr(model, "cudaDriverVersion").split(".")]
    # NVIDIA writes the driver revision with two digits (550.107.02); the device drops the zero.
    rev = f"{drv[2]:02d}"
    labels = {
        "nvidia.com/gpu.product": sanitise(_attr(model, "productName")),
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
        labels["nvidia.com/gpu.memory"] = str(_mib(model))
    return labels


def cloud_labels(product: str) -> dict[str, str]:
    gke, ec2, nominal = CLOUD[product]
    labels = {
        "kubernetes.azure.com/accelerator": "nvidia",
        "karpenter.k8s.aws/instance-gpu-manufacturer": "nvidia",
    }
    if gke:
        labels["cloud.google.com/gke-accelerator"] = gke
    if ec2:
        labels["karpenter.k8s.aws/instance-gpu-name"] = ec2
    if nominal:
        labels["karpenter.k8s.aws/instance-gpu-memory"] = str(nominal)
    return labels


def node_labels(devices: list[dict[str, Any]], *, single_mig: bool = False) -> dict[str, str]:
    """Labels of a node holding `devices` (all of one model, as GFD assumes)."""
    full = [d for d in devices if _attr(d, "type") == "gpu"]
    migs = [d for d in devices if _attr(d, "type") == "mig"]
    parents = {_attr(d, "parentUUID") for d in migs}
    model = (full or migs)[0]
    labels = {**gpu_labels(model), **cloud_labels(_attr(model, "productName"))}
    labels.update({
        "nvidia.com/gpu.count": str(len(full) + len(parents)),
        "nvidia.com/gpu.present": "true",
        "nvidia.com/gpu.replicas": "1",
        "nvidia.com/gpu.sharing-strategy": "none",
        "nvidia.com/mig.capable": "true" if migs else "false",
    })
    if not full:
        labels.pop("nvidia.com/gpu.memory", None)  # the parent's total is unknown from its slices
    if single_mig:
        (mig,) = migs
        profile = _label_profile(_attr(mig, "profile"))
        labels["nvidia.com/mig.strategy"] = "single"
        labels["nvidia.com/gpu.product"] += f"-MIG-{profile}"
        labels["nvidia.com/gpu.count"] = "1"
        labels["nvidia.com/gpu.memory"] = str(_mib(mig))
        for cap, label in [("multiprocessors", "multiprocessors"), ("copyEngines", "engines.copy"),
                           ("decoders", "engines.decoder"), ("encoders", "engines.encoder"),
                           ("jpegEngines", "engines.jpeg"), ("ofaEngines", "engines.ofa")]:
            labels[f"nvidia.com/gpu.{label}"] = str(mig["capacity"][cap]["value"])
    elif migs:
        labels["nvidia.com/mig.strategy"] = "mixed"
        for profile in sorted({_attr(d, "profile") for d in migs}):
            same = [d for d in migs if _attr(d, "profile") == profile]
            key = f"nvidia.com/mig-{_label_profile(profile)}"
            labels[f"{key}.count"] = str(len(same))
            labels[f"{key}.memory"] = str(_mib(same[0]))
    return labels


@cache
def _fixture_slices() -> tuple[dict[str, Any], ...]:
    text = resources.files("dra_migrate").joinpath("data/devices/nvidia.yaml").read_text(encoding="utf-8")
    out: list[dict[str, Any]] = []
    for doc in yaml.safe_load_all(text):
        out.extend(doc["items"] if doc.get("kind") == "List" else [doc])
    return tuple(out)


def _node(
    name: str, labels: dict[str, str], devices: list[dict[str, Any]], zone: int, instance: int
) -> list[dict[str, Any]]:
    labels = {
        **labels,
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "topology.kubernetes.io/zone": ZONES[zone % len(ZONES)],
        "node.kubernetes.io/instance-type": INSTANCE_TYPES[instance % len(INSTANCE_TYPES)],
    }
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}}
    objs: list[dict[str, Any]] = [node]
    if devices:
        objs.append({
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": f"{name}-gpu.nvidia.com"},
            "spec": {"driver": "gpu.nvidia.com", "nodeName": name,
                     "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                     "devices": copy.deepcopy(devices)},
        })
    return objs


@cache
def cluster() -> tuple[Inventory, dict[str, dict[str, str]], dict[str, int]]:
    """(inventory, labels by node, full GPUs by node)."""
    groups: list[tuple[str, dict[str, str], list[dict[str, Any]]]] = []
    for s in _fixture_slices():
        base = s["spec"]["nodeName"]
        devices = s["spec"]["devices"]
        groups.append((base, node_labels(devices), devices))
        for dev in devices:
            single = _attr(dev, "type") == "mig"
            groups.append((f"{base}-{dev['name']}", node_labels([dev], single_mig=single), [dev]))
        full = [d for d in devices if _attr(d, "type") == "gpu"]
        if full:
            eight = [{**copy.deepcopy(full[0]), "name": f"gpu-{i}"} for i in range(8)]
            groups.append((f"{base}-x8", node_labels(eight), eight))
    groups.append(("cpu", {}, []))
    objects: list[dict[str, Any]] = []
    labels: dict[str, dict[str, str]] = {}
    gpus: dict[str, int] = {}
    slices: dict[str, int] = {}
    for i, (base, lab, devices) in enumerate(groups):
        for v in (0, 1):
            name = f"{base}-v{v}"
            objs = _node(name, lab, devices, zone=i + 2 * v, instance=i + v)
            objects.extend(objs)
            labels[name] = objs[0]["metadata"]["labels"]
            gpus[name] = sum(1 for d in devices if _attr(d, "type") == "gpu")
            slices[name] = sum(1 for d in devices if _attr(d, "type") == "mig")
    _SLICES.update(slices)
    return Inventory.from_objects(objects), labels, gpus


# MIG slices per node: under the single strategy the device plugin advertised them as nvidia.com/gpu. A pod that
# pins that strategy (nodeSelector nvidia.com/mig.strategy=single, or a `-MIG-<profile>` product label) is
# migrated to mig.nvidia.com; any other nvidia.com/gpu request is migrated to full GPUs on purpose (DRA508
# warns where the repo says the cluster uses the single strategy), so only full GPUs count for it.
_SLICES: dict[str, int] = {}


def _pins_single_strategy(spec: Mapping[str, Any]) -> bool:
    ns = spec.get("nodeSelector") or {}
    text = json.dumps(spec.get("affinity") or {}) + json.dumps(ns)
    return ns.get("nvidia.com/mig.strategy") == "single" or "-MIG-" in text


# --- golden cases → pods before and after ------------------------------------------------------------------

def _docs(path: Path) -> list[Any]:
    try:
        text = path.read_bytes().decode("utf-8-sig")
        docs = list(yaml.safe_load_all(text))
    except (UnicodeDecodeError, yaml.YAMLError):
        return []
    out: list[Any] = []
    for d in docs:
        if isinstance(d, dict) and d.get("kind") == "List" and isinstance(d.get("items"), list):
            out.extend(d["items"])
        elif isinstance(d, dict):
            out.append(d)
    return out


def _key(obj: Mapping[str, Any]) -> tuple[str, str, str]:
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    return str(obj.get("kind")), str(meta.get("namespace") or ""), str(meta.get("name") or "")


def _pod_specs(node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], dict[str, Any]]]:
    if isinstance(node, dict):
        if isinstance(node.get("containers"), list):
            yield path, node
            return
        for k, v in node.items():
            yield from _pod_specs(v, (*path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _pod_specs(v, (*path, i))


def _at(node: Any, path: tuple[Any, ...]) -> Any:
    for seg in path:
        node = node[seg]
    return node


def _gpus(c: Mapping[str, Any]) -> int:
    res = c.get("resources") if isinstance(c.get("resources"), dict) else {}
    for section in ("limits", "requests"):
        value = (res.get(section) or {}).get(GPU)
        if value is not None:
            text = str(value)
            return int(text) if text.isdigit() else 0  # invalid counts are the invalid-counts case's business
    return 0


def gpus_needed(spec: Mapping[str, Any]) -> int:
    app = sum(_gpus(c) for c in spec.get("containers") or [] if isinstance(c, dict))
    init = [_gpus(c) for c in spec.get("initContainers") or [] if isinstance(c, dict)]
    return max([app, *init])


def _required_terms(spec: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    na = ((spec.get("affinity") or {}).get("nodeAffinity") or {})
    req = na.get("requiredDuringSchedulingIgnoredDuringExecution")
    return None if req is None else list(req.get("nodeSelectorTerms") or [])


def _has_node_selection(spec: Mapping[str, Any]) -> bool:
    na = (spec.get("affinity") or {}).get("nodeAffinity") if isinstance(spec.get("affinity"), dict) else None
    return bool(spec.get("nodeSelector") or na)


Pod = tuple[str, dict[str, Any], dict[str, Any], dict[str, dict[str, Any]]]  # id, before, after, templates


def case_pods(case: Path) -> list[Pod]:
    before = {_key(o): o for f in sorted(case.glob("input*")) for o in _docs(f)}
    after_objs = [o for f in sorted((case / "expected").iterdir()) for o in _docs(f)]
    after = {_key(o): o for o in after_objs}
    # claim templates and named (shared) claims, told apart by kind in fits_after
    templates = {_key(o)[2]: o for o in after_objs if o.get("kind") in ("ResourceClaimTemplate", "ResourceClaim")}
    pods: list[Pod] = []
    for key, obj in before.items():
        if key not in after:
            continue
        for path, spec in _pod_specs(obj):
            if not gpus_needed(spec) or not _has_node_selection(spec):
                continue
            migrated = _at(after[key], path)
            if gpus_needed(migrated) or not migrated.get("resourceClaims"):
                continue  # left as it was (an error or an uncovered shape): nothing to compare
            pods.append((f"{'/'.join(key)}@{'.'.join(map(str, path))}", spec, migrated, templates))
    return pods


def _case_has_gpu_selection(case: Path) -> bool:
    return any(
        gpus_needed(spec) and _has_node_selection(spec)
        for f in case.glob("input*") for o in _docs(f) for _p, spec in _pod_specs(o)
    )


CASES = sorted(
    p for p in GOLDEN.iterdir()
    if p.is_dir() and (p / "expected").is_dir() and _case_has_gpu_selection(p)
)


def _normalise_value(key: str, value: Any) -> str:
    text = str(value)
    if key == "nvidia.com/gpu.product" and text.endswith("-SHARED"):
        return text[: -len("-SHARED")]
    return text


def _dropped(key: Any) -> bool:
    """Labels the migration removes from the node side without an equivalent: none since DRA304 keeps them."""
    return False


def _normalise_term(term: dict[str, Any]) -> dict[str, Any]:
    exprs = [
        {**e, "values": [_normalise_value(str(e.get("key")), v) for v in e.get("values") or []]}
        for e in term.get("matchExpressions") or [] if not _dropped(e.get("key"))
    ]
    out = {**term, "matchExpressions": exprs}
    if not exprs and not term.get("matchFields") and term.get("matchExpressions"):
        # every requirement was a dropped label: the term no longer restricts anything
        out["matchExpressions"] = [{"key": "kubernetes.io/os", "operator": "Exists"}]
    return out


def fits_before(spec: Mapping[str, Any]) -> set[str]:
    _inv, labels, gpus = cluster()
    need = gpus_needed(spec)
    raw = spec.get("nodeSelector") or {}
    selector = {str(k): _normalise_value(str(k), v) for k, v in raw.items() if not _dropped(k)}
    terms = _required_terms(spec)
    terms = None if terms is None else [_normalise_term(t) for t in terms]
    capacity = _SLICES if _pins_single_strategy(spec) else gpus
    return {n for n, lab in labels.items() if capacity.get(n, 0) >= need and node_matches(lab, selector, terms, name=n)}


def fits_after(spec: Mapping[str, Any], templates: Mapping[str, Mapping[str, Any]]) -> set[str]:
    inv, _labels, _gpus = cluster()
    rcts = {n: o for n, o in templates.items() if o.get("kind") == "ResourceClaimTemplate"}
    claims = {n: o for n, o in templates.items() if o.get("kind") == "ResourceClaim"}
    sim = simulate_pod(spec, rcts, claims, inv, ClusterState())
    assert sim.error is None, f"scheduling would abort: {sim.error}"
    return set(sim.nodes)


def test_cases_are_discovered() -> None:
    names = {c.name for c in CASES}
    assert {"sel-product", "sel-memory", "sel-or-separable", "sel-preferred", "sel-cloud-moved"} <= names


def test_cluster_labels_are_gfd_shaped() -> None:
    _inv, labels, gpus = cluster()
    h100 = labels["node-h100-sxm-x8-v0"]
    assert h100["nvidia.com/gpu.product"] == "NVIDIA-H100-80GB-HBM3"
    assert h100["nvidia.com/gpu.memory"] == "81559"
    assert h100["nvidia.com/gpu.family"] == "hopper"
    assert gpus["node-h100-sxm-x8-v0"] == 8
    a100 = labels["node-a100-sxm4-80gb-v0"]
    assert a100["nvidia.com/cuda.driver-version.full"] == "550.107.02"
    assert a100["nvidia.com/mig.strategy"] == "mixed"
    assert a100["nvidia.com/mig-1g.10gb.me.count"] == "1"
    single = labels["node-a100-sxm4-40gb-gpu-0-mig-1g5gb-19-0-v0"]
    assert single["nvidia.com/gpu.product"] == "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb"
    assert single["nvidia.com/gpu.memory"] == "4864"
    assert labels["node-t4-v0"]["nvidia.com/gpu.family"] == "turing"
    assert labels["node-l4-v0"]["nvidia.com/gpu.family"] == "ada-lovelace"
    assert sanitise("NVIDIA RTX 6000 Ada Generation (x)") == "NVIDIA-RTX-6000-Ada-Generation-x"


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_selection_is_equivalent(case: Path) -> None:
    pods = case_pods(case)
    if not pods:
        pytest.skip("no migrated GPU pod with node selection")
    for pod_id, before, after, templates in pods:
        want, got = fits_before(before), fits_after(after, templates)
        assert got == want, json.dumps({
            "pod": pod_id, "only_before": sorted(want - got), "only_after": sorted(got - want)}, indent=1)


def test_equivalence_detects_a_wrong_selector() -> None:
    """The comparison can fail: a selector that admits a wrong model shows up as extra nodes."""
    case = GOLDEN / "sel-product"
    pod_id, before, after, templates = next(p for p in case_pods(case) if "h100" in p[0])
    tampered = copy.deepcopy(dict(templates))
    for t in tampered.values():
        for r in t["spec"]["spec"]["devices"]["requests"]:
            r.get("exactly", {}).pop("selectors", None)
    assert fits_after(after, tampered) > fits_before(before)
