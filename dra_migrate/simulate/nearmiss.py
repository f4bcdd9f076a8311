"""Near misses in plain words: why a claim cannot be allocated on any node, and how close it came.

Works per request (or firstAvailable alternative) over all nodes, like the allocator's per-request diagnosis
(`allocator.diagnose_requests`), but keeps the devices: for every device of the right class, the first
selector that rejects it (the allocator stops at the first false selector too) and the values of the
attributes and capacities that selector reads. Devices rejected for the same reason with the same values
are counted by node: "2 nodes have Tesla T4 but only 15Gi of memory".
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any

from dra_migrate.cel.refs import referenced
from dra_migrate.simulate.allocator import ALL, Allocator, lookup_attribute
from dra_migrate.simulate.claims import ClaimSpec, ExactRequest
from dra_migrate.simulate.inventory import Device, DeviceId

__all__ = ["referenced"]  # kept importable from here

_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4}


def pretty_quantity(text: str) -> str:
    """15360Mi -> 15Gi; other forms unchanged."""
    m = re.fullmatch(r"(\d+)(Ki|Mi|Gi|Ti)", text)
    if not m:
        return text
    value, unit = int(m.group(1)), _BINARY[m.group(2)]
    while unit < 4 and value % 1024 == 0 and value:
        value, unit = value // 1024, unit + 1
    suffix = {v: k for k, v in _BINARY.items()}[unit]
    return f"{value}{suffix}"


def _value(device: Device, what: str, domain: str, name: str) -> str | None:
    if what == "attributes":
        attr = lookup_attribute(device, f"{domain}/{name}")
        if attr is None:
            return None
        return str(next(iter(attr.values()), ""))
    table: Mapping[str, Mapping[str, Any]] = device.capacity
    cap = table.get(f"{domain}/{name}")
    if cap is None and domain == device.driver:
        cap = table.get(name)
    return None if cap is None else pretty_quantity(str(cap.get("value", "")))


def describe_device(device: Device) -> str:
    """What a person calls the device: the product name, plus the MIG profile."""
    product = _value(device, "attributes", device.driver, "productName")
    profile = _value(device, "attributes", device.driver, "profile")
    kind = _value(device, "attributes", device.driver, "type")
    base = product or device.name
    if kind == "mig" and profile:
        return f"{base} MIG {profile}"
    return base


def _phrase(what: str, name: str, value: str | None) -> str:
    if value is None:
        return f"no {name} {'capacity' if what == 'capacity' else 'attribute'}"
    if what == "capacity":
        return f"only {value} of {name}"
    return f"{name} is {value}"


def _nodes(names: Sequence[str]) -> str:
    shown = ", ".join(names[:3])
    more = f" and {len(names) - 3} more" if len(names) > 3 else ""
    return f"{len(names)} node{'s' if len(names) != 1 else ''} ({shown}{more})"


def _have(names: Sequence[str]) -> str:
    return "has" if len(names) == 1 else "have"


@dataclass(slots=True)
class VariantReport:
    claim: str
    request: str
    subrequest: str | None
    needed: int | str
    best: int = 0  # most matching and free devices on one node
    sentences: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        sub = f", alternative {self.subrequest}" if self.subrequest else ""
        return f"claim {self.claim}, request {self.request}{sub}"


def _variant(
    allocator: Allocator,
    claim: ClaimSpec,
    request_name: str,
    variant: ExactRequest,
    sub: str | None,
    nodes: Sequence[str],
    allocated: AbstractSet[DeviceId],
) -> VariantReport:
    needed: int | str = ALL if variant.allocation_mode == ALL else variant.count
    rep = VariantReport(claim.name, request_name, sub, needed)
    cls = allocator.inventory.classes.get(variant.device_class_name)
    if cls is None:
        rep.sentences.append(f"device class {variant.device_class_name} does not exist")
        return rep

    def check(expr: str, device: Device) -> bool | str:
        try:
            return allocator.evaluate(expr, device)
        except Exception as exc:  # noqa: BLE001 - any engine error is reported as text
            return str(exc)

    rejected: dict[tuple[int, str, tuple[str, ...]], list[str]] = {}  # (selector, device, values) -> nodes
    errors: dict[tuple[int, str], list[str]] = {}
    matching: dict[str, int] = {}
    free: dict[str, int] = {}
    any_class = False
    refs_by_selector = [referenced(e) for e in variant.selectors]
    for node in nodes:
        for pool in allocator.pools(node):
            if pool.incomplete or pool.invalid_reason:
                continue
            for device in pool.devices:
                if not all(check(e, device) is True for e in cls.selectors):
                    continue
                any_class = True
                failed = None
                for i, expr in enumerate(variant.selectors):
                    r = check(expr, device)
                    if r is True:
                        continue
                    if r is False:
                        values = tuple(
                            _phrase(w, n, _value(device, w, d, n)) for w, d, n in refs_by_selector[i]
                        )
                        failed = (i, describe_device(device), values)
                        rejected.setdefault(failed, [])
                        if node not in rejected[failed]:
                            rejected[failed].append(node)
                    else:
                        failed = (i, r, ())
                        errors.setdefault((i, r), [])
                        if node not in errors[(i, r)]:
                            errors[(i, r)].append(node)
                    break
                if failed is None:
                    matching[node] = matching.get(node, 0) + 1
                    if device.id not in allocated:
                        free[node] = free.get(node, 0) + 1
    if not any_class:
        rep.sentences.append(f"no node has a device of class {cls.name}")
        return rep
    rep.best = max(free.values(), default=0)
    want = rep.needed if isinstance(rep.needed, int) else 1
    if matching:
        most_node = max(sorted(matching), key=lambda n: matching[n])
        most = matching[most_node]
        if most < want:
            rep.sentences.append(
                f"needs {want} matching devices on one node, but the most on any node is {most} ({most_node})"
            )
        elif rep.best < want:
            busy = most - free.get(most_node, 0)
            rep.sentences.append(f"{most_node}: {busy} of {most} matching devices are already allocated")
    if not matching:
        # Selector rejections only matter when nothing matches; otherwise they are just other devices.
        for (i, product, values), node_names in sorted(rejected.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            shown = [v for v in values if v.rsplit(" ", 1)[-1] not in product]
            what = f" but {', '.join(shown)}" if shown else ""
            rep.sentences.append(
                f"{_nodes(node_names)} {_have(node_names)} {product}{what}: "
                f"rejected by selector #{i} `{variant.selectors[i]}`"
            )
    for (i, message), node_names in sorted(errors.items()):
        rep.sentences.append(
            f"selector #{i} `{variant.selectors[i]}` fails with a CEL error "
            f"on {_nodes(node_names)}: {message}"
        )
    return rep


def explain(
    allocator: Allocator,
    claims: Sequence[ClaimSpec],
    nodes: Sequence[str],
    allocated: AbstractSet[DeviceId] = frozenset(),
) -> list[VariantReport]:
    """One report per request and alternative, in the claim's order."""
    out: list[VariantReport] = []
    for claim in claims:
        for request in claim.requests:
            variants = list(request.first_available) or ([request.exactly] if request.exactly else [])
            for v in variants:
                sub = v.name if request.first_available else None
                out.append(_variant(allocator, claim, request.name, v, sub, nodes, allocated))
    return out


def sentences(reports: Sequence[VariantReport], limit: int = 6) -> list[str]:
    """Plain-words lines for a report: the request first, then why it came close but failed."""
    lines: list[str] = []
    for r in reports:
        for s in r.sentences:
            lines.append(f"{r.label}: {s}")
    return lines[:limit]
