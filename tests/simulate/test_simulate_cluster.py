"""Inventory loading, GFD-derived inventories and pod placement across nodes."""

from __future__ import annotations

import textwrap
from typing import Any

import pytest
import yaml

from dra_migrate.simulate.allocator import Allocator
from dra_migrate.simulate.claims import ClaimSpec, parse_claim_spec
from dra_migrate.simulate.cluster import ClusterState, commit, place_replicas, simulate_pod
from dra_migrate.simulate.engine import CelEngine, SelectorEngine
from dra_migrate.simulate.gfd import dra_profile, inventory_from_nodes, product_name
from dra_migrate.simulate.inventory import DeviceId, Inventory
from tests.simulate_fakes import FakeEngine

GPU = "gpu.nvidia.com"
A100 = "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA A100-SXM4-80GB'"
T4 = "device.attributes['gpu.nvidia.com'].productName == 'Tesla T4'"


_ENGINES: dict[str, type[FakeEngine] | type[CelEngine]] = {"fake": FakeEngine, "cel": CelEngine}
_current = {"engine": "fake"}


@pytest.fixture(params=sorted(_ENGINES), autouse=True)
def engine_name(request: pytest.FixtureRequest) -> str:
    """Every case runs with the fake engine and with the real CEL environment (dra_migrate.cel)."""
    _current["engine"] = request.param
    return str(request.param)


def make_engine() -> SelectorEngine:
    return _ENGINES[_current["engine"]]()


def gfd_node(name: str, product: str, count: int, memory: int, **extra: str) -> dict[str, Any]:
    labels = {
        "nvidia.com/gpu.product": product,
        "nvidia.com/gpu.count": str(count),
        "nvidia.com/gpu.memory": str(memory),
        **{f"nvidia.com/{k.replace('_', '.')}": v for k, v in extra.items()},
    }
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}}


def template(name: str, *requests: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name},
        "spec": {"spec": {"devices": {"requests": list(requests)}}},
    }


def gpu_request(name: str, count: int = 1, cls: str = GPU, selector: str | None = None) -> dict[str, Any]:
    exactly: dict[str, Any] = {"deviceClassName": cls, "count": count}
    if selector:
        exactly["selectors"] = [{"cel": {"expression": selector}}]
    return {"name": name, "exactly": exactly}


def pod(*claims: dict[str, str], node_selector: dict[str, str] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "x"}], "resourceClaims": list(claims)}
    if node_selector:
        spec["nodeSelector"] = node_selector
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec}


def mixed_inventory() -> Inventory:
    return inventory_from_nodes(
        [
            gfd_node("a100-1", "NVIDIA-A100-SXM4-80GB", 4, 81920, gpu_family="ampere"),
            gfd_node("t4-1", "Tesla-T4-SHARED", 2, 15360, gpu_family="turing"),
            {"kind": "Node", "metadata": {"name": "cpu-1", "labels": {}}},
        ]
    )


# --- inventory -----------------------------------------------------------------------------------


KUBECTL_LIST = textwrap.dedent(
    """\
    apiVersion: v1
    kind: List
    items:
    - apiVersion: resource.k8s.io/v1
      kind: ResourceSlice
      metadata: {name: node-1-gpu-b}
      spec:
        driver: gpu.nvidia.com
        nodeName: node-1
        pool: {name: node-1, generation: 3, resourceSliceCount: 2}
        devices:
        - name: gpu-1
          attributes: {type: {string: gpu}, productName: {string: NVIDIA A100-SXM4-80GB}}
    - apiVersion: resource.k8s.io/v1
      kind: ResourceSlice
      metadata: {name: node-1-gpu-a}
      spec:
        driver: gpu.nvidia.com
        nodeName: node-1
        pool: {name: node-1, generation: 3, resourceSliceCount: 2}
        devices:
        - name: gpu-0
          attributes: {type: {string: gpu}, productName: {string: NVIDIA A100-SXM4-80GB}}
    - apiVersion: resource.k8s.io/v1
      kind: ResourceSlice
      metadata: {name: node-1-gpu-old}
      spec:
        driver: gpu.nvidia.com
        nodeName: node-1
        pool: {name: node-1, generation: 2, resourceSliceCount: 1}
        devices:
        - name: gpu-9
          attributes: {type: {string: gpu}}
    metadata: {resourceVersion: ""}
    """
)


def test_multi_slice_pool_from_kubectl_list() -> None:
    inv = Inventory.from_objects([yaml.safe_load(KUBECTL_LIST)])
    assert inv.warnings == []
    [pool] = inv.pools_for_node("node-1")
    # generation 2 is obsolete; both generation-3 slices form the pool, slices in name order
    assert [d.name for d in pool.devices] == ["gpu-0", "gpu-1"]
    result = Allocator(inv, make_engine()).allocate([_claim(gpu_request("gpus", 2))], "node-1")
    assert result.success
    assert result.claims[0].devices == (DeviceId(GPU, "node-1", "gpu-0"), DeviceId(GPU, "node-1", "gpu-1"))


def test_multi_slice_pool_with_missing_slice_is_excluded() -> None:
    docs = [d for d in yaml.safe_load(KUBECTL_LIST)["items"] if d["metadata"]["name"] != "node-1-gpu-b"]
    inv = Inventory.from_objects(docs)
    assert [w.kind for w in inv.warnings] == ["incomplete-pool"]
    assert "1 of 2 slices at generation 3" in inv.warnings[0].message
    result = Allocator(inv, make_engine()).allocate([_claim(gpu_request("gpus", 1))], "node-1")
    assert not result.success and result.excluded_pools == ["gpu.nvidia.com/node-1"]


def test_slice_node_selector_and_all_nodes() -> None:
    objs = [
        {"kind": "Node", "metadata": {"name": "n1", "labels": {"zone": "a"}}},
        {"kind": "Node", "metadata": {"name": "n2", "labels": {"zone": "b"}}},
        {
            "kind": "ResourceSlice",
            "metadata": {"name": "net"},
            "spec": {
                "driver": GPU,
                "pool": {"name": "zone-a", "generation": 0, "resourceSliceCount": 1},
                "nodeSelector": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}
                    ]
                },
                "devices": [{"name": "gpu-0", "attributes": {"type": {"string": "gpu"}}}],
            },
        },
    ]
    inv = Inventory.from_objects(objs)
    assert [p.key for p in inv.pools_for_node("n1")] == ["gpu.nvidia.com/zone-a"]
    assert inv.pools_for_node("n2") == []


def test_v1beta1_basic_device_shape() -> None:
    inv = Inventory.from_objects(
        [
            {
                "kind": "ResourceSlice",
                "metadata": {"name": "s"},
                "spec": {
                    "driver": GPU,
                    "nodeName": "n",
                    "pool": {"name": "n", "generation": 0, "resourceSliceCount": 1},
                    "devices": [
                        {
                            "name": "gpu-0",
                            "basic": {
                                "attributes": {"type": {"string": "gpu"}},
                                "capacity": {"memory": {"value": "40Gi"}},
                            },
                        }
                    ],
                },
            }
        ]
    )
    [dev] = inv.pools_for_node("n")[0].devices
    assert dev.attributes == {"type": {"string": "gpu"}} and dev.capacity == {"memory": {"value": "40Gi"}}


def test_default_classes_are_nvidia_chart_classes() -> None:
    classes = Inventory.from_objects([]).classes
    assert sorted(classes) == ["gpu.nvidia.com", "mig.nvidia.com", "vfio.gpu.nvidia.com"]
    assert classes["mig.nvidia.com"].selectors == (
        "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'",
    )


# --- GFD labels -> expected slices ---------------------------------------------------------------


def test_gfd_full_gpus() -> None:
    inv = inventory_from_nodes(
        [
            gfd_node(
                "n",
                "NVIDIA-A100-SXM4-80GB",
                2,
                81920,
                gpu_family="ampere",
                **{
                    "gpu_compute_major": "8",
                    "gpu_compute_minor": "0",
                    "cuda_driver-version_full": "550.107.02",
                    "cuda_runtime-version_major": "12",
                    "cuda_runtime-version_minor": "4",
                },
            )
        ]
    )
    devices = inv.pools_for_node("n")[0].devices
    assert [d.name for d in devices] == ["gpu-0", "gpu-1"]
    attrs = devices[0].attributes
    assert attrs["productName"] == {"string": "NVIDIA A100-SXM4-80GB"}
    assert attrs["architecture"] == {"string": "Ampere"}
    assert attrs["cudaComputeCapability"] == {"version": "8.0.0"}
    assert attrs["driverVersion"] == {"version": "550.107.2"}
    assert attrs["cudaDriverVersion"] == {"version": "12.4.0"}
    assert devices[0].capacity == {"memory": {"value": "81920Mi"}}
    assert inv.warnings == []  # known product name, no guess


def test_gfd_product_name_fallback_and_table() -> None:
    assert product_name("NVIDIA-H100-80GB-HBM3") == "NVIDIA H100 80GB HBM3"  # from the table
    assert product_name("Tesla-T4") == "Tesla T4"  # fallback: first '-' only
    assert product_name("NVIDIA-A10G") == "NVIDIA A10G"
    assert dra_profile("1g.10gb.me") == "1g.10gb+me"
    assert dra_profile("3g.40gb") == "3g.40gb"


def test_gfd_mig_single_and_mixed() -> None:
    single = gfd_node("s", "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb", 14, 4864, mig_strategy="single")
    mixed = gfd_node(
        "m",
        "NVIDIA-A100-SXM4-80GB",
        4,
        81920,
        mig_strategy="mixed",
        **{"mig-3g_40gb.count": "2", "mig-1g_10gb_me.count": "1"},
    )
    assert "nvidia.com/mig-1g.10gb.me.count" in mixed["metadata"]["labels"]
    inv = inventory_from_nodes([single, mixed])
    s_devs = inv.pools_for_node("s")[0].devices
    assert len(s_devs) == 14 and {d.attributes["type"]["string"] for d in s_devs} == {"mig"}
    assert len({d.attributes["parentUUID"]["string"] for d in s_devs}) == 2  # 7 x 1g slices per GPU
    m_devs = inv.pools_for_node("m")[0].devices
    types = [d.attributes["type"]["string"] for d in m_devs]
    # 2x3g + 1x1g = 7 slices = one GPU hosts the MIG devices, three stay full GPUs
    assert types == ["gpu", "gpu", "gpu", "mig", "mig", "mig"]
    assert {d.attributes["profile"]["string"] for d in m_devs if "profile" in d.attributes} == {
        "1g.10gb+me",
        "3g.40gb",
    }
    assert [w.kind for w in inv.warnings] == ["lossy-label"]


# --- pods and replicas ---------------------------------------------------------------------------


def _claim(*requests: dict[str, Any]) -> ClaimSpec:
    return parse_claim_spec({"devices": {"requests": list(requests)}}, "claim-0")


def test_mixed_a100_t4_first_available_replicas() -> None:
    inv = mixed_inventory()
    templates = {
        "gpus": template(
            "gpus",
            {
                "name": "gpu",
                "firstAvailable": [
                    {
                        "name": "a100",
                        "deviceClassName": GPU,
                        "count": 2,
                        "selectors": [{"cel": {"expression": A100}}],
                    },
                    {
                        "name": "t4",
                        "deviceClassName": GPU,
                        "count": 2,
                        "selectors": [{"cel": {"expression": T4}}],
                    },
                ],
            },
        )
    }
    report = place_replicas(
        4, pod({"name": "g", "resourceClaimTemplateName": "gpus"}), templates, {}, inv, engine=make_engine()
    )
    assert report.fit == 3
    assert [(p.node, p.subrequests[("g", "gpu")]) for p in report.placed] == [
        ("a100-1", "a100"),
        ("a100-1", "a100"),
        ("t4-1", "t4"),
    ]
    assert report.placed[0].devices["g"] == (
        DeviceId(GPU, "a100-1", "gpu-0"),
        DeviceId(GPU, "a100-1", "gpu-1"),
    )
    failure = report.failure
    assert failure is not None and not failure.fits and failure.error is None
    t4 = failure.rejected["t4-1"]
    assert not isinstance(t4, str)
    # near miss on t4-1: both GPUs match the class and the t4 selector, none is free any more
    by_sub = {d.subrequest: d for d in t4.diagnoses}
    assert (by_sub["t4"].class_matches, by_sub["t4"].matching, by_sub["t4"].available) == (2, 2, 0)
    assert by_sub["a100"].matching == 0


def test_pod_node_selector_respected() -> None:
    inv = mixed_inventory()
    templates = {"one": template("one", gpu_request("gpu"))}
    sim = simulate_pod(
        pod(
            {"name": "g", "resourceClaimTemplateName": "one"},
            node_selector={"nvidia.com/gpu.product": "Tesla-T4-SHARED"},
        ),
        templates,
        {},
        inv,
        ClusterState(),
        allocator=Allocator(inv, make_engine()),
    )
    assert sim.nodes == ["t4-1"]
    assert sim.rejected["a100-1"] == "node does not match the pod's nodeSelector"


def test_named_claim_is_allocated_once_and_pins_consumers() -> None:
    inv = mixed_inventory()
    shared = {
        "shared-gpu": {
            "kind": "ResourceClaim",
            "metadata": {"name": "shared-gpu"},
            "spec": {"devices": {"requests": [gpu_request("gpu", 1, selector=T4)]}},
        }
    }
    report = place_replicas(
        3, pod({"name": "s", "resourceClaimName": "shared-gpu"}), {}, shared, inv, engine=make_engine()
    )
    assert report.fit == 3
    assert {p.node for p in report.placed} == {"t4-1"}
    assert {p.devices["s"] for p in report.placed} == {(DeviceId(GPU, "t4-1", "gpu-0"),)}


def test_template_claims_are_per_pod_and_state_accumulates() -> None:
    inv = mixed_inventory()
    templates = {"one": template("one", gpu_request("gpu", 1, selector=T4))}
    state = ClusterState()
    allocator = Allocator(inv, make_engine())
    spec = pod({"name": "g", "resourceClaimTemplateName": "one"})
    seen = []
    for _ in range(3):
        sim = simulate_pod(spec, templates, {}, inv, state, allocator=allocator)
        if not sim.fits:
            break
        commit(sim, sim.candidates[0], state)
        seen.append(sim.candidates[0].devices)
    assert seen == [{DeviceId(GPU, "t4-1", "gpu-0")}, {DeviceId(GPU, "t4-1", "gpu-1")}]


def test_cel_runtime_error_aborts_pod_on_all_nodes() -> None:
    # 'brand' is not derivable from GFD labels, so the lookup errors on every GPU: the pod gets an error,
    # not an empty candidate list.
    inv = mixed_inventory()
    templates = {
        "one": template(
            "one", gpu_request("gpu", selector="device.attributes['gpu.nvidia.com'].brand == 'Nvidia'")
        )
    }
    sim = simulate_pod(
        pod({"name": "g", "resourceClaimTemplateName": "one"}),
        templates,
        {},
        inv,
        ClusterState(),
        allocator=Allocator(inv, make_engine()),
    )
    assert not sim.fits
    assert sim.error == "claim g: selector #0: CEL runtime error: no such key: brand"


def test_missing_template_is_an_error() -> None:
    inv = mixed_inventory()
    sim = simulate_pod(
        pod({"name": "g", "resourceClaimTemplateName": "nope"}),
        {},
        {},
        inv,
        ClusterState(),
        allocator=Allocator(inv, make_engine()),
    )
    assert sim.error == 'resourceclaimtemplate "nope" not found'


def test_pod_without_claims_fits_everywhere() -> None:
    inv = mixed_inventory()
    sim = simulate_pod(pod(), {}, {}, inv, ClusterState(), allocator=Allocator(inv, make_engine()))
    assert sim.nodes == ["a100-1", "cpu-1", "t4-1"]
