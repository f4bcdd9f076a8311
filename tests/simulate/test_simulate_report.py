"""simulate: replica counts, rolling-update fenceposts, near-miss wording, report schema."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from dra_migrate.frontend.replicas import replica_count
from dra_migrate.simulate.nearmiss import pretty_quantity, referenced
from dra_migrate.simulate.rollout import surge_and_unavailable

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("strategy", "replicas", "expected"),
    [
        (None, 2, (1, 0)),  # 25% of 2: surge rounds up, unavailable down
        (None, 4, (1, 1)),
        (None, 10, (3, 2)),
        ({"rollingUpdate": {"maxSurge": 0, "maxUnavailable": 0}}, 3, (0, 1)),  # both 0 -> unavailable 1
        ({"rollingUpdate": {"maxSurge": "50%", "maxUnavailable": 2}}, 3, (2, 2)),
        ({"type": "Recreate"}, 3, None),
    ],
)
def test_surge_and_unavailable(
    strategy: dict | None, replicas: int, expected: tuple[int, int] | None
) -> None:
    assert surge_and_unavailable(strategy, replicas) == expected


def test_replica_count() -> None:
    dep = {"kind": "Deployment", "spec": {"replicas": 3, "template": {"spec": {}}}}
    assert replica_count(dep, ("spec", "template", "spec")) == (3, "spec.replicas")
    job = {"kind": "Job", "spec": {"parallelism": 4, "template": {"spec": {}}}}
    assert replica_count(job, ("spec", "template", "spec")) == (4, "spec.parallelism")
    assert replica_count({"kind": "Deployment", "spec": {}}, ("spec", "template", "spec")) == (1, "default")
    assert replica_count({"kind": "Pod", "spec": {}}, ("spec",)) == (1, "default")
    assert replica_count({"kind": "DaemonSet", "spec": {}}, ("spec", "template", "spec")) == (0, "daemonset")
    pytorch = {"spec": {"pytorchReplicaSpecs": {"Worker": {"replicas": 8, "template": {"spec": {}}}}}}
    path = ("spec", "pytorchReplicaSpecs", "Worker", "template", "spec")
    assert replica_count(pytorch, path) == (8, "spec.pytorchReplicaSpecs.Worker.replicas")


def test_referenced_attributes_and_quantities() -> None:
    expr = (
        "device.attributes['gpu.nvidia.com'].productName.lowerAscii().matches('a100') && "
        'device.capacity["gpu.nvidia.com"]["memory"].compareTo(quantity("40Gi")) >= 0'
    )
    assert referenced(expr) == [
        ("attributes", "gpu.nvidia.com", "productName"),
        ("capacity", "gpu.nvidia.com", "memory"),
    ]
    assert pretty_quantity("15360Mi") == "15Gi"
    assert pretty_quantity("46068Mi") == "46068Mi"
    assert pretty_quantity("14") == "14"


def test_report_schema_rejects_unknown_status() -> None:
    schema = json.loads((ROOT / "schemas" / "simulate-report.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    report = json.loads((ROOT / "golden" / "simulate" / "rollout-downgrade" / "report.json").read_text())
    jsonschema.validate(report, schema)
    report["workloads"][0]["status"] = "maybe"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(report, schema)
