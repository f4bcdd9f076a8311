"""What the NVIDIA DRA driver installs on a cluster (rules/simulate/nvidia.yaml): its DeviceClasses, and the GPU
product and architecture tables GPU Feature Discovery labels are read with. The migration's checks use the
classes, the simulator all of it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

import yaml

from dra_migrate.ruleset._paths import rules_file, schema_file

RULES_FILE = rules_file("simulate/nvidia.yaml")
SCHEMA_FILE = schema_file("simulate-nvidia.schema.json")


@dataclass(frozen=True, slots=True)
class DeviceClass:
    name: str
    selectors: tuple[str, ...]
    extended_resource_name: str | None = None

    @staticmethod
    def from_object(obj: Mapping[str, Any]) -> DeviceClass:
        spec = obj.get("spec") or {}
        exprs: list[str] = []
        for sel in spec.get("selectors") or []:
            cel = (sel or {}).get("cel") or {}
            # An empty string marks "no CEL selector" so the allocator can reject it like upstream does.
            exprs.append(str(cel.get("expression", "")))
        ext = spec.get("extendedResourceName")
        return DeviceClass(str((obj.get("metadata") or {}).get("name", "")), tuple(exprs), ext)


@cache
def cluster_rules() -> Mapping[str, Any]:
    # Bundled data: tests/ruleset/test_bundled_rules.py checks it against SCHEMA_FILE, so runs (every pre-commit run
    # on a GPU file reads the device classes) skip the validation, and use the C loader.
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    data = yaml.load(RULES_FILE.read_text(encoding="utf-8"), Loader=loader)  # noqa: S506 (safe loader)
    return dict(data)


def default_device_classes() -> dict[str, DeviceClass]:
    """The classes the NVIDIA DRA driver chart installs (rules/simulate/nvidia.yaml)."""
    out: dict[str, DeviceClass] = {}
    for c in cluster_rules()["deviceClasses"]:
        out[c["name"]] = DeviceClass(c["name"], tuple(c["selectors"]), c.get("extendedResourceName"))
    return out
