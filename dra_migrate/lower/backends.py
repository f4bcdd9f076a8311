"""The DRA request shape per resource.k8s.io API version. The IR does not change; only this does."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dra_migrate.config import DEFAULT_API_VERSION


@dataclass(slots=True)
class DeviceChoice:
    device_class: str
    count: int = 1
    selectors: list[str] = field(default_factory=list)
    capacity: dict[str, str] = field(default_factory=dict)  # capacity.requests per device (consumable capacity)


@dataclass(slots=True)
class Request:
    name: str
    choice: DeviceChoice | None = None  # exactly one device choice
    alternatives: list[tuple[str, DeviceChoice]] = field(default_factory=list)  # firstAvailable, in order


def _exact(choice: DeviceChoice) -> dict[str, Any]:
    body: dict[str, Any] = {"deviceClassName": choice.device_class}
    if choice.selectors:
        body["selectors"] = [{"cel": {"expression": e}} for e in choice.selectors]
    body["count"] = choice.count
    if choice.capacity:
        body["capacity"] = {"requests": dict(choice.capacity)}
    return body


def request_object(req: Request, api_version: str) -> dict[str, Any]:
    out: dict[str, Any] = {"name": req.name}
    flat = api_version.endswith("/v1beta1")
    if req.alternatives:
        out["firstAvailable"] = [{"name": n, **_exact(c)} for n, c in req.alternatives]
    elif flat:
        assert req.choice is not None
        out.update(_exact(req.choice))
    else:
        assert req.choice is not None
        out["exactly"] = _exact(req.choice)
    return out


def claim_template(
    name: str,
    namespace: str | None,
    requests: list[Request],
    api_version: str = DEFAULT_API_VERSION,
    config: list[dict[str, Any]] | None = None,
    constraints: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name}
    if namespace:
        metadata["namespace"] = namespace
    devices: dict[str, Any] = {"requests": [request_object(r, api_version) for r in requests]}
    if constraints:
        devices["constraints"] = constraints
    if config:
        devices["config"] = config
    return {
        "apiVersion": api_version,
        "kind": "ResourceClaimTemplate",
        "metadata": metadata,
        "spec": {"spec": {"devices": devices}},
    }
