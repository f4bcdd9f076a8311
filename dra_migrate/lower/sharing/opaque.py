"""Opaque configs for the NVIDIA DRA driver (`resource.nvidia.com/v1beta1`), checked against our schema.

Only shapes the driver accepts are built: GpuConfig for full GPUs, MigDeviceConfig for MIG (which has no
timeSlicingConfig; TimeSlicing there is a no-op, so none is built for MIG at all).
"""

from __future__ import annotations

import functools
import json
from typing import Any

from dra_migrate.lower.sharing.model import MPS
from dra_migrate.ruleset._paths import schema_file

DRIVER = "gpu.nvidia.com"
API_VERSION = "resource.nvidia.com/v1beta1"
SCHEMA_PATH = schema_file("nvidia-gpu-config.schema.json")


def gpu_sharing_parameters(strategy: str, replicas: int | None, memory_mib: int | None) -> dict[str, Any]:
    """GpuConfig reproducing a device plugin time-slicing/MPS setup with `replicas` per GPU."""
    if strategy == MPS:
        mps: dict[str, Any] = {}
        if replicas:
            # the MPS control daemon of the device plugin gave each client 100/replicas % of the SMs and
            # totalMemory/replicas of pinned memory (cmd/mps-control-daemon/mps/daemon.go)
            mps["defaultActiveThreadPercentage"] = 100 // replicas
            if memory_mib:
                mps["defaultPinnedDeviceMemoryLimit"] = f"{memory_mib // replicas}Mi"
        sharing: dict[str, Any] = {"strategy": "MPS", "mpsConfig": mps}
    else:
        sharing = {"strategy": "TimeSlicing", "timeSlicingConfig": {"interval": "Default"}}
    params = {"apiVersion": API_VERSION, "kind": "GpuConfig", "sharing": sharing}
    check(params)
    return params


def opaque_config(requests: list[str], parameters: dict[str, Any]) -> dict[str, Any]:
    return {"requests": list(requests), "opaque": {"driver": DRIVER, "parameters": parameters}}


@functools.lru_cache(maxsize=1)
def _validator() -> Any:
    # lazy: start-up (jsonschema: ~38 ms, only _validator() needs it)
    import jsonschema

    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return jsonschema.Draft202012Validator(schema)


def schema_errors(parameters: dict[str, Any]) -> list[str]:
    return [e.message for e in _validator().iter_errors(parameters)]


def check(parameters: dict[str, Any]) -> None:
    """Never emit a config the driver would reject: a failure here is a bug (reported as DRA902)."""
    errors = schema_errors(parameters)
    if errors:
        raise ValueError("invalid opaque GPU config: " + "; ".join(errors))
