from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from dra_migrate.ruleset.features import (
    DEFAULT_TARGET,
    RULES_FILE,
    SUPPORTED_VERSIONS,
    FeatureDataError,
    FeatureGateError,
    Target,
    UnknownFeatureError,
    cel_function_calls,
    load_features,
    load_features_from,
    parse_feature_gates,
)

DRA_ON_133 = {"DynamicResourceAllocation": True}


def test_rules_file_loads_and_is_cached() -> None:
    feats = load_features()
    assert load_features() is feats
    assert tuple(feats.targets) == SUPPORTED_VERSIONS
    assert feats.default_target == DEFAULT_TARGET == "1.34"


@pytest.mark.parametrize(
    ("version", "api_version", "shape", "default_on", "reserved_for"),
    [
        ("1.32", "resource.k8s.io/v1beta1", "flat", False, 32),
        ("1.33", "resource.k8s.io/v1beta2", "exactly", False, 256),
        ("1.34", "resource.k8s.io/v1", "exactly", True, 256),
        ("1.35", "resource.k8s.io/v1", "exactly", True, 256),
        ("1.36", "resource.k8s.io/v1", "exactly", True, 256),
        ("1.37", "resource.k8s.io/v1", "exactly", True, 256),
    ],
)
def test_target_api(version: str, api_version: str, shape: str, default_on: bool, reserved_for: int) -> None:
    t = Target(version)
    assert t.api_version == api_version
    assert t.serves(api_version)
    assert t.request_shape == shape
    assert t.dra_default_on is default_on
    assert t.reserved_for_limit() == reserved_for


def test_served_versions() -> None:
    assert not Target("1.33").serves("resource.k8s.io/v1")
    assert not Target("1.32").serves("resource.k8s.io/v1beta2")
    assert Target("1.37").serves("resource.k8s.io/v1beta1")


def test_target_version_normalised_and_checked() -> None:
    assert Target("v1.35.2").version == "1.35"
    with pytest.raises(ValueError, match="unsupported target"):
        Target("1.31")
    with pytest.raises(ValueError, match="not a Kubernetes version"):
        Target("latest")


# (feature, stages 1.32 … 1.37), from dra-api.md §5 / the versioned feature-gate list.
STAGES = {
    "firstAvailable": ["absent", "alpha", "beta", "beta", "ga", "ga"],
    "adminAccess": ["alpha", "alpha", "beta", "beta", "ga", "ga"],
    "deviceTolerations": ["absent", "alpha", "alpha", "alpha", "beta", "ga"],
    "extendedResourceName": ["absent", "absent", "alpha", "alpha", "beta", "ga"],
    "consumableCapacity": ["absent", "absent", "alpha", "alpha", "beta", "beta"],
    "partitionableDevices": ["absent", "alpha", "alpha", "alpha", "beta", "beta"],
    "listAttributes": ["absent", "absent", "absent", "absent", "alpha", "alpha"],
    "DynamicResourceAllocation": ["beta", "beta", "ga", "ga", "ga", "ga"],
}
ENABLED = {
    "firstAvailable": [False, False, True, True, True, True],
    "adminAccess": [False, False, True, True, True, True],
    "deviceTolerations": [False, False, False, False, True, True],
    "extendedResourceName": [False, False, False, False, True, True],
    "consumableCapacity": [False, False, False, False, True, True],
    "partitionableDevices": [False, False, False, False, True, True],
    "listAttributes": [False] * 6,
}


@pytest.mark.parametrize("feature", sorted(STAGES))
def test_feature_stage_per_version(feature: str) -> None:
    assert [Target(v).feature_stage(feature) for v in SUPPORTED_VERSIONS] == STAGES[feature]


@pytest.mark.parametrize("feature", sorted(ENABLED))
def test_feature_default_per_version(feature: str) -> None:
    assert [Target(v).feature_enabled(feature, {}) for v in SUPPORTED_VERSIONS] == ENABLED[feature]


def test_gate_name_and_feature_name_are_interchangeable() -> None:
    t = Target("1.34")
    assert t.feature_stage("DRAPrioritizedList") == t.feature_stage("firstAvailable") == "beta"


def test_overrides_enable_alpha_only_with_core_dra() -> None:
    t = Target("1.33")
    assert not t.feature_enabled("firstAvailable", {"DRAPrioritizedList": True})  # core DRA is off in 1.33
    assert t.feature_enabled("firstAvailable", {**DRA_ON_133, "DRAPrioritizedList": True})
    assert Target("1.34").feature_enabled("deviceTolerations", {"DRADeviceTaints": True})
    assert not Target("1.34").feature_enabled("firstAvailable", {"DRAPrioritizedList": False})


def test_gates_on_target_and_call_overrides_combine() -> None:
    t = Target("1.33", gates=DRA_ON_133)
    assert t.feature_enabled("DynamicResourceAllocation")
    assert t.feature_enabled("firstAvailable", {"DRAPrioritizedList": True})
    assert not t.feature_enabled("firstAvailable")


def test_absent_and_locked_gates_ignore_overrides_and_are_reported() -> None:
    t = Target("1.37")
    assert t.feature_enabled("firstAvailable", {"DRAPrioritizedList": False})  # locked on in 1.37
    assert not Target("1.33").feature_enabled("extendedResourceName", {"DRAExtendedResource": True})
    problems = Target("1.33").override_problems({"DRAExtendedResource": True, "DRAPrioritizedList": True})
    assert problems == ["feature gate DRAExtendedResource does not exist in Kubernetes 1.33"]
    assert t.override_problems({"DRAPrioritizedList": False}) == [
        "feature gate DRAPrioritizedList is locked to true in Kubernetes 1.37"
    ]


def test_unknown_feature_name() -> None:
    with pytest.raises(UnknownFeatureError, match="did you mean 'firstAvailable'"):
        Target("1.34").feature_stage("firstAvailible")


def test_parse_feature_gates() -> None:
    assert parse_feature_gates("DRAPrioritizedList=true, DRAAdminAccess=False,") == {
        "DRAPrioritizedList": True,
        "DRAAdminAccess": False,
    }
    assert parse_feature_gates("") == {}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("DRAPrioritizedList", "expected NAME=true"),
        ("=true", "expected NAME=true"),
        ("DRAPrioritizedList=yes", "must be true or false"),
        ("DRAPriorizedList=true", "did you mean DRAPrioritizedList"),
        ("DRAAdminAccess=true,DRAAdminAccess=false", "given twice"),
    ],
)
def test_parse_feature_gates_errors(text: str, message: str) -> None:
    with pytest.raises(FeatureGateError, match=message):
        parse_feature_gates(text)


# --- CEL ----------------------------------------------------------------------------------------------------


def test_cel_function_calls_tokeniser() -> None:
    expr = (
        'device.attributes["gpu.nvidia.com"].productName.matches("A100(80GB)") && '
        "cel.bind(d, device.attributes['x'], d.a) && sets.contains([1, 2], [f(1, 2)]) && "
        'size(r"raw \\d sort(") + size("esc \\" sort(") > 0 && x.exists_one(i, i > 0)'
    )
    assert cel_function_calls(expr) == [
        ("matches", 1),
        ("cel.bind", 3),
        ("sets.contains", 2),
        ("f", 2),
        ("size", 1),
        ("size", 1),
        ("exists_one", 2),
    ]


def test_semver_one_argument_everywhere_two_arguments_from_1_34() -> None:
    expr = 'device.attributes["d"].v.isGreaterThan(semver("1.0.0")) && isSemver("v1.0.0", true)'
    assert Target("1.32").cel_functions_unavailable(expr) == ["isSemver/2"]
    assert Target("1.33").cel_functions_unavailable(expr) == ["isSemver/2"]
    assert Target("1.34").cel_functions_unavailable(expr) == []


def test_ext_lists_and_two_var_comprehensions() -> None:
    expr = 'device.attributes["d"].tags.sort().size() > 0'
    assert Target("1.34").cel_functions_unavailable(expr) == ["sort"]
    assert Target("1.35").cel_functions_unavailable(expr) == []
    two_var = 'device.attributes["d"].all(k, v, v != "")'
    assert Target("1.32").cel_functions_unavailable(two_var) == ["all/3"]
    assert Target("1.33").cel_functions_unavailable(two_var) == []
    assert Target("1.32").cel_functions_unavailable("[1].all(v, v > 0)") == []


def test_quantity_and_standard_functions_everywhere() -> None:
    expr = (
        'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0 && '
        'device.attributes["gpu.nvidia.com"].productName.lowerAscii().startsWith("nvidia a100")'
    )
    for v in SUPPORTED_VERSIONS:
        assert Target(v).cel_functions_unavailable(expr) == []


def test_gated_includes_and_unknown_functions() -> None:
    expr = 'device.attributes["d"].models.includes("a100")'
    assert Target("1.36").cel_functions_unavailable(expr) == ["includes"]
    assert Target("1.36").cel_functions_unavailable(expr, {"DRAListTypeAttributes": True}) == []
    assert Target("1.35").cel_functions_unavailable(expr, {"DRAListTypeAttributes": True}) == ["includes"]
    assert Target("1.37").cel_functions_unavailable("frobnicate(1) && frobnicate(2)") == ["frobnicate"]
    assert Target("1.34").cel_libraries_for("sort") == ["ext-lists-v3"]


def test_cel_text_inside_strings_is_not_a_call() -> None:
    assert (
        Target("1.32").cel_functions_unavailable('device.driver == "sort(x)" && "a\\"b" != \'transformMap(\'')
        == []
    )


# --- broken data --------------------------------------------------------------------------------------------


def _write_modified(tmp_path: Path, *keys: str, value: object) -> Path:
    raw = yaml.safe_load(RULES_FILE.read_text())
    node = raw
    for k in keys[:-1]:
        node = node[k]
    node[keys[-1]] = value
    out = tmp_path / "features.yaml"
    out.write_text(yaml.safe_dump(raw))
    return out


def test_rules_file_schema_is_strict(tmp_path: Path) -> None:
    with pytest.raises(FeatureDataError, match="features.schema.json"):
        load_features_from(_write_modified(tmp_path, "targets", "1.34", "emitt", value="v1"))


def test_rules_file_cross_checks(tmp_path: Path) -> None:
    with pytest.raises(FeatureDataError, match="does not serve"):
        load_features_from(_write_modified(tmp_path, "targets", "1.33", "emit", value="v1"))
    with pytest.raises(FeatureDataError, match="introduced \\+ 1"):
        load_features_from(
            _write_modified(tmp_path, "cel_libraries", "ext-lists-v3", "new_expressions_from", value="1.34")
        )
    with pytest.raises(FeatureDataError, match="unknown gate"):
        load_features_from(_write_modified(tmp_path, "features", "firstAvailable", "gate", value="DRANope"))
