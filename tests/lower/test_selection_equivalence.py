"""Selection equivalence: the synthetic cluster's labels are what GFD and the cloud providers write, and the
node-set comparison finds a selector that admits the wrong GPUs.

The per-case check that every migrated golden pod fits on exactly the nodes it fitted on before is now the
`node-set` property of tests/e2e/test_pod_equivalence.py (with the other properties of issue #19, one xfail
table); the oracle lives in tests/equivalence/.
"""

from __future__ import annotations

import copy
from typing import Any

import yaml

from tests.conftest import GOLDEN
from tests.equivalence import properties as P
from tests.equivalence.cluster import GPU_LESS_ZONE, base_cluster, sanitise
from tests.equivalence.manifests import documents


def _selection_cases() -> set[str]:
    out = set()
    for path in GOLDEN.iterdir():
        if (path / "expected").is_dir():
            case = P.Case.golden(path)
            if any(p.migrated and (p.before_spec.get("nodeSelector") or p.before_spec.get("affinity"))
                   for p in case.pods):
                out.add(path.name)
    return out


def test_cases_are_discovered() -> None:
    assert {"sel-product", "sel-memory", "sel-or-separable", "sel-preferred", "sel-cloud-moved"} <= _selection_cases()


def test_cluster_labels_are_gfd_shaped() -> None:
    nodes = base_cluster().by_name
    h100 = nodes["node-h100-sxm-x8-v0"]
    assert h100.labels["nvidia.com/gpu.product"] == "NVIDIA-H100-80GB-HBM3"
    assert h100.labels["nvidia.com/gpu.memory"] == "81559"
    assert h100.labels["nvidia.com/gpu.family"] == "hopper"
    assert h100.allocatable == {"nvidia.com/gpu": 8}
    a100 = nodes["node-a100-sxm4-80gb-v0"].labels
    assert a100["nvidia.com/cuda.driver-version.full"] == "550.107.02"
    assert a100["nvidia.com/mig.strategy"] == "mixed"
    assert a100["nvidia.com/mig-1g.10gb.me.count"] == "1"
    single = nodes["node-a100-sxm4-40gb-single-1g5gb"]
    assert single.labels["nvidia.com/gpu.product"] == "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb"
    assert single.labels["nvidia.com/gpu.memory"] == "4864"
    assert single.labels["nvidia.com/gpu.count"] == "7"
    assert single.allocatable == {"nvidia.com/gpu": 7} and single.sliced
    assert all(d["attributes"]["type"]["string"] == "mig" for d in single.devices)  # MIG on: slices only
    assert nodes["node-t4-v0"].labels["nvidia.com/gpu.family"] == "turing"
    assert nodes["node-l4-v0"].labels["nvidia.com/gpu.family"] == "ada-lovelace"
    assert sanitise("NVIDIA RTX 6000 Ada Generation (x)") == "NVIDIA-RTX-6000-Ada-Generation-x"


def test_cluster_has_the_nodes_that_make_differences_visible() -> None:
    nodes = base_cluster().by_name
    gke = nodes["gke-tesla-a100-1g5gb"]
    assert gke.labels["cloud.google.com/gke-gpu-partition-size"] == "1g.5gb"
    assert gke.allocatable == {"nvidia.com/gpu": 7} and gke.sliced and gke.taints
    assert {d["attributes"]["type"]["string"] for d in gke.devices} == {"mig"}
    assert nodes["node-l4-x3"].allocatable == {"nvidia.com/gpu": 3}
    ts = nodes["ts-t4"]
    assert ts.labels["nvidia.com/gpu.product"] == "Tesla-T4-SHARED"
    assert (ts.labels["nvidia.com/gpu.replicas"], ts.labels["nvidia.com/gpu.sharing-strategy"]) == ("4", "time-slicing")
    assert ts.allocatable == {"nvidia.com/gpu": 8}
    assert nodes["ts-a100-80gb-renamed"].allocatable == {"nvidia.com/gpu.shared": 8}
    mps = nodes["mps-l4"]
    assert mps.labels["nvidia.com/mps.capable"] == "true" and mps.sharing is not None and mps.sharing.fail_gt_one
    zones = {n.labels["topology.kubernetes.io/zone"] for n in nodes.values()}
    gpu_zones = {n.labels["topology.kubernetes.io/zone"] for n in nodes.values() if n.devices}
    assert "zone-c" in zones - gpu_zones and len(gpu_zones) >= 5
    assert any(not n.devices for n in nodes.values())


def test_equivalence_detects_a_wrong_selector() -> None:
    """The comparison can fail: a selector that admits a wrong model shows up as extra nodes."""
    case = P.Case.golden(GOLDEN / "sel-product")
    pod = next(p for p in case.migrated if "h100" in p.id)
    assert pod.before_nodes == pod.after_nodes and pod.before_nodes

    outputs = {}
    for name, data in case.outputs.items():
        docs: list[dict[str, Any]] = [copy.deepcopy(o) for d in documents(name, data) for o in d.objects]
        for o in docs:
            if o.get("kind") == "ResourceClaimTemplate":
                for r in o["spec"]["spec"]["devices"]["requests"]:
                    r.get("exactly", {}).pop("selectors", None)
        outputs[name] = yaml.safe_dump_all(docs).encode()
    tampered = P.Case(case.name, case.inputs, outputs, case.diagnostics_text, case.args, case.base)
    pod = next(p for p in tampered.migrated if "h100" in p.id)
    assert pod.after_nodes > pod.before_nodes


def test_spread_domains_detect_a_moved_label() -> None:
    """Dropping the GPU label from the node side adds the GPU-less zone as a domain (nodeAffinityPolicy Honor);
    with Ignore every node counts anyway."""
    spec: dict[str, Any] = {"nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}}
    zone = {"topologyKey": "topology.kubernetes.io/zone", "maxSkew": 1, "whenUnsatisfiable": "DoNotSchedule"}
    moved: dict[str, Any] = {"nodeSelector": {}}
    cluster = base_cluster()
    kept, gone = P.domains(spec, zone, [], cluster), P.domains(moved, zone, [], cluster)
    assert GPU_LESS_ZONE in gone - kept and kept
    ignore = {**zone, "nodeAffinityPolicy": "Ignore"}
    assert P.domains(spec, ignore, [], cluster) == gone
    honor_taints = {**zone, "topologyKey": "kubernetes.io/hostname", "nodeTaintsPolicy": "Honor"}
    gke = {"nodeSelector": {"cloud.google.com/gke-accelerator": "nvidia-tesla-a100"}}
    assert "gke-a100-full" in P.domains(gke, {**honor_taints, "nodeTaintsPolicy": "Ignore"}, [], cluster)
    assert "gke-a100-full" not in P.domains(gke, honor_taints, [], cluster)
    tolerated = P.domains(gke, honor_taints, [{"key": "nvidia.com/gpu", "operator": "Exists"}], cluster)
    assert "gke-a100-full" in tolerated
