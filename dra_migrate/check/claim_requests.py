"""What a claim, claim template or DeviceClass asks for, read the same way by the checks and the lints: its
requests, each request's alternatives (v1beta1 flat, `exactly`, `firstAvailable`), their CEL selectors and the
fewest devices the claim can get."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def requests_of(obj: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    def sub(m: Mapping[str, Any], key: str) -> Mapping[str, Any]:
        v = m.get(key)
        return v if isinstance(v, Mapping) else {}

    spec = sub(obj, "spec")
    if obj.get("kind") == "ResourceClaimTemplate":
        spec = sub(spec, "spec")
    requests = sub(spec, "devices").get("requests")
    return [r for r in requests if isinstance(r, Mapping)] if isinstance(requests, list) else []


def alternatives(request: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    subs = request.get("firstAvailable")
    if isinstance(subs, list) and subs:
        return [s for s in subs if isinstance(s, Mapping)]
    exactly = request.get("exactly")
    return [exactly] if isinstance(exactly, Mapping) else [request]  # v1beta1: fields on the request


def selectors(obj: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(device class, CEL expression) of a claim or claim template; ("", expression) for a DeviceClass's own."""
    if obj.get("kind") == "DeviceClass":
        spec = obj.get("spec") if isinstance(obj.get("spec"), Mapping) else {}
        parts: list[Any] = [spec]
    else:
        parts = [alt for r in requests_of(obj) for alt in alternatives(r)]
    out: list[tuple[str, str]] = []
    for part in parts:
        device_class = "" if obj.get("kind") == "DeviceClass" else str(part.get("deviceClassName", ""))
        for sel in part.get("selectors") or []:
            expr = ((sel or {}).get("cel") or {}).get("expression") if isinstance(sel, Mapping) else None
            if isinstance(expr, str):
                out.append((device_class, expr))
    return out


def min_devices(obj: Mapping[str, Any]) -> int | None:
    """The fewest devices the claim can get (firstAvailable: its smallest alternative); None with `All`."""
    total = 0
    for request in requests_of(obj):
        counts = []
        for alt in alternatives(request):
            if alt.get("allocationMode") == "All":
                return None
            count = alt.get("count", 1)
            counts.append(count if isinstance(count, int) and not isinstance(count, bool) else 1)
        total += min(counts, default=0)
    return total
