"""The `device` variable of a DRA CEL selector, built from a ResourceSlice device entry."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dra_migrate.cel.quantity import Quantity, QuantityError, parse_quantity
from dra_migrate.cel.semver import Semver, SemverError, parse_semver

AttributeValue = str | int | bool | Semver


@dataclass
class DeviceView:
    driver: str
    attributes: dict[str, dict[str, AttributeValue]] = field(default_factory=dict)
    capacity: dict[str, dict[str, Quantity]] = field(default_factory=dict)
    # Only visible to CEL with the DRAConsumableCapacity gate (1.34+); false when unset, as upstream.
    allow_multiple_allocations: bool = False
    # The ResourceSlice device name; not visible to CEL, used for reports.
    name: str = ""

    def attribute(self, qualified: str) -> AttributeValue | None:
        domain, ident = split_qualified_name(qualified, self.driver)
        return self.attributes.get(domain, {}).get(ident)


def split_qualified_name(name: str, default_domain: str) -> tuple[str, str]:
    """parseQualifiedName: names without "domain/" belong to the driver's domain."""
    domain, sep, ident = name.partition("/")
    return (domain, ident) if sep else (default_domain, name)


class DeviceFormatError(ValueError):
    """The device entry is not a valid ResourceSlice device."""


def _attribute_value(name: str, raw: Any) -> AttributeValue:
    if not isinstance(raw, Mapping):
        raise DeviceFormatError(f"attribute {name}: expected a mapping with one of string/int/bool/version")
    kinds = [k for k in ("string", "int", "bool", "version") if k in raw]
    if len(kinds) != 1:
        raise DeviceFormatError(f"attribute {name}: exactly one of string, int, bool, version must be set")
    kind = kinds[0]
    v = raw[kind]
    if kind == "string":
        if not isinstance(v, str):
            raise DeviceFormatError(f"attribute {name}: string value must be a string")
        return v
    if kind == "int":
        if isinstance(v, bool) or not isinstance(v, int):
            raise DeviceFormatError(f"attribute {name}: int value must be an integer")
        return v
    if kind == "bool":
        if not isinstance(v, bool):
            raise DeviceFormatError(f"attribute {name}: bool value must be true or false")
        return v
    try:
        return parse_semver(str(v))
    except SemverError as e:
        raise DeviceFormatError(f"attribute {name}: parse semantic version: {e}") from e


def _capacity_value(name: str, raw: Any) -> Quantity:
    # v1beta1 allowed a plain quantity; v1beta2/v1 wrap it as {value: q, requestPolicy: ...}.
    value = raw.get("value") if isinstance(raw, Mapping) else raw
    if isinstance(value, bool) or value is None:
        raise DeviceFormatError(f"capacity {name}: missing quantity")
    try:
        return parse_quantity(str(value))
    except QuantityError as e:
        raise DeviceFormatError(f"capacity {name}: {e}") from e


def device_from_slice(device: Mapping[str, Any], driver: str) -> DeviceView:
    """Build the CEL view of one `spec.devices[]` entry (v1/v1beta2 shape, or v1beta1 with `basic:`)."""
    body: Mapping[str, Any] = device
    if isinstance(device.get("basic"), Mapping):
        body = device["basic"]
    attributes: dict[str, dict[str, AttributeValue]] = {}
    for name, raw in (body.get("attributes") or {}).items():
        domain, ident = split_qualified_name(str(name), driver)
        attributes.setdefault(domain, {})[ident] = _attribute_value(str(name), raw)
    capacity: dict[str, dict[str, Quantity]] = {}
    for name, raw in (body.get("capacity") or {}).items():
        domain, ident = split_qualified_name(str(name), driver)
        capacity.setdefault(domain, {})[ident] = _capacity_value(str(name), raw)
    multi = body.get("allowMultipleAllocations", device.get("allowMultipleAllocations", False))
    return DeviceView(
        driver=driver,
        attributes=attributes,
        capacity=capacity,
        allow_multiple_allocations=bool(multi),
        name=str(device.get("name", "")),
    )
