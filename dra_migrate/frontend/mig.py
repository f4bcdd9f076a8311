"""MIG profile names: device plugin resource names and GFD labels → the DRA driver's `profile` attribute.

The device plugin replaces '+' by '.' in resource names (`nvidia.com/mig-1g.10gb.me`); the driver publishes
go-nvlib's profile string (`1g.10gb+me`). GFD's product label under the single strategy is
`<model>-MIG-<profile>` (plus `-SHARED` when time-sliced). This is a small local parser; the selection
translation (dra_migrate/selection) owns node selection in general.
"""

from __future__ import annotations

import re
from typing import Any

MIG_STRATEGY_LABEL = "nvidia.com/mig.strategy"

MIG_CLASS = "mig.nvidia.com"
PRODUCT_LABEL = "nvidia.com/gpu.product"
MEMORY_LABEL = "nvidia.com/gpu.memory"
_RESOURCE = re.compile(
    r"nvidia\.com/mig-(?P<base>[0-9]+(?:c\.[0-9]+)?g\.[0-9]+gb)(?P<attrs>(?:\.[a-z]+)*?)(?P<shared>\.shared)?"
)
_PRODUCT = re.compile(
    r"(?P<model>.+)-MIG-(?P<base>[0-9]+(?:c\.[0-9]+)?g\.[0-9]+gb)(?P<attrs>(?:[+.][a-z]+)*)(?P<shared>-SHARED)?"
)


def profile_from_resource(resource: str) -> tuple[str, bool] | None:
    """(`1g.10gb+me`, shared) for `nvidia.com/mig-1g.10gb.me[.shared]`; None if not a MIG resource."""
    m = _RESOURCE.fullmatch(resource)
    if not m:
        return None
    attrs = [a for a in m["attrs"].split(".") if a]
    return m["base"] + "".join("+" + a for a in attrs), m["shared"] is not None


def profile_from_product(value: str) -> str | None:
    m = _PRODUCT.fullmatch(value.strip())
    if not m:
        return None
    attrs = [a for a in re.split(r"[+.]", m["attrs"]) if a]
    return m["base"] + "".join("+" + a for a in attrs)


def selector(profile: str) -> str:
    return f"device.attributes['gpu.nvidia.com'].profile == '{profile}'"


def product_values(node_selector: dict[str, str], affinity: dict[str, Any] | None) -> list[str]:
    """Values the pod requires for nvidia.com/gpu.product: its nodeSelector, or one required affinity term
    with an `In` expression (several terms are ORed: only a value every term pins counts)."""
    if PRODUCT_LABEL in node_selector:
        return [node_selector[PRODUCT_LABEL]]
    terms = (
        (((affinity or {}).get("nodeAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution") or {}).get(
            "nodeSelectorTerms"
        )
        if isinstance(affinity, dict)
        else None
    )
    if not isinstance(terms, list) or not terms:
        return []
    per_term: list[set[str]] = []
    for term in terms:
        found: set[str] = set()
        for e in (term or {}).get("matchExpressions") or [] if isinstance(term, dict) else []:
            if isinstance(e, dict) and e.get("key") == PRODUCT_LABEL and e.get("operator") == "In":
                found.update(str(v) for v in e.get("values") or [])
        per_term.append(found)
    if any(not s for s in per_term):
        return []
    return sorted(set().union(*per_term))


def profiles_for(node_selector: dict[str, str], affinity: dict[str, Any] | None) -> set[str | None]:
    """The MIG profiles the product label restricts the pod to (None for a value that is a full GPU)."""
    return {profile_from_product(v) for v in product_values(node_selector, affinity)}


def memory_mib(node_selector: dict[str, str]) -> int | None:
    v = node_selector.get(MEMORY_LABEL)
    return int(v) if v is not None and v.isdigit() else None
