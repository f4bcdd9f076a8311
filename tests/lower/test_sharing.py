"""Sharing inventory discovery, MIG profile parsing, and the opaque GPU config schema."""

from __future__ import annotations

from pathlib import Path

import pytest

from dra_migrate.frontend.mig import profile_from_product, profile_from_resource, profiles_for
from dra_migrate.lower.sharing.model import MPS, NONE, TIME_SLICING, SharingInventory
from dra_migrate.lower.sharing.opaque import gpu_sharing_parameters, schema_errors
from dra_migrate.run.sharing_configs import parse_config, scan_bytes, scan_sharing_configs
from tests.conftest import GOLDEN
from tests.golden_runner import run_case
from tests.integration_helpers import time_slicing_config
from tests.oracle import documents

TS_CM = b"""apiVersion: v1
kind: ConfigMap
metadata: {name: plugin-config, namespace: gpu-operator}
data:
  ts: |-
    version: v1
    sharing:
      timeSlicing:
        renameByDefault: true
        resources:
        - {name: nvidia.com/gpu, replicas: 4}
  mps: |-
    version: v1
    sharing:
      mps:
        resources:
        - {name: nvidia.com/gpu, replicas: 3}
  plain: |-
    version: v1
    flags: {migStrategy: mixed}
  unrelated: "hello"
"""


def _inv(*docs: bytes) -> SharingInventory:
    inv = SharingInventory()
    for i, d in enumerate(docs):
        scan_bytes(f"f{i}.yaml", d, inv)
    return inv


def test_configmap_configs_are_read_with_their_defaults() -> None:
    inv = _inv(TS_CM)
    by_key = {c.key: c for c in inv.configs}
    assert set(by_key) == {"ts", "mps", "plain"}
    assert by_key["ts"].strategy == TIME_SLICING and by_key["ts"].rename_by_default
    assert by_key["ts"].replicas_for("nvidia.com/gpu.shared") == 4
    assert by_key["ts"].replicas_for("nvidia.com/gpu") is None
    assert not by_key["ts"].fail_requests_greater_than_one  # time-slicing default false
    assert by_key["mps"].strategy == MPS and by_key["mps"].fail_requests_greater_than_one  # MPS default true
    assert by_key["plain"].strategy == NONE and by_key["plain"].mig_strategy == "mixed"
    assert by_key["ts"].config_map == "plugin-config" and by_key["ts"].namespace == "gpu-operator"
    assert by_key["ts"].line == 5


def test_resolution_needs_a_default_or_a_node_selector() -> None:
    inv = _inv(TS_CM)
    res = inv.resolve("nvidia.com/gpu", {})
    assert res.config is None and [c.key for c in res.candidates] == ["mps"]  # ambiguous
    assert inv.resolve("nvidia.com/gpu", {"nvidia.com/device-plugin.config": "mps"}).replicas == 3
    policy = b"""apiVersion: nvidia.com/v1
kind: ClusterPolicy
metadata: {name: cluster-policy}
spec:
  devicePlugin:
    config: {name: plugin-config, default: plain}
"""
    inv = _inv(TS_CM, policy)
    res = inv.resolve("nvidia.com/gpu", {})
    assert res.config is not None and res.config.key == "plain" and res.replicas is None
    assert inv.mig_strategy() is not None  # ClusterPolicy without mig.strategy: the operator's single


def test_helm_values_of_both_charts_and_node_labels(tmp_path: Path) -> None:
    (tmp_path / "gpu-operator-values.yaml").write_text(
        "devicePlugin:\n  config:\n    name: cm\n    default: any\n    data:\n      any: |-\n        version: v1\n"
        "        sharing:\n          timeSlicing:\n            resources:\n            - name: nvidia.com/gpu\n"
        "              replicas: 2\nmig:\n  strategy: mixed\n"
    )
    (tmp_path / "dp-values.yaml").write_text(
        "config:\n  map:\n    m: |-\n      version: v1\n      sharing:\n        mps:\n          resources:\n"
        "          - name: nvidia.com/gpu\n            replicas: 5\n  default: m\n"
    )
    (tmp_path / "node.yaml").write_text(
        "apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n  labels:\n    nvidia.com/device-plugin.config: any\n"
    )
    (tmp_path / "workload.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n")
    inv = scan_sharing_configs([str(tmp_path)])
    got = {(c.origin, c.config_map, c.key, c.strategy, c.resources[0].replicas) for c in inv.configs}
    assert got == {("HelmValues", "cm", "any", TIME_SLICING, 2), ("HelmValues", None, "m", MPS, 5)}
    assert {(p.config_map, p.default) for p in inv.pointers} == {("cm", "any"), (None, "m")}
    assert [c.nodes for c in inv.configs if c.key == "any"] == [["n1"]]
    assert ("gpu-operator values (%s)" % (tmp_path / "gpu-operator-values.yaml"), "mixed") in inv.mig_strategies


def test_parse_config_rejects_non_configs() -> None:
    assert parse_config("hello") is None
    assert parse_config({"sharing": "consumable", "target-version": "1.36"}) is None  # a .dra-migrate.yaml
    assert parse_config("version: v2\nsharing: {}") is None
    assert parse_config({"version": "v1", "flags": {}}) == {"version": "v1", "flags": {}}


@pytest.mark.parametrize(
    ("resource", "expected"),
    [
        ("nvidia.com/mig-1g.5gb", ("1g.5gb", False)),
        ("nvidia.com/mig-1g.10gb.me", ("1g.10gb+me", False)),
        ("nvidia.com/mig-1g.5gb.shared", ("1g.5gb", True)),
        ("nvidia.com/mig-1g.10gb.me.shared", ("1g.10gb+me", True)),
        ("nvidia.com/mig-7g.80gb", ("7g.80gb", False)),
        ("nvidia.com/gpu", None),
    ],
)
def test_mig_profile_from_resource(resource: str, expected: tuple[str, bool] | None) -> None:
    assert profile_from_resource(resource) == expected


def test_mig_profile_from_product_label() -> None:
    assert profile_from_product("A100-SXM4-40GB-MIG-1g.5gb") == "1g.5gb"
    assert profile_from_product("NVIDIA-A100-SXM4-40GB-MIG-1g.5gb-SHARED") == "1g.5gb"
    assert profile_from_product("NVIDIA-H100-80GB-HBM3") is None
    terms = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "nvidia.com/gpu.product", "operator": "In",
                               "values": ["A100-SXM4-40GB-MIG-2g.10gb"]}]},
        {"matchExpressions": [{"key": "other", "operator": "Exists"}]},
    ]}}}
    assert profiles_for({}, terms) == set()  # the second term does not pin the product
    terms["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"].pop()
    assert profiles_for({}, terms) == {"2g.10gb"}


def test_mps_parameters_follow_the_mps_daemon_split() -> None:
    p = gpu_sharing_parameters(MPS, 3, 40960)
    assert p["sharing"] == {"strategy": "MPS", "mpsConfig": {"defaultActiveThreadPercentage": 33,
                                                             "defaultPinnedDeviceMemoryLimit": "13653Mi"}}
    assert gpu_sharing_parameters(MPS, 4, None)["sharing"]["mpsConfig"] == {"defaultActiveThreadPercentage": 25}
    ts = gpu_sharing_parameters(TIME_SLICING, 4, None)
    assert ts["sharing"] == {"strategy": "TimeSlicing", "timeSlicingConfig": {"interval": "Default"}}


@pytest.mark.parametrize(
    "bad",
    [
        {"apiVersion": "resource.nvidia.com/v1beta1", "kind": "MigDeviceConfig",
         "sharing": {"strategy": "TimeSlicing", "timeSlicingConfig": {"interval": "Default"}}},
        {"apiVersion": "resource.nvidia.com/v1beta1", "kind": "GpuConfig",
         "sharing": {"strategy": "MPS", "mpsConfig": {"defaultActiveThreadPercentage": 101}}},
        {"apiVersion": "resource.nvidia.com/v1beta1", "kind": "GpuConfig",
         "sharing": {"strategy": "MPS", "timeSlicingConfig": {"interval": "Long"}}},
        {"apiVersion": "resource.nvidia.com/v1beta1", "kind": "GpuConfig",
         "sharing": {"strategy": "TimeSlicing", "timeSlicingConfig": {"interval": "Forever"}}},
        {"apiVersion": "resource.nvidia.com/v1beta1", "kind": "GpuConfig", "sharing": {"strategy": "Fabric"}},
        {"apiVersion": "resource.nvidia.com/v1beta1", "kind": "GpuConfig", "extra": 1},
    ],
)
def test_schema_rejects_what_the_driver_rejects(bad: dict[str, object]) -> None:
    assert schema_errors(bad)


def test_schema_accepts_the_driver_demo_configs() -> None:
    demo = Path(__file__).resolve().parents[2] / ".." / "shared" / "reference" / "dra-driver-demo"
    if not demo.is_dir():
        pytest.skip("../shared is absent")
    seen = 0
    for f in sorted(demo.glob("*.yaml")):
        for obj in documents(f.read_bytes(), f.name):
            spec = obj.get("spec", {})
            devices = (spec.get("spec") or spec).get("devices", {}) if isinstance(spec, dict) else {}
            for cfg in devices.get("config", []) if isinstance(devices, dict) else []:
                params = cfg.get("opaque", {}).get("parameters", {})
                if params.get("kind") in ("GpuConfig", "MigDeviceConfig"):
                    assert schema_errors(params) == [], (f.name, params)
                    seen += 1
    assert seen >= 4


SHARING_CASES = sorted(p for p in GOLDEN.iterdir() if p.name.startswith(("sharing-", "mig-")))


@pytest.mark.parametrize("case", SHARING_CASES, ids=[c.name for c in SHARING_CASES])
def test_every_emitted_opaque_config_validates(case: Path, tmp_path: Path) -> None:
    files, _d, _c = run_case(case, tmp_path)
    for name, data in files.items():
        for obj in documents(data, name):
            if obj.get("kind") not in ("ResourceClaim", "ResourceClaimTemplate"):
                continue
            spec = obj["spec"]["spec"] if obj["kind"] == "ResourceClaimTemplate" else obj["spec"]
            for cfg in spec["devices"].get("config", []):
                assert cfg["opaque"]["driver"] == "gpu.nvidia.com"
                assert schema_errors(cfg["opaque"]["parameters"]) == []


TIME_SLICING_4 = time_slicing_config(4)

TWO_SHARING_WORKLOADS = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: apps
spec:
  replicas: 3
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: app
        image: app
        resources:
          limits:
            nvidia.com/gpu: 1
      - name: sidecar
        image: metrics
        resources:
          limits:
            nvidia.com/gpu: 2
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: worker
  namespace: apps
spec:
  replicas: 3
  selector:
    matchLabels: {app: worker}
  template:
    metadata:
      labels: {app: worker}
    spec:
      containers:
      - name: worker
        image: worker
        resources:
          limits:
            nvidia.com/gpu: 1
"""


def test_every_workload_gets_its_own_shared_claim_with_its_own_requests(tmp_path: Path) -> None:
    # (a renamed `.shared` resource is left on the device plugin, DRA527: golden sharing-gpu-shared-renamed)
    case, work = tmp_path / "case", tmp_path / "work"
    case.mkdir()
    work.mkdir()
    (case / "input-1.yaml").write_text(TIME_SLICING_4)
    (case / "input-2.yaml").write_text(TWO_SHARING_WORKLOADS)
    files, _d, _c = run_case(case, work)
    objs = documents(files["input-2.yaml"], "input-2.yaml")
    claims = {o["metadata"]["name"]: o for o in objs if o["kind"] == "ResourceClaim"}
    assert sorted(claims) == ["web-shared-gpu", "worker-shared-gpu"]
    refs = {o["metadata"]["name"]: o["spec"]["template"]["spec"]["resourceClaims"] for o in objs
            if o["kind"] == "Deployment"}
    assert refs == {"web": [{"name": "gpu", "resourceClaimName": "web-shared-gpu"}],
                    "worker": [{"name": "gpu", "resourceClaimName": "worker-shared-gpu"}]}
    # one request per container, with the container's count: the sidecar asked for 2 replicas
    counts = {r["name"]: r["exactly"]["count"] for r in claims["web-shared-gpu"]["spec"]["devices"]["requests"]}
    assert counts == {"app": 1, "sidecar": 2}
