"""ResourceClaim specs as plain dicts -> a version-neutral request model.

Accepts the v1/v1beta2 shape (`exactly:` / `firstAvailable:`) and the v1beta1 flat shape (fields directly on
the request, `firstAvailable` also directly on the request since 1.33). The apiserver treats both as the
same internal fields (pkg/apis/resource/validation ResourceNormalizationRules), so one model serves all.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

EXACT_COUNT = "ExactCount"
ALL = "All"


class ClaimSpecError(ValueError):
    """The claim spec is not of a shape the simulator (or the apiserver) accepts."""


@dataclass(frozen=True, slots=True)
class ExactRequest:
    """An `exactly` request or one `firstAvailable` subrequest."""

    name: str
    device_class_name: str
    selectors: tuple[str, ...]  # CEL expressions; "" marks a selector without `cel`
    allocation_mode: str = EXACT_COUNT
    count: int = 1
    admin_access: bool = False
    tolerations: tuple[Mapping[str, Any], ...] = ()


@dataclass(frozen=True, slots=True)
class Request:
    name: str
    exactly: ExactRequest | None
    first_available: tuple[ExactRequest, ...] = ()


@dataclass(frozen=True, slots=True)
class Constraint:
    requests: tuple[str, ...]  # empty = all requests of the claim; "<req>" or "<req>/<sub>"
    match_attribute: str | None
    distinct_attribute: str | None = None


@dataclass(frozen=True, slots=True)
class ClaimSpec:
    name: str
    requests: tuple[Request, ...]
    constraints: tuple[Constraint, ...] = ()


def _selectors(raw: Any) -> tuple[str, ...]:
    out: list[str] = []
    for sel in raw or []:
        cel = (sel or {}).get("cel") or {}
        out.append(str(cel.get("expression", "")))
    return tuple(out)


def _exact(name: str, body: Mapping[str, Any]) -> ExactRequest:
    mode = str(body.get("allocationMode") or EXACT_COUNT)
    count_raw = body.get("count")
    if mode == ALL:
        count = 0
    else:
        try:
            count = 1 if count_raw is None else int(count_raw)
        except (TypeError, ValueError) as exc:
            raise ClaimSpecError(f"request {name}: count {count_raw!r} is not an integer") from exc
        if count <= 0:
            raise ClaimSpecError(f"request {name}: count must be greater than zero")
    return ExactRequest(
        name=name,
        device_class_name=str(body.get("deviceClassName") or ""),
        selectors=_selectors(body.get("selectors")),
        allocation_mode=mode,
        count=count,
        admin_access=bool(body.get("adminAccess", False)),
        tolerations=tuple(body.get("tolerations") or ()),
    )


def parse_request(raw: Mapping[str, Any]) -> Request:
    name = str(raw.get("name", ""))
    subs = raw.get("firstAvailable")
    if subs:
        parsed = tuple(_exact(str(s.get("name", "")), s) for s in subs)
        return Request(name, None, parsed)
    exactly = raw.get("exactly")
    if isinstance(exactly, Mapping):
        return Request(name, _exact(name, exactly))
    # v1beta1: the ExactDeviceRequest fields sit directly on the request.
    return Request(name, _exact(name, raw))


def parse_claim_spec(spec: Mapping[str, Any], name: str = "") -> ClaimSpec:
    """`spec` is a ResourceClaimSpec ({devices: {requests, constraints, config}})."""
    devices = spec.get("devices") or {}
    requests = tuple(parse_request(r) for r in devices.get("requests") or [])
    constraints = tuple(
        Constraint(
            requests=tuple(str(r) for r in c.get("requests") or []),
            match_attribute=c.get("matchAttribute"),
            distinct_attribute=c.get("distinctAttribute"),
        )
        for c in devices.get("constraints") or []
    )
    return ClaimSpec(name=name, requests=requests, constraints=constraints)


def claim_spec_from_object(obj: Mapping[str, Any]) -> ClaimSpec:
    """A ResourceClaim or ResourceClaimTemplate object (template: spec.spec)."""
    name = str((obj.get("metadata") or {}).get("name", ""))
    spec = obj.get("spec") or {}
    if obj.get("kind") == "ResourceClaimTemplate":
        spec = spec.get("spec") or {}
    return parse_claim_spec(spec, name)
