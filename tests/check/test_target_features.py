"""The central pre-write check: every emitted feature and CEL function must exist (and be on) in the target."""

from __future__ import annotations

from typing import Any

import pytest

from dra_migrate.check.prewrite import check_target_features, features_used
from dra_migrate.diagnostics.model import Location
from dra_migrate.ruleset.features import feature_problem

LOC = Location("x.yaml", 1, 1)


def _template(api: str, request: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": api,
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "t"},
        "spec": {"spec": {"devices": {"requests": [request]}}},
    }


FIRST_AVAILABLE = {
    "name": "r",
    "firstAvailable": [
        {"name": "a", "deviceClassName": "gpu.nvidia.com", "count": 1},
        {
            "name": "b",
            "deviceClassName": "gpu.nvidia.com",
            "count": 1,
            "tolerations": [{"operator": "Exists"}],
        },
    ],
}


def codes(obj: dict[str, Any], target: str, gates: dict[str, bool] | None = None) -> list[str]:
    return [d.code for d in check_target_features(obj, target, gates or {}, LOC)]


def test_features_used_finds_fields_on_every_request_shape() -> None:
    flat = _template(
        "resource.k8s.io/v1beta1",
        {
            "name": "r",
            "deviceClassName": "c",
            "adminAccess": True,
            "capacity": {"requests": {"memory": "1Gi"}},
        },
    )
    assert features_used(flat) == [
        ("adminAccess", "spec.spec.devices.requests[0].adminAccess"),
        ("consumableCapacity", "spec.spec.devices.requests[0].capacity"),
    ]
    assert features_used(_template("resource.k8s.io/v1", FIRST_AVAILABLE)) == [
        ("firstAvailable", "spec.spec.devices.requests[0].firstAvailable"),
        ("deviceTolerations", "spec.spec.devices.requests[0].firstAvailable[1].tolerations"),
    ]
    # adminAccess: false uses nothing
    assert (
        features_used(_template("resource.k8s.io/v1", {"name": "r", "exactly": {"adminAccess": False}})) == []
    )


@pytest.mark.parametrize(
    ("target", "gates", "expected"),
    [
        ("1.32", {}, "DRA605"),  # v1beta1 @1.32 has no firstAvailable at all
        ("1.32", {"DRAPrioritizedList": True}, "DRA605"),  # no gate can add it
        ("1.33", {}, "DRA606"),  # alpha: exists, off
        ("1.33", {"DRAPrioritizedList": True}, "DRA609"),  # on only because the user says so
        ("1.34", {}, None),  # beta, on by default
        ("1.34", {"DRAPrioritizedList": False}, "DRA606"),  # turned off
        ("1.37", {}, None),
    ],
)
def test_first_available_per_target(target: str, gates: dict[str, bool], expected: str | None) -> None:
    problem = feature_problem(target, "firstAvailable", gates)
    assert (problem[0] if problem else None) == expected


def test_off_gate_message_names_the_gate_and_the_flag() -> None:
    problem = feature_problem("1.34", "extendedResourceName", {})
    assert problem is not None and problem[0] == "DRA606"
    assert "DRAExtendedResource" in problem[1] and "--feature-gates DRAExtendedResource=true" in problem[1]
    assert "on by default from 1.36" in problem[1]


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("1.32", ["DRA605"]),
        ("1.33", ["DRA605"]),
        ("1.34", ["DRA606"]),
        ("1.35", ["DRA606"]),
        ("1.36", []),
        ("1.37", []),
    ],
)
def test_extended_resource_name_per_target(target: str, expected: list[str]) -> None:
    cls = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "c"},
        "spec": {"extendedResourceName": "nvidia.com/gpu"},
    }
    assert codes(cls, target) == expected


def test_tolerations_are_alpha_until_136() -> None:
    obj = _template("resource.k8s.io/v1", FIRST_AVAILABLE)
    assert codes(obj, "1.34") == ["DRA606"]  # firstAvailable fine, tolerations (DRADeviceTaints) alpha
    assert codes(obj, "1.34", {"DRADeviceTaints": True}) == ["DRA609"]
    assert codes(obj, "1.36") == []


def test_cel_functions_checked_against_the_target() -> None:
    req = {
        "name": "r",
        "exactly": {
            "deviceClassName": "gpu.nvidia.com",
            "count": 1,
            "selectors": [
                {
                    "cel": {
                        "expression": "device.attributes['gpu.nvidia.com'].driverVersion.isGreaterThan("
                        "semver('550.0.0', true))"
                    }
                }
            ],
        },
    }
    assert codes(_template("resource.k8s.io/v1beta2", req), "1.33") == ["DRA607"]
    assert codes(_template("resource.k8s.io/v1", req), "1.34") == []
    cls = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "c"},
        "spec": {"selectors": [{"cel": {"expression": "[1, 2].sort() == [1, 2]"}}]},
    }
    assert codes(cls, "1.34") == ["DRA607"]
    assert codes(cls, "1.35") == []
