"""Sharing configs apply to their own cluster only (directory tree, kustomize builds, sharing-scopes,
--sharing-config everywhere); shared claim names come from the workload; every shared claim of the goldens
holds pods that fit on one common node within the old replicas."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from dra_migrate.cli.config import ConfigError, resolve, sharing_scopes
from dra_migrate.config import Options
from dra_migrate.frontend.replicas import surge_and_unavailable
from dra_migrate.lower.names import TemplateNamer
from dra_migrate.lower.sharing.scope import ScopeMapping
from dra_migrate.run.driver import RunConfig, run_migration
from dra_migrate.run.integrations.kustomize_reach import kustomize_builds, tree_scope
from dra_migrate.run.sharing_configs import inventory_from
from dra_migrate.simulate.cluster import ClusterState, place_replicas
from tests.conftest import GOLDEN, REPO
from tests.equivalence.cluster import base_inventory
from tests.golden_runner import case_args, input_files
from tests.integration_helpers import time_slicing_config
from tests.oracle import documents


def ts(replicas: int) -> str:
    return time_slicing_config(replicas, name="device-plugin-config", namespace=None)


DEPLOYMENT = """apiVersion: apps/v1
kind: {kind}
metadata:
  name: {name}
spec:
  replicas: {replicas}
  selector:
    matchLabels: {{app: {name}}}
  template:
    metadata:
      labels: {{app: {name}}}
    spec:
      containers:
        - name: main
          image: example.com/main:1
          resources:
            limits:
              nvidia.com/gpu: 1
"""


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def migrate(root: Path, paths: list[str], **kw: Any) -> tuple[str, dict[str, str]]:
    old = os.getcwd()
    os.chdir(root)
    try:
        result = run_migration(RunConfig(paths, options=Options(), **kw))
    finally:
        os.chdir(old)
    diags = "\n".join(d.render() for d in result.all_diagnostics)
    out = {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*.yaml"))}
    return diags, out


def test_a_config_applies_below_its_directory_only(tmp_path: Path) -> None:
    write(tmp_path, {
        "clusters/a/dp.yaml": ts(4),
        "clusters/a/app.yaml": DEPLOYMENT.format(kind="StatefulSet", name="app", replicas=3),
        "clusters/b/app.yaml": DEPLOYMENT.format(kind="StatefulSet", name="app", replicas=3),
    })
    diags, out = migrate(tmp_path, ["clusters"])
    assert "resourceClaimName: app-shared-gpu" in out["clusters/a/app.yaml"]
    assert "resourceClaimTemplateName: app-" in out["clusters/b/app.yaml"]
    assert "resourceClaimName" not in out["clusters/b/app.yaml"]
    assert "clusters/b/app.yaml" not in "".join(line for line in diags.splitlines() if "DRA50" in line)
    assert "applies to clusters/a/ and below" in diags


def test_sharing_config_flag_applies_to_every_path(tmp_path: Path) -> None:
    write(tmp_path, {
        "infra/dp.yaml": ts(4),
        "apps/app.yaml": DEPLOYMENT.format(kind="StatefulSet", name="app", replicas=3),
    })
    diags, out = migrate(tmp_path, ["apps", "infra"], mode="check")
    assert "DRA523" in diags and "DRA524" in diags
    diags, out = migrate(tmp_path, ["apps"], sharing_configs=[tmp_path / "infra" / "dp.yaml"])
    assert "resourceClaimName: app-shared-gpu" in out["apps/app.yaml"]
    assert "every path of the run" in diags and "DRA523" not in diags


def test_kustomize_builds_reach_bases_components_and_generator_files(tmp_path: Path) -> None:
    write(tmp_path, {
        "base/kustomization.yaml": "resources: [app.yaml, nested]\n",
        "base/app.yaml": "",
        "base/nested/kustomization.yaml": "resources: [deep.yaml, https://example.com/remote.yaml]\n",
        "base/nested/deep.yaml": "",
        "overlay/kustomization.yaml": "resources: [../base]\ncomponents: [../comp]\n"
                                      "configMapGenerator:\n- name: c\n  files: [any=dp.yaml]\n",
        "comp/kustomization.yaml": "resources: [../overlay]\n",  # a cycle: ignored, not followed forever
        "overlay/dp.yaml": "",
    })
    kfiles = [(str(p.relative_to(tmp_path)), p) for p in tmp_path.rglob("kustomization.yaml")]
    builds = kustomize_builds(kfiles)
    overlay = str(tmp_path / "overlay" / "kustomization.yaml")
    reach = {os.path.relpath(f, tmp_path) for f in builds.reach[overlay]}
    assert reach == {"base/app.yaml", "base/nested/deep.yaml", "overlay/dp.yaml"}
    scope = tree_scope([str(tmp_path / "overlay" / "dp.yaml")], builds)
    assert scope.contains(str(tmp_path / "base/nested/deep.yaml")) and scope.contains(str(tmp_path / "overlay/x.yaml"))
    assert not scope.contains(str(tmp_path / "other/x.yaml"))
    assert not scope.contains(str(tmp_path / "overlay-2/x.yaml"))  # a sibling directory sharing the prefix


def test_resolution_reports_disagreeing_clusters_and_orphans(tmp_path: Path) -> None:
    a = str(tmp_path / "a" / "dp.yaml")
    b = str(tmp_path / "b" / "dp.yaml")
    infra = str(tmp_path / "infra" / "dp.yaml")
    shared = str(tmp_path / "shared" / "app.yaml")
    app = DEPLOYMENT.format(kind="Deployment", name="x", replicas=1).encode()
    mappings = [ScopeMapping(str(tmp_path), "a/dp.yaml", ("a/**", "shared/**")),
                ScopeMapping(str(tmp_path), "b/dp.yaml", ("b/**", "shared/**"))]
    files = [(a, ts(4).encode()), (b, ts(2).encode()),
             (infra, ts(8).encode()), (shared, app)]
    inv = inventory_from(files, mappings=mappings)
    res = inv.resolve("nvidia.com/gpu", {}, shared)
    assert res.config is None and sorted(c.source for c in res.conflict) == [a, b]
    alone = inv.resolve("nvidia.com/gpu", {}, str(tmp_path / "elsewhere" / "app.yaml"))
    assert alone.config is None and not alone.conflict and [c.source for c in alone.orphans] == [infra]
    assert inv.resolve("nvidia.com/gpu", {}, str(tmp_path / "a" / "app.yaml")).replicas == 4
    assert inv.resolve("nvidia.com/gpu", {}).config is None  # no file: every config, as before scopes


def test_a_pointer_carries_the_configmap_of_its_own_cluster(tmp_path: Path) -> None:
    policy = ("apiVersion: nvidia.com/v1\nkind: ClusterPolicy\nmetadata: {name: p}\nspec:\n  devicePlugin:\n"
              "    config: {name: device-plugin-config, default: any}\n")
    files = [(str(tmp_path / "a/dp.yaml"), ts(4).encode()),
             (str(tmp_path / "b/dp.yaml"), ts(2).encode()),
             (str(tmp_path / "a/policy/policy.yaml"), policy.encode()),
             (str(tmp_path / "root-policy.yaml"), policy.encode())]
    inv = inventory_from(files)
    by_source = {os.path.relpath(c.source, tmp_path): c for c in inv.configs}
    # a's policy carries a's ConfigMap (the nearest of that name); the root policy is as near to both: neither
    assert inv.resolve("nvidia.com/gpu", {}, str(tmp_path / "a/policy/app.yaml")).replicas == 4
    assert not by_source["b/dp.yaml"].scope.contains(str(tmp_path / "a/policy/app.yaml"))
    assert not by_source["a/dp.yaml"].scope.contains(str(tmp_path / "c/app.yaml"))


def test_sharing_scopes_in_the_configuration_file(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    write(tmp_path, {
        ".dra-migrate.yaml": "sharing-scopes:\n  - config: infra/dp.yaml\n    paths: ['apps/**']\n",
        "infra/dp.yaml": ts(4),
        "apps/app.yaml": DEPLOYMENT.format(kind="StatefulSet", name="app", replicas=3),
    })
    env = dict(os.environ, PYTHONPATH=str(REPO))
    r = subprocess.run([sys.executable, "-m", "dra_migrate", "migrate", "apps", "infra"], cwd=tmp_path,
                       capture_output=True, env=env, timeout=120)
    assert r.returncode == 1, r.stderr
    assert "resourceClaimName: app-shared-gpu" in (tmp_path / "apps" / "app.yaml").read_text()
    (tmp_path / ".dra-migrate.yaml").write_text("sharing-scopes:\n  - config: infra/dp.yaml\n")
    r = subprocess.run([sys.executable, "-m", "dra_migrate", "migrate", "apps", "--check"], cwd=tmp_path,
                       capture_output=True, env=env, timeout=120)
    assert r.returncode == 2 and b"expected exactly the keys config and paths" in r.stderr


@pytest.mark.parametrize("value", [
    {"config": "a", "paths": ["b"]}, [{"config": "a"}], [{"config": "", "paths": ["x"]}],
    [{"config": "a", "paths": []}], [{"config": "a", "paths": "x"}], [{"config": "a", "paths": ["x"], "z": 1}],
])
def test_sharing_scopes_shapes_are_checked(value: Any) -> None:
    with pytest.raises(ConfigError):
        sharing_scopes(value, "cfg.yaml: sharing-scopes", ".")


def test_sharing_scopes_errors_name_the_line_of_the_entry(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".dra-migrate.yaml").write_text(
        "jobs: 1\nsharing-scopes:\n  - config: a.yaml\n    paths: [x]\n  - config: b.yaml\n    paths: []\n")
    for command in ("migrate", "pr", "plan", "explain"):
        with pytest.raises(ConfigError, match=r"\.dra-migrate\.yaml:5: sharing-scopes\[1\]\.paths: expected a "
                                              "non-empty list"):
            resolve(command, [str(tmp_path)], {}, {})


def test_sharing_scopes_is_a_file_only_setting(tmp_path: Path) -> None:
    """No option, no DRA_MIGRATE_* variable: the configuration file is its place; every migrating command."""
    (tmp_path / ".git").mkdir()
    (tmp_path / ".dra-migrate.yaml").write_text("sharing-scopes:\n  - config: a/*.yaml\n    paths: [x/**]\n")
    for command in ("migrate", "pr", "plan", "explain"):
        r = resolve(command, [str(tmp_path)], {}, {"DRA_MIGRATE_SHARING_SCOPES": "[]"})
        [m] = r.values["sharing-scopes"]
        assert (m.base, m.config, m.paths) == (str(tmp_path.resolve()), "a/*.yaml", ("x/**",))
    env = dict(os.environ, PYTHONPATH=str(REPO))
    r2 = subprocess.run([sys.executable, "-m", "dra_migrate", "migrate", "--sharing-scopes", "[]", "x"],
                        cwd=tmp_path, capture_output=True, env=env, timeout=120)
    assert r2.returncode == 2 and b"No such option" in r2.stderr


def test_sharing_scopes_round_trip(tmp_path: Path) -> None:
    [m] = sharing_scopes([{"config": "a/*.yaml", "paths": ["x/**", "!x/skip/**"]}],
                         f"{tmp_path / '.dra-migrate.yaml'}: sharing-scopes", str(tmp_path))
    assert m.base == str(tmp_path) and m.matches_config(str(tmp_path / "a" / "dp.yaml"))
    assert m.covers(str(tmp_path / "x" / "y" / "z.yaml")) and not m.covers(str(tmp_path / "x" / "skip" / "z.yaml"))
    assert not m.covers("/elsewhere/x/z.yaml")


def test_claim_names_come_from_the_workload_and_replay() -> None:
    from dra_migrate.perf.recording import RecordingNamer, replay

    namer = RecordingNamer()
    trace = namer.trace
    first = namer.claim_name("ns", "infer", "Deployment", "shared-gpu")
    again = namer.claim_name("ns", "infer", "Deployment", "shared-gpu")  # the same app in another cluster
    other = namer.claim_name("ns", "infer", "StatefulSet", "shared-gpu")
    assert (first, again, other) == ("infer-shared-gpu", "infer-shared-gpu", "infer-statefulset-shared-gpu")
    fresh = TemplateNamer()
    assert replay(fresh, trace) and fresh.claims == namer.claims
    taken = TemplateNamer()
    taken.reserve("ns", "infer-shared-gpu")  # an existing object: the worker's answer no longer holds
    assert not replay(taken, trace) and taken.claims == {} and taken.taken == {"ns": {"infer-shared-gpu"}}


# --- every shared claim of the goldens: its pods fit on one common node, within the old replicas ----------

def _shared_claim_cases() -> list[Path]:
    """Goldens where the sharing pass emitted a shared claim (DRA502)."""
    return sorted(c for c in GOLDEN.iterdir() if (c / "diagnostics.txt").is_file()
                  and " DRA502 " in (c / "diagnostics.txt").read_text())


def _peak(obj: dict[str, Any], others: list[dict[str, Any]]) -> int:
    """Pods at once, computed here from the object and the autoscalers among `others` (its file's objects), not by
    the sharing pass."""
    spec = obj.get("spec") or {}
    kind = obj["kind"]
    if kind == "Pod":
        return 1
    if kind == "Job":
        return int(spec.get("parallelism", 1))
    replicas = int(spec.get("replicas", 1))
    name, ns = obj["metadata"]["name"], obj["metadata"].get("namespace")
    for o in others:
        ref = (o.get("spec") or {}).get("scaleTargetRef") or {}
        if (o.get("kind"), ref.get("kind", "Deployment"), ref.get("name"), o["metadata"].get("namespace")) in (
                ("HorizontalPodAutoscaler", kind, name, ns), ("ScaledObject", kind, name, ns)):
            replicas = max(replicas, int(o["spec"].get("maxReplicas", o["spec"].get("maxReplicaCount", 100))))
    if kind == "Deployment":
        su = surge_and_unavailable(spec.get("strategy"), replicas)
        return replicas + (su[0] if su else 0)
    return replicas


def _pod_specs(node: Any) -> list[dict[str, Any]]:
    """Every mapping with `containers` in the object (its pod specs)."""
    if isinstance(node, dict):
        if isinstance(node.get("containers"), list):
            return [node]
        return [s for v in node.values() for s in _pod_specs(v)]
    if isinstance(node, list):
        return [s for v in node for s in _pod_specs(v)]
    return []


def _pod_spec(obj: dict[str, Any]) -> dict[str, Any]:
    """The pod spec, without the device plugin config label (the synthetic cluster's nodes have none)."""
    spec = json.loads(json.dumps(next(iter(_pod_specs(obj)))))
    spec.get("nodeSelector", {}).pop("nvidia.com/device-plugin.config", None)
    return spec


@pytest.mark.parametrize("case", _shared_claim_cases(), ids=lambda c: c.name)
def test_every_shared_claim_fits_its_pods_on_one_node_within_the_replicas(case: Path) -> None:
    inventory = base_inventory()
    diags = (case / "diagnostics.txt").read_text()
    args = case_args(case)
    checked = 0
    for f in sorted(p for p in (case / "expected").rglob("*") if p.is_file()):
        objs = documents(f.read_bytes(), f.name)
        objs = [o for o in objs if isinstance(o.get("kind"), str)]
        claims = {o["metadata"]["name"]: o for o in objs if o["kind"] == "ResourceClaim"}
        templates = {o["metadata"]["name"]: o for o in objs if o["kind"] == "ResourceClaimTemplate"}
        workloads = [o for o in objs if o["kind"] not in ("ResourceClaim", "ResourceClaimTemplate")
                     and b"containers" in json.dumps(o).encode()]
        for name in claims:
            if f"share ResourceClaim '{name}'" not in diags:
                continue  # an object of the input, not a shared claim of the migration
            users = [o for o in workloads
                     if any(rc.get("resourceClaimName") == name for rc in _pod_spec(o).get("resourceClaims", []))]
            assert len(users) == 1, f"{name}: one workload per shared claim, not {len(users)}"
            pods = _peak(users[0], objs)
            said = re.search(rf"replicas=(\d+)[^\n]*share ResourceClaim '{re.escape(name)}'", diags)
            assert said, f"{name}: no DRA502 for it"
            replicas = int(said.group(1))
            inputs = "".join(p.read_text() for p in input_files(case))
            assert re.search(rf"replicas: {replicas}\b", inputs), f"{name}: replicas={replicas} is in no input config"
            limit = 32 if args.get("target_version") == "1.32" else 256
            assert 2 <= pods <= min(replicas, limit), (name, pods, replicas)
            report = place_replicas(pods, _pod_spec(users[0]), templates, claims, inventory, ClusterState())
            assert report.fit == pods, f"{name}: only {report.fit} of {pods} pods placed"
            assert len({p.node for p in report.placed}) == 1, f"{name}: its pods landed on several nodes"
            checked += 1
    assert checked


def test_the_common_node_check_can_fail() -> None:
    """Two pods that need different GPU models cannot share a claim: the simulator finds no common node."""
    inventory = base_inventory()
    case = GOLDEN / "sharing-generated-repo"
    objs = documents((case / "expected" / "input-2.yaml").read_bytes(), "input-2.yaml")
    claims = {o["metadata"]["name"]: o for o in objs if o["kind"] == "ResourceClaim"}
    embed = next(o for o in objs if o["metadata"]["name"] == "embed" and o["kind"] == "Deployment")
    state = ClusterState()
    first = place_replicas(1, _pod_spec(embed), {}, claims, inventory, state)
    assert first.fit == 1
    infer_spec = json.loads(json.dumps(_pod_spec(embed)))
    infer_spec["resourceClaims"][0]["resourceClaimName"] = "infer-shared-gpu"
    infer_spec["nodeSelector"] = {"kubernetes.io/hostname": first.placed[0].node}
    other = place_replicas(1, infer_spec, {}, claims, inventory, state)
    assert other.fit == 0  # infer's claim selects L4 GPUs, embed's node has A100s


def test_yaml_fixture_is_valid() -> None:
    assert yaml.safe_load(DEPLOYMENT.format(kind="Deployment", name="x", replicas=1))["spec"]["replicas"] == 1
