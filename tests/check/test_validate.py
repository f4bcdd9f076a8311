from __future__ import annotations

import copy
from typing import Any

import pytest

from dra_migrate.check.validate import (
    SchemaIssue,
    check_claim_spec,
    check_pod_spec_claims,
    schema_served,
    served_api_versions,
    validate_object,
)
from dra_migrate.check.validate.issues import LIMIT, NOT_SERVED, SCHEMA
from dra_migrate.check.validate.schema import _validator
from dra_migrate.ruleset.features import SUPPORTED_VERSIONS


def template(api_version: str, request: dict[str, Any], name: str = "single-gpu") -> dict[str, Any]:
    return {
        "apiVersion": f"resource.k8s.io/{api_version}",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name},
        "spec": {"spec": {"devices": {"requests": [request]}}},
    }


FLAT: dict[str, Any] = {"name": "gpu", "deviceClassName": "gpu.nvidia.com"}
EXACTLY: dict[str, Any] = {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}
SHAPES: dict[str, dict[str, Any]] = {"v1beta1": FLAT, "v1beta2": EXACTLY, "v1": EXACTLY}
SERVED_FROM = {"v1beta1": "1.32", "v1beta2": "1.33", "v1": "1.34"}


def _minor(v: str) -> int:
    return int(v.split(".")[1])


@pytest.mark.parametrize("api_version", sorted(SHAPES))
@pytest.mark.parametrize("k8s", SUPPORTED_VERSIONS)
def test_template_shapes_validate_where_served(api_version: str, k8s: str) -> None:
    issues = validate_object(template(api_version, SHAPES[api_version]), k8s)
    if _minor(k8s) >= _minor(SERVED_FROM[api_version]):
        assert issues == []
    else:
        assert len(issues) == 1
        assert issues[0].code == NOT_SERVED
        assert issues[0].path == "apiVersion"
        assert f"not served by Kubernetes {k8s}" in issues[0].message


def test_v1_under_1_33_lists_what_is_served() -> None:
    [issue] = validate_object(template("v1", EXACTLY), "1.33")
    assert "resource.k8s.io/v1beta2" in issue.message
    assert served_api_versions("ResourceClaimTemplate", "1.33") == [
        "resource.k8s.io/v1alpha3",
        "resource.k8s.io/v1beta1",
        "resource.k8s.io/v1beta2",
    ]
    assert not schema_served("ResourceClaimTemplate", "resource.k8s.io/v1", "1.33")
    assert schema_served("ResourceClaimTemplate", "resource.k8s.io/v1", "1.34")


def test_wrong_shape_for_version_is_caught() -> None:
    # v1beta2/v1 body under v1beta1: `exactly` is unknown and deviceClassName is missing.
    paths = {i.path for i in validate_object(template("v1beta1", EXACTLY), "1.34")}
    assert "spec.spec.devices.requests[0].exactly" in paths
    assert "spec.spec.devices.requests[0].deviceClassName" in paths
    # firstAvailable does not exist in v1beta1 at 1.32 (added in 1.33).
    flat_fa = {"name": "gpu", "firstAvailable": [{"name": "a", "deviceClassName": "gpu.nvidia.com"}]}
    assert {i.path for i in validate_object(template("v1beta1", flat_fa), "1.32")} == {
        "spec.spec.devices.requests[0].firstAvailable",
        "spec.spec.devices.requests[0].deviceClassName",  # still required by the 1.32 schema
    }
    assert validate_object(template("v1beta1", flat_fa), "1.33") == []


def test_strict_mode_catches_typo() -> None:
    obj = template("v1", {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "cuont": 2}})
    issues = validate_object(obj, "1.34")
    assert issues == [
        SchemaIssue(
            "spec.spec.devices.requests[0].exactly.cuont",
            "unknown field 'cuont' (did you mean 'count'?)",
            SCHEMA,
        )
    ]
    assert validate_object(obj, "1.34", strict=False) == []


def test_type_errors_have_paths() -> None:
    obj = template("v1", {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": "two"}})
    [issue] = validate_object(obj, "1.35")
    assert issue.path == "spec.spec.devices.requests[0].exactly.count"
    assert issue.code == SCHEMA


def test_pod_and_workloads_validate() -> None:
    pod: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "app"},
        "spec": {
            "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "single-gpu"}],
            "containers": [{"name": "app", "image": "example", "resources": {"claims": [{"name": "gpu"}]}}],
        },
    }
    assert validate_object(pod, "1.34") == []
    bad = copy.deepcopy(pod)
    bad["spec"]["containers"][0]["resources"]["claims"] = [{"name": "gpuu"}]
    [issue] = validate_object(bad, "1.34")
    assert issue.code == LIMIT
    assert issue.path == "spec.containers[0].resources.claims[0].name"
    deploy = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d"},
        "spec": {"selector": {}, "template": {"spec": {"containers": [{"name": "c", "imagee": "x"}]}}},
    }
    assert [i.path for i in validate_object(deploy, "1.36")] == ["spec.template.spec.containers[0].imagee"]


def test_custom_resources_and_bad_input() -> None:
    crd_obj = {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "j"}, "spec": {}}
    assert validate_object(crd_obj, "1.34") == []
    [issue] = validate_object({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplat"}, "1.34")
    assert issue.code == NOT_SERVED and "no kind" in issue.message
    # The core ResourceClaim *struct* (container resources.claims entry) is not an object kind.
    [issue] = validate_object(
        {"apiVersion": "v1", "kind": "ResourceClaim", "metadata": {"name": "x"}}, "1.34"
    )
    assert issue.code == NOT_SERVED
    assert validate_object({"kind": "Pod"}, "1.34")[0].message == "object has no apiVersion and kind"
    with pytest.raises(ValueError, match="no bundled schemas"):
        validate_object(template("v1", EXACTLY), "1.20")


def test_validators_are_cached() -> None:
    from dra_migrate.check.validate.schema import _rs_validator

    caches = (_validator, _rs_validator)  # python-jsonschema's, and the jsonschema-rs pre-check's
    before = [c.cache_info() for c in caches]
    for i in range(20):  # distinct objects: the result cache would otherwise answer without a validator
        validate_object(template("v1", EXACTLY, name=f"gpu-{i}"), "1.36")
    after = [c.cache_info() for c in caches]
    assert sum(a.hits - b.hits for a, b in zip(after, before, strict=True)) >= 19
    assert all(a.currsize - b.currsize <= 1 for a, b in zip(after, before, strict=True))


def test_object_name_must_be_dns_subdomain() -> None:
    issues = validate_object(template("v1", EXACTLY, name="Single_GPU"), "1.34")
    assert [(i.path, i.code) for i in issues] == [("metadata.name", LIMIT)]
    assert validate_object(template("v1", EXACTLY, name="gpu.claims-1"), "1.34") == []


def test_template_metadata_only_labels_and_annotations() -> None:
    obj = template("v1", EXACTLY)
    obj["spec"]["metadata"] = {"labels": {"a": "b"}, "namespace": "x"}
    assert [i.path for i in validate_object(obj, "1.34")] == ["spec.metadata.namespace"]


def test_semantic_issue_paths_are_prefixed() -> None:
    obj = template("v1", {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 0}})
    [issue] = validate_object(obj, "1.34")
    assert issue == SchemaIssue(
        "spec.spec.devices.requests[0].exactly.count", "count must be greater than zero, got 0", LIMIT
    )
    claim = {
        "apiVersion": "resource.k8s.io/v1beta2",
        "kind": "ResourceClaim",
        "metadata": {"name": "c"},
        "spec": {"devices": {"requests": [{"name": "Bad"}]}},
    }
    assert {i.path for i in validate_object(claim, "1.33")} == {
        "spec.devices.requests[0]",
        "spec.devices.requests[0].name",
    }


# --- check_claim_spec ---------------------------------------------------------------------------------------


def exact(name: str = "gpu", **fields: Any) -> dict[str, Any]:
    return {"name": name, "exactly": {"deviceClassName": "gpu.nvidia.com", **fields}}


def spec(*requests: dict[str, Any], **devices: Any) -> dict[str, Any]:
    return {"devices": {"requests": list(requests), **devices}}


def messages(issues: list[SchemaIssue]) -> list[str]:
    return [f"{i.path}: {i.message}" for i in issues]


V1 = "resource.k8s.io/v1"


def test_requests_limit() -> None:
    assert check_claim_spec(spec(*(exact(f"r{i}") for i in range(32))), V1) == []
    issues = check_claim_spec(spec(*(exact(f"r{i}") for i in range(33))), V1)
    assert "devices.requests: too many requests: 33, the limit is 32" in messages(issues)


def test_subrequests_limit() -> None:
    def fa(n: int) -> dict[str, Any]:
        return {
            "name": "gpu",
            "firstAvailable": [{"name": f"s{i}", "deviceClassName": "c"} for i in range(n)],
        }

    assert check_claim_spec(spec(fa(8)), V1) == []
    assert messages(check_claim_spec(spec(fa(9)), V1)) == [
        "devices.requests[0].firstAvailable: too many subrequests: 9, the limit is 8"
    ]


def test_selectors_limit() -> None:
    sel = {"cel": {"expression": "true"}}
    assert check_claim_spec(spec(exact(selectors=[sel] * 32)), V1) == []
    assert messages(check_claim_spec(spec(exact(selectors=[sel] * 33)), V1)) == [
        "devices.requests[0].exactly.selectors: too many selectors: 33, the limit is 32"
    ]


def test_constraints_and_config_limits() -> None:
    con = {"matchAttribute": "resource.kubernetes.io/pcieRoot"}
    cfg = {"opaque": {"driver": "gpu.nvidia.com", "parameters": {"kind": "GpuConfig"}}}
    assert check_claim_spec(spec(exact(), constraints=[con] * 32, config=[cfg] * 32), V1) == []
    issues = messages(check_claim_spec(spec(exact(), constraints=[con] * 33, config=[cfg] * 33), V1))
    assert issues == [
        "devices.constraints: too many constraints: 33, the limit is 32",
        "devices.config: too many config entries: 33, the limit is 32",
    ]


@pytest.mark.parametrize("bad", ["GPU", "gpu_0", "-gpu", "a" * 64, ""])
def test_request_names_must_be_dns_labels(bad: str) -> None:
    [issue] = check_claim_spec(spec(exact(bad)), V1)
    assert issue.path == "devices.requests[0].name"
    assert "DNS label" in issue.message


def test_request_and_subrequest_names_unique() -> None:
    assert messages(check_claim_spec(spec(exact("gpu"), exact("gpu")), V1)) == [
        "devices.requests[1].name: duplicate request name 'gpu'"
    ]
    fa = {"name": "gpu", "firstAvailable": [{"name": "a", "deviceClassName": "c"}] * 2}
    assert messages(check_claim_spec(spec(fa), V1)) == [
        "devices.requests[0].firstAvailable[1].name: duplicate subrequest name 'a'"
    ]
    assert check_claim_spec(spec(exact("gpu-0"), exact("gpu-1")), V1) == []


def test_exactly_one_of_exactly_or_first_available() -> None:
    both = {**exact(), "firstAvailable": [{"name": "a", "deviceClassName": "c"}]}
    neither = {"name": "gpu"}
    for req in (both, neither):
        assert messages(check_claim_spec(spec(req), "resource.k8s.io/v1beta2")) == [
            "devices.requests[0]: exactly one of `exactly` or `firstAvailable` is required"
        ]
    flat_both = {
        "name": "gpu",
        "deviceClassName": "c",
        "firstAvailable": [{"name": "a", "deviceClassName": "c"}],
    }
    assert messages(check_claim_spec(spec(flat_both), "resource.k8s.io/v1beta1")) == [
        "devices.requests[0].deviceClassName: deviceClassName must not be set together with firstAvailable"
    ]
    assert messages(check_claim_spec(spec({"name": "gpu"}), "v1beta1")) == [
        "devices.requests[0].deviceClassName: deviceClassName is required"
    ]
    assert check_claim_spec(spec({"name": "gpu", "deviceClassName": "c", "count": 2}), "v1beta1") == []


def test_count_rules() -> None:
    assert check_claim_spec(spec(exact(count=2)), V1) == []
    assert check_claim_spec(spec(exact(allocationMode="All")), V1) == []
    assert messages(check_claim_spec(spec(exact(count=0)), V1)) == [
        "devices.requests[0].exactly.count: count must be greater than zero, got 0"
    ]
    assert messages(check_claim_spec(spec(exact(allocationMode="All", count=1)), V1)) == [
        "devices.requests[0].exactly.count: count must not be specified when allocationMode is 'All'"
    ]
    assert "unsupported allocationMode" in check_claim_spec(spec(exact(allocationMode="Some")), V1)[0].message


def test_cel_expression_length() -> None:
    def sel(n: int) -> list[dict[str, Any]]:
        return [{"cel": {"expression": "t" * n}}]

    assert check_claim_spec(spec(exact(selectors=sel(10240))), V1) == []
    assert messages(check_claim_spec(spec(exact(selectors=sel(10241))), V1)) == [
        "devices.requests[0].exactly.selectors[0].cel.expression: "
        "CEL expression is 10241 characters long, the limit is 10240"
    ]


def test_total_devices_per_claim() -> None:
    assert check_claim_spec(spec(exact("a", count=16), exact("b", count=16)), V1) == []
    assert messages(check_claim_spec(spec(exact("a", count=16), exact("b", count=17)), V1)) == [
        "devices.requests: the claim asks for at least 33 devices, "
        "more than the 32 one claim can be allocated"
    ]
    # firstAvailable counts its smallest alternative: 32 + min(1, 8) = 33.
    fa = {
        "name": "b",
        "firstAvailable": [
            {"name": "big", "deviceClassName": "c", "count": 8},
            {"name": "one", "deviceClassName": "c"},
        ],
    }
    assert len(check_claim_spec(spec(exact("a", count=31), fa), V1)) == 0
    assert len(check_claim_spec(spec(exact("a", count=32), fa), V1)) == 1


def test_constraint_and_config_references() -> None:
    fa = {"name": "gpu", "firstAvailable": [{"name": "big", "deviceClassName": "c"}]}
    good = spec(
        fa,
        exact("nic"),
        constraints=[{"requests": ["gpu/big", "nic"], "matchAttribute": "resource.kubernetes.io/pcieRoot"}],
        config=[{"requests": ["gpu"], "opaque": {"driver": "gpu.nvidia.com", "parameters": {}}}],
    )
    assert check_claim_spec(good, V1) == []
    bad = spec(
        fa,
        exact("nic"),
        constraints=[{"requests": ["gpu/small", "nic", "nic"], "matchAttribute": "pcieRoot"}],
        config=[{"requests": ["storage"], "opaque": {"driver": "Not_A_Driver", "parameters": {}}}],
    )
    assert messages(check_claim_spec(bad, V1)) == [
        "devices.constraints[0].requests[0]: 'gpu/small' must be the name of a request in the claim "
        "or the name of a request and a subrequest separated by '/'",
        "devices.constraints[0].requests[2]: duplicate reference 'nic'",
        "devices.constraints[0].matchAttribute: 'pcieRoot' must include the domain qualifier (domain/name)",
        "devices.config[0].requests[0]: 'storage' must be the name of a request in the claim "
        "or the name of a request and a subrequest separated by '/'",
        "devices.config[0].opaque.driver: driver name 'Not_A_Driver' is not a DNS subdomain: "
        "lower-case letters, digits, '-' and '.', each part starting and ending with a letter or digit",
    ]


def test_malformed_spec_does_not_crash() -> None:
    assert check_claim_spec({"devices": {"requests": "nope", "constraints": [None], "config": [3]}}, V1) != []
    assert check_claim_spec({}, V1) == []


# --- check_pod_spec_claims ----------------------------------------------------------------------------------


def pod_spec(claims: list[dict[str, Any]], *container_claims: list[dict[str, Any]], init: bool = False):
    containers = [{"name": f"c{i}", "resources": {"claims": cc}} for i, cc in enumerate(container_claims)]
    return {"resourceClaims": claims, "initContainers" if init else "containers": containers}


TPL = {"name": "gpu", "resourceClaimTemplateName": "single-gpu"}


def test_pod_claims_valid() -> None:
    assert check_pod_spec_claims(pod_spec([TPL], [{"name": "gpu"}], [{"name": "gpu"}])) == []
    split = [{"name": "gpu", "request": "r0"}, {"name": "gpu", "request": "r1"}]
    assert check_pod_spec_claims(pod_spec([TPL], split)) == []


def test_pod_claim_names() -> None:
    issues = check_pod_spec_claims(pod_spec([TPL, TPL, {"name": "Gpu", "resourceClaimName": "x"}]), "spec")
    assert messages(issues) == [
        "spec.resourceClaims[1].name: duplicate pod resource claim name 'gpu'",
        "spec.resourceClaims[2].name: pod resource claim name 'Gpu' is not a DNS label: lower-case letters, "
        "digits and '-', starting and ending with a letter or digit",
    ]


def test_pod_claim_exactly_one_source() -> None:
    both = {"name": "gpu", "resourceClaimName": "a", "resourceClaimTemplateName": "b"}
    for claim in (both, {"name": "gpu"}):
        assert messages(check_pod_spec_claims(pod_spec([claim]))) == [
            "resourceClaims[0]: exactly one of resourceClaimName or resourceClaimTemplateName is required"
        ]


@pytest.mark.parametrize("init", [False, True])
def test_container_claim_must_exist(init: bool) -> None:
    group = "initContainers" if init else "containers"
    assert messages(check_pod_spec_claims(pod_spec([TPL], [{"name": "gpus"}], init=init))) == [
        f"{group}[0].resources.claims[0].name: "
        "'gpus' must be one of the names in pod.spec.resourceClaims: gpu"
    ]
    assert "which is empty" in check_pod_spec_claims(pod_spec([], [{"name": "gpu"}], init=init))[0].message


def test_container_claim_duplicates() -> None:
    assert messages(check_pod_spec_claims(pod_spec([TPL], [{"name": "gpu"}, {"name": "gpu"}]))) == [
        "containers[0].resources.claims[1]: duplicate claim reference 'gpu'"
    ]
    mixed = check_pod_spec_claims(pod_spec([TPL], [{"name": "gpu"}, {"name": "gpu", "request": "r0"}]))
    assert [i.path for i in mixed] == ["containers[0].resources.claims[1]"]
    mixed_rev = check_pod_spec_claims(pod_spec([TPL], [{"name": "gpu", "request": "r0"}, {"name": "gpu"}]))
    assert [i.path for i in mixed_rev] == ["containers[0].resources.claims[1]"]
    same_req = check_pod_spec_claims(pod_spec([TPL], [{"name": "gpu", "request": "r0"}] * 2))
    assert "duplicate claim reference 'gpu' request 'r0'" in same_req[0].message
