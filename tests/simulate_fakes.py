"""Test helpers for the simulator: a fake CEL engine and builders that mirror upstream's test generators
(kubernetes/dynamic-resource-allocation structured/internal/allocatortesting/allocator_testing.go @v0.36.2:
class(), sliceWithDevices(), device(), request(), claimWithRequests())."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from dra_migrate.simulate.inventory import Device, Inventory

DRIVER_A, DRIVER_B = "driver-a", "driver-b"
CLASS_A, CLASS_B = "class-a", "class-b"
NODE_1, NODE_2 = "node-1", "node-2"


class FakeEvalError(Exception):
    pass


class FakeCompileError(Exception):
    pass


_UNITS = {"": 1, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "k": 10**3, "M": 10**6, "G": 10**9}


def quantity(text: Any) -> int:
    m = re.fullmatch(r"(\d+)([A-Za-z]*)", str(text))
    assert m, text
    return int(m.group(1)) * _UNITS[m.group(2)]


class _Compiled:
    def __init__(self, fn: Callable[[Device], Any]) -> None:
        self.fn = fn

    def evaluate(self, device: Any) -> Any:
        return self.fn(device)


def _attr(device: Device, domain: str, name: str) -> Any:
    """CEL `device.attributes[domain].name`: unknown domain -> empty map, unknown name -> error."""
    for key, value in device.attributes.items():
        d, _, n = key.rpartition("/")
        if (d or device.driver) == domain and n == name:
            return next(iter(value.values()))
    raise FakeEvalError(f"no such key: {name}")


def _cap(device: Device, domain: str, name: str) -> int:
    for key, value in device.capacity.items():
        d, _, n = key.rpartition("/")
        if (d or device.driver) == domain and n == name:
            return quantity(value["value"])
    raise FakeEvalError(f"no such key: {name}")


_PATTERNS: list[tuple[str, Callable[[re.Match[str]], Callable[[Device], Any]]]] = [
    (r'device\.driver == ["\']([^"\']+)["\']', lambda m: lambda d: d.driver == m.group(1)),
    (
        r"device\.driver == '([^']+)' && device\.attributes\['([^']+)'\]\.type == '([^']+)'",
        lambda m: lambda d: d.driver == m.group(1) and _attr(d, m.group(2), "type") == m.group(3),
    ),
    (
        r'device\.capacity\["([^"]+)"\]\.memory\.compareTo\(quantity\("([^"]+)"\)\) >= 0',
        lambda m: lambda d: _cap(d, m.group(1), "memory") >= quantity(m.group(2)),
    ),
    (
        r"device\.attributes\['([^']+)'\]\.(\w+) == '([^']*)'",
        lambda m: lambda d: _attr(d, m.group(1), m.group(2)) == m.group(3),
    ),
    (r"returns-string", lambda m: lambda d: "not a bool"),
]


class FakeEngine:
    """Supports only the expression forms the simulator tests use; anything else is a compile error."""

    compile_errors: tuple[type[BaseException], ...] = (FakeCompileError,)
    runtime_errors: tuple[type[BaseException], ...] = (FakeEvalError,)

    def __init__(self) -> None:
        self.evaluations = 0

    def compile(self, expression: str) -> _Compiled:
        for pattern, build in _PATTERNS:
            m = re.fullmatch(pattern, expression)
            if m:
                fn = build(m)

                def counted(d: Device, fn: Callable[[Device], Any] = fn) -> Any:
                    self.evaluations += 1
                    return fn(d)

                return _Compiled(counted)
        raise FakeCompileError(f"undeclared reference in {expression!r}")

    def to_device(self, device: Device) -> Device:
        return device


# --- builders (names as in upstream allocator_testing.go) --------------------------------------------


def device_class(name: str, driver: str) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": name},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]},
    }


def device(
    name: str, capacity: dict[str, str] | None = None, attributes: dict[str, Any] | None = None
) -> dict:
    out: dict[str, Any] = {"name": name}
    if attributes:
        out["attributes"] = attributes
    if capacity:
        out["capacity"] = {k: {"value": v} for k, v in capacity.items()}
    return out


def resource_slice(
    name: str,
    node: str | None,
    pool: str,
    driver: str,
    *devices: dict,
    count: int = 1,
    generation: int = 1,
    all_nodes: bool = False,
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "driver": driver,
        "pool": {"name": pool, "generation": generation, "resourceSliceCount": count},
        "devices": list(devices),
    }
    if all_nodes:
        spec["allNodes"] = True
    else:
        spec["nodeName"] = node
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": name},
        "spec": spec,
    }


def request(name: str, cls: str, count: int = 1, *selectors: str, mode: str | None = None) -> dict[str, Any]:
    exactly: dict[str, Any] = {"deviceClassName": cls}
    if mode == "All":
        exactly["allocationMode"] = "All"
    else:
        exactly["count"] = count
    if selectors:
        exactly["selectors"] = [{"cel": {"expression": s}} for s in selectors]
    return {"name": name, "exactly": exactly}


def sub_request(
    name: str, cls: str, count: int = 1, *selectors: str, mode: str | None = None
) -> dict[str, Any]:
    body = dict(request(name, cls, count, *selectors, mode=mode)["exactly"])
    body["name"] = name
    return body


def first_available(name: str, *subs: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "firstAvailable": list(subs)}


def claim_spec(*requests: dict[str, Any], constraints: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    devices: dict[str, Any] = {"requests": list(requests)}
    if constraints:
        devices["constraints"] = constraints
    return {"devices": devices}


def inventory(*objects: dict[str, Any]) -> Inventory:
    return Inventory.from_objects(objects, default_classes=False)
