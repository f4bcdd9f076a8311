"""Devices from ResourceSlice documents, and the bundled NVIDIA fixture."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import yaml

from dra_migrate.cel.device import DeviceFormatError, DeviceView, device_from_slice
from dra_migrate.ruleset._paths import data_file

if TYPE_CHECKING:  # the compiler builds the CEL parser: imported only when a selector is evaluated
    from dra_migrate.cel.compiler import CelDevice

RESOURCE_API_GROUP = "resource.k8s.io"


def _slices(docs: Iterable[Any]) -> Iterable[Mapping[str, Any]]:
    for doc in docs:
        if not isinstance(doc, Mapping):
            continue
        kind = str(doc.get("kind", ""))
        if kind.endswith("List") and "items" in doc:
            yield from _slices(doc.get("items") or [])
        elif kind == "ResourceSlice" and str(doc.get("apiVersion", "")).startswith(RESOURCE_API_GROUP):
            yield doc


def devices_from_slices(docs: Iterable[Any]) -> list[DeviceView]:
    """Every device of every ResourceSlice in `docs` (Lists are flattened; v1, v1beta2 and v1beta1).

    Device names become "<pool>/<device>", the part of the device identity that is unique per driver.
    """
    out: list[DeviceView] = []
    for s in _slices(docs):
        spec = s.get("spec") or {}
        driver = spec.get("driver")
        if not isinstance(driver, str) or not driver:
            name = (s.get("metadata") or {}).get("name", "?")
            raise DeviceFormatError(f"ResourceSlice {name}: spec.driver missing")
        pool = (spec.get("pool") or {}).get("name") or spec.get("nodeName") or ""
        for entry in spec.get("devices") or []:
            view = device_from_slice(entry, driver)
            view.name = f"{pool}/{view.name}" if pool else view.name
            out.append(view)
    return out


@functools.cache
def _nvidia_documents() -> tuple[Any, ...]:
    text = data_file("devices/nvidia.yaml").read_text(encoding="utf-8")
    # the C loader: the pure-Python one takes seconds on this fixture, paid by every pre-commit run
    return tuple(yaml.load_all(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)))  # noqa: S506


def load_nvidia_devices() -> list[DeviceView]:
    """The bundled NVIDIA DRA driver fixture: full GPUs of common models and MIG slices (fresh copies)."""
    return devices_from_slices(_nvidia_documents())


@functools.cache
def nvidia_cel_devices() -> tuple[CelDevice, ...]:
    """The NVIDIA fixture devices, each converted to its CEL value once per process (in fixture order)."""
    # lazy: start-up (cel.compiler: ~127 ms, only nvidia_cel_devices() needs it)
    from dra_migrate.cel.compiler import CelDevice

    return tuple(CelDevice(view) for view in load_nvidia_devices())
