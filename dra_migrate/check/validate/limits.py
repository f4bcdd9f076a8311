"""API-server validation rules for DRA objects that the OpenAPI schema does not carry.

Mirrors pkg/apis/resource/validation and the pod resource-claim checks of pkg/apis/core/validation
(dra-api.md §2.2, §3): list sizes, DNS names, uniqueness, one-of fields, counts and cross references. The
numbers come from rules/features.yaml (`limits`). Inputs may be malformed (the schema reports types); these
checks never raise on odd shapes, they just skip what they cannot read.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from dra_migrate.check.validate.issues import LIMIT, SchemaIssue, join_path, split_api_version
from dra_migrate.ruleset.features import load_features

_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_ALLOCATION_MODES = ("ExactCount", "All")
# In v1beta1 the request itself carries what v1beta2/v1 put under `exactly`.
_FLAT_REQUEST_FIELDS = (
    "deviceClassName",
    "selectors",
    "allocationMode",
    "count",
    "adminAccess",
    "tolerations",
    "capacity",
)


def _limit(name: str) -> int:
    return load_features().limits[name]


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _dict(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _set(value: Any) -> bool:
    """Set in the API sense: present and not null (an empty list counts as unset, as in Go)."""
    return value is not None and value != []


def dns_label_problem(value: Any) -> str | None:
    if not isinstance(value, str) or not value:
        return "must be a non-empty DNS label"
    if len(value) > 63:
        return f"must be no more than 63 characters (DNS label), got {len(value)}"
    if not _DNS_LABEL.fullmatch(value):
        return (
            f"{value!r} is not a DNS label: lower-case letters, digits and '-', starting and ending with a "
            "letter or digit"
        )
    return None


def dns_subdomain_problem(value: Any, max_length: int = 253) -> str | None:
    if not isinstance(value, str) or not value:
        return "must be a non-empty DNS subdomain"
    if len(value) > max_length:
        return f"must be no more than {max_length} characters, got {len(value)}"
    if not _DNS_SUBDOMAIN.fullmatch(value):
        return (
            f"{value!r} is not a DNS subdomain: lower-case letters, digits, '-' and '.', each part starting "
            "and ending with a letter or digit"
        )
    return None


class _Checker:
    def __init__(self) -> None:
        self.issues: list[SchemaIssue] = []

    def add(self, path: str, message: str) -> None:
        self.issues.append(SchemaIssue(path, message, LIMIT))

    def max_items(self, items: list[Any], limit_name: str, path: str, what: str) -> None:
        limit = _limit(limit_name)
        if len(items) > limit:
            self.add(path, f"too many {what}: {len(items)}, the limit is {limit}")

    def name(self, value: Any, path: str, seen: set[str], what: str) -> None:
        problem = dns_label_problem(value)
        if problem:
            self.add(path, f"{what} name {problem}")
        elif value in seen:
            self.add(path, f"duplicate {what} name {value!r}")
        if isinstance(value, str):
            seen.add(value)


# --- ResourceClaimSpec --------------------------------------------------------------------------------------


def _check_exact(c: _Checker, req: Mapping[str, Any], path: str) -> int:
    """Checks of one exact request / subrequest; returns the fewest devices it allocates."""
    dcn = req.get("deviceClassName")
    if not dcn:
        c.add(join_path(path, "deviceClassName"), "deviceClassName is required")
    else:
        problem = dns_subdomain_problem(dcn)
        if problem:
            c.add(join_path(path, "deviceClassName"), f"device class name {problem}")

    selectors = _list(req.get("selectors"))
    c.max_items(selectors, "selectors_per_request", join_path(path, "selectors"), "selectors")
    max_len = _limit("cel_expression_max_length")
    for i, sel in enumerate(selectors):
        cel = _dict(sel).get("cel")
        expr = _dict(cel).get("expression")
        if not isinstance(expr, str) or not expr.strip():
            c.add(
                join_path(path, "selectors", i, "cel", "expression"), "a CEL selector expression is required"
            )
        elif len(expr) > max_len:
            c.add(
                join_path(path, "selectors", i, "cel", "expression"),
                f"CEL expression is {len(expr)} characters long, the limit is {max_len}",
            )

    tolerations = _list(req.get("tolerations"))
    c.max_items(tolerations, "tolerations_per_request", join_path(path, "tolerations"), "tolerations")

    mode = req.get("allocationMode") or "ExactCount"
    count = req.get("count")
    if mode not in _ALLOCATION_MODES:
        c.add(
            join_path(path, "allocationMode"),
            f"unsupported allocationMode {mode!r}: must be one of {', '.join(_ALLOCATION_MODES)}",
        )
        return 1
    if mode == "All":
        if count is not None:
            c.add(join_path(path, "count"), "count must not be specified when allocationMode is 'All'")
        return 1  # at least one matching device must exist
    if count is None:
        return 1
    if isinstance(count, bool) or not isinstance(count, int):
        return 1  # the schema reports the type
    if count <= 0:
        c.add(join_path(path, "count"), f"count must be greater than zero, got {count}")
        return 1
    return count


def _check_request(
    c: _Checker, req: Mapping[str, Any], path: str, flat: bool, subrequests: dict[str, set[str]]
) -> int:
    sub_list = _list(req.get("firstAvailable"))
    name = req.get("name")
    subs: set[str] = set()
    if isinstance(name, str):
        subrequests[name] = subs
    if flat:
        exact_set = [f for f in _FLAT_REQUEST_FIELDS if _set(req.get(f))]
        if sub_list and exact_set:
            c.add(
                join_path(path, exact_set[0]),
                f"{', '.join(exact_set)} must not be set together with firstAvailable",
            )
        exact: Mapping[str, Any] | None = None if sub_list else req
    else:
        has_exact = req.get("exactly") is not None
        if has_exact == bool(sub_list):
            c.add(path, "exactly one of `exactly` or `firstAvailable` is required")
        exact = _dict(req.get("exactly")) if has_exact else None
    if exact is not None:
        return _check_exact(c, exact, join_path(path, "exactly") if not flat else path)

    c.max_items(sub_list, "subrequests_per_request", join_path(path, "firstAvailable"), "subrequests")
    fewest: int | None = None
    for i, sub in enumerate(sub_list):
        sub_path = join_path(path, "firstAvailable", i)
        sub_map = _dict(sub)
        c.name(sub_map.get("name"), join_path(sub_path, "name"), subs, "subrequest")
        n = _check_exact(c, sub_map, sub_path)
        fewest = n if fewest is None else min(fewest, n)
    return fewest or 0


def _check_refs(c: _Checker, refs: list[Any], path: str, subrequests: dict[str, set[str]]) -> None:
    seen: set[str] = set()
    for i, ref in enumerate(refs):
        ref_path = join_path(path, i)
        if not isinstance(ref, str):
            continue
        req, _, sub = ref.partition("/")
        if req not in subrequests or (sub and sub not in subrequests[req]) or ref.count("/") > 1:
            c.add(
                ref_path,
                f"{ref!r} must be the name of a request in the claim or the name of a request and a "
                "subrequest separated by '/'",
            )
        elif ref in seen:
            c.add(ref_path, f"duplicate reference {ref!r}")
        seen.add(ref)


def check_claim_spec(spec: Mapping[str, Any], api_version: str, path: str = "") -> list[SchemaIssue]:
    """Semantic checks of a ResourceClaimSpec (`spec` of a ResourceClaim, `spec.spec` of a template).

    api_version: 'resource.k8s.io/v1beta1' (or just 'v1beta1'): v1beta1 requests are flat, v1beta2/v1 use
    `exactly`/`firstAvailable`. Paths are relative to `path` (pass 'spec.spec' for a template).
    """
    _, version = split_api_version(api_version)
    flat = version in ("v1beta1", "v1alpha3")
    c = _Checker()
    devices = _dict(_dict(spec).get("devices"))
    dpath = join_path(path, "devices")

    requests = _list(devices.get("requests"))
    c.max_items(requests, "requests_per_claim", join_path(dpath, "requests"), "requests")
    names: set[str] = set()
    subrequests: dict[str, set[str]] = {}
    total = 0
    for i, req in enumerate(requests):
        rpath = join_path(dpath, "requests", i)
        req_map = _dict(req)
        c.name(req_map.get("name"), join_path(rpath, "name"), names, "request")
        total += _check_request(c, req_map, rpath, flat, subrequests)
    limit = _limit("devices_per_claim")
    if total > limit:
        c.add(
            join_path(dpath, "requests"),
            f"the claim asks for at least {total} devices, more than the {limit} one claim can be allocated",
        )

    constraints = _list(devices.get("constraints"))
    c.max_items(constraints, "constraints_per_claim", join_path(dpath, "constraints"), "constraints")
    for i, con in enumerate(constraints):
        cpath = join_path(dpath, "constraints", i)
        con_map = _dict(con)
        _check_refs(c, _list(con_map.get("requests")), join_path(cpath, "requests"), subrequests)
        kinds = [k for k in ("matchAttribute", "distinctAttribute") if _set(con_map.get(k))]
        if len(kinds) != 1:
            c.add(cpath, "exactly one of matchAttribute or distinctAttribute is required")
        for k in kinds:
            value = con_map.get(k)
            if isinstance(value, str) and "/" not in value:
                c.add(join_path(cpath, k), f"{value!r} must include the domain qualifier (domain/name)")

    config = _list(devices.get("config"))
    c.max_items(config, "config_per_claim", join_path(dpath, "config"), "config entries")
    for i, entry in enumerate(config):
        epath = join_path(dpath, "config", i)
        entry_map = _dict(entry)
        _check_refs(c, _list(entry_map.get("requests")), join_path(epath, "requests"), subrequests)
        _check_opaque(c, entry_map, epath)
    return c.issues


def _check_opaque(c: _Checker, entry: Mapping[str, Any], path: str) -> None:
    opaque = entry.get("opaque")
    if opaque is None:
        c.add(path, "exactly one configuration kind is required: opaque")
        return
    opath = join_path(path, "opaque")
    driver = _dict(opaque).get("driver")
    problem = dns_subdomain_problem(driver, _limit("driver_name_max_length"))
    if problem:
        c.add(join_path(opath, "driver"), f"driver name {problem}")
    params = _dict(opaque).get("parameters")
    if params is None:
        c.add(join_path(opath, "parameters"), "parameters are required and must not be null")
        return
    size = len(json.dumps(params, separators=(",", ":")).encode())
    max_size = _limit("opaque_parameters_max_bytes")
    if size > max_size:
        c.add(join_path(opath, "parameters"), f"parameters are {size} bytes of JSON, the limit is {max_size}")


# --- Pod side -----------------------------------------------------------------------------------------------


def check_pod_spec_claims(pod_spec: Mapping[str, Any], path: str = "") -> list[SchemaIssue]:
    """Pod-level DRA rules: spec.resourceClaims and every (init) container's resources.claims.

    Paths are relative to `path` (e.g. 'spec.template.spec' for a Deployment).
    """
    c = _Checker()
    spec = _dict(pod_spec)
    pod_claims = _list(spec.get("resourceClaims"))
    names: set[str] = set()
    for i, claim in enumerate(pod_claims):
        cpath = join_path(path, "resourceClaims", i)
        claim_map = _dict(claim)
        c.name(claim_map.get("name"), join_path(cpath, "name"), names, "pod resource claim")
        refs = [k for k in ("resourceClaimName", "resourceClaimTemplateName") if claim_map.get(k)]
        if len(refs) != 1:
            c.add(cpath, "exactly one of resourceClaimName or resourceClaimTemplateName is required")
        for k in refs:
            problem = dns_subdomain_problem(claim_map.get(k))
            if problem:
                c.add(join_path(cpath, k), problem)
    for group in ("initContainers", "containers"):
        for i, container in enumerate(_list(spec.get(group))):
            claims = _list(_dict(_dict(container).get("resources")).get("claims"))
            _check_container_claims(c, claims, join_path(path, group, i, "resources", "claims"), names)
    return c.issues


def _check_container_claims(c: _Checker, claims: list[Any], path: str, pod_names: set[str]) -> None:
    whole: set[str] = set()  # claims referenced without a request: everything of the claim
    per_request: dict[str, set[str]] = {}
    for i, ref in enumerate(claims):
        rpath = join_path(path, i)
        ref_map = _dict(ref)
        name, request = ref_map.get("name"), ref_map.get("request") or None
        if not isinstance(name, str) or not name:
            c.add(join_path(rpath, "name"), "name is required")
            continue
        if name not in pod_names:
            listed = f": {', '.join(sorted(pod_names))}" if pod_names else " which is empty"
            c.add(
                join_path(rpath, "name"),
                f"{name!r} must be one of the names in pod.spec.resourceClaims{listed}",
            )
        if request is None:
            if name in whole:
                c.add(rpath, f"duplicate claim reference {name!r}")
            elif name in per_request:
                c.add(
                    rpath,
                    f"claim {name!r} is referenced as a whole and for request(s) "
                    f"{', '.join(sorted(per_request[name]))}; the whole claim already includes them",
                )
            whole.add(name)
            continue
        problem = dns_label_problem(request)
        if problem:
            c.add(join_path(rpath, "request"), f"request name {problem}")
        if name in whole:
            c.add(
                rpath, f"claim {name!r} is already referenced as a whole, which includes request {request!r}"
            )
        elif request in per_request.get(name, set()):
            c.add(rpath, f"duplicate claim reference {name!r} request {request!r}")
        per_request.setdefault(name, set()).add(request)


# --- whole objects ------------------------------------------------------------------------------------------


def _check_name(c: _Checker, obj: Mapping[str, Any]) -> None:
    meta = _dict(obj.get("metadata"))
    name = meta.get("name")
    if name is None and meta.get("generateName"):
        return
    problem = dns_subdomain_problem(name)
    if problem:
        c.add("metadata.name", f"{obj.get('kind')} name {problem}")


def check_object_limits(obj: Mapping[str, Any]) -> list[SchemaIssue]:
    """The semantic checks that apply to a whole object of a DRA-relevant kind (others: none)."""
    kind, api_version = obj.get("kind"), str(obj.get("apiVersion", ""))
    c = _Checker()
    spec = _dict(obj.get("spec"))
    if kind == "ResourceClaim":
        _check_name(c, obj)
        c.issues.extend(check_claim_spec(spec, api_version, "spec"))
    elif kind == "ResourceClaimTemplate":
        _check_name(c, obj)
        extra = sorted(k for k in _dict(spec.get("metadata")) if k not in ("labels", "annotations"))
        for k in extra:
            c.add(
                join_path("spec.metadata", k),
                "only labels and annotations are allowed in a template's metadata",
            )
        c.issues.extend(check_claim_spec(_dict(spec.get("spec")), api_version, "spec.spec"))
    elif kind == "Pod" and api_version == "v1":
        c.issues.extend(check_pod_spec_claims(spec, "spec"))
    elif kind == "PodTemplate" and api_version == "v1":
        c.issues.extend(check_pod_spec_claims(_dict(_dict(obj.get("template")).get("spec")), "template.spec"))
    return c.issues
