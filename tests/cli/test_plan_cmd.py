"""`dra-migrate plan`: a strategy per workload, with reasons, gates and risks; nothing is written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from dra_migrate.cli.app import _register, app
from tests.conftest import GOLDEN


def _plan(tmp_path: Path, *cases: str, target: str = "1.36") -> dict:  # type: ignore[type-arg]
    for case in cases:
        shutil.copy(GOLDEN / case / "input.yaml", tmp_path / f"{case}.yaml")
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    _register()
    out = CliRunner().invoke(app, ["plan", str(tmp_path), "--target-version", target, "--format", "json"])
    assert out.exit_code == 0, out.output
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before  # nothing written
    return json.loads(out.stdout)


def test_strategy_per_workload_on_136(tmp_path: Path) -> None:
    plan = _plan(tmp_path, "version-bridge")
    by = {w["workload"]: w for w in plan["workloads"]}
    assert by["Deployment/serving/inference"]["strategy"] == "bridge"
    assert [g["gate"] for g in by["Deployment/serving/inference"]["gates"]] == [
        "DynamicResourceAllocation",
        "DRAExtendedResource",
    ]
    assert by["Job/ml/h100-only"]["strategy"] == "rewrite"
    assert "nvidia.com/gpu.product" in " ".join(by["Job/ml/h100-only"]["why"])
    # A renamed shared resource fits only the nodes whose config renames it: the rewrite refuses (DRA527), and
    # a DeviceClass allocates whole devices, so bridge mode cannot serve it either.
    assert by["Pod/research/shared"]["strategy"] == "leave"
    assert any(w.startswith("DRA527") for w in by["Pod/research/shared"]["why"])
    assert any("gpuResourcesEnabledOverride=true" in r for r in by["Job/ml/h100-only"]["risks"])


def test_bridge_not_recommended_where_gate_is_off(tmp_path: Path) -> None:
    plan = _plan(tmp_path, "version-bridge", target="1.34")
    by = {w["workload"]: w for w in plan["workloads"]}
    assert by["Deployment/serving/inference"]["strategy"] == "rewrite"
    assert "off by default" in " ".join(by["Deployment/serving/inference"]["why"])


def test_already_backed_and_compute_domain(tmp_path: Path) -> None:
    plan = _plan(
        tmp_path, "already-dra-backed", "existing-claims-compute-domain", "version-1.34", target="1.34"
    )
    by = {w["workload"]: w for w in plan["workloads"]}
    assert by["Pod/research/small"]["strategy"] == "leave"
    assert "already served by DRA" in by["Pod/research/small"]["why"][0]
    assert any("ComputeDomain" in r for r in by["MPIJob/nccl-tests"]["risks"])
    gates = {g["gate"]: g for g in by["Job/ml/finetune"]["gates"]}
    assert gates["DRAPrioritizedList"]["onByDefault"] is True  # the preferred affinity became firstAvailable


def test_preset_node_name_is_not_bridge_served(tmp_path: Path) -> None:
    """A pod with spec.nodeName skips the scheduler, which allocates the devices behind a DRA-backed extended
    resource: neither the rewrite (DRA219) nor bridge mode serves it, so the plan says to migrate it by hand."""
    (tmp_path / "pinned.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: pinned\nspec:\n  nodeName: gpu-node-1\n  containers:\n"
        "    - name: c\n      image: x\n      resources:\n        limits:\n          nvidia.com/gpu: 1\n")
    _register()
    out = CliRunner().invoke(app, ["plan", str(tmp_path), "--target-version", "1.36", "--format", "json"])
    assert out.exit_code == 0, out.output
    (pinned,) = json.loads(out.stdout)["workloads"]
    assert pinned["strategy"] == "leave"
    assert any("nodeName 'gpu-node-1' is preset" in w and "extended resource" in w for w in pinned["why"])
