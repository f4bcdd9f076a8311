"""Shared helpers for the integration tests: a CLI run in a subprocess, small manifests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

GPU_DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: ml
spec:
  template:
    spec:
      containers:
        - name: app
          image: busybox
          resources:
            limits:
              nvidia.com/gpu: 1
"""


def time_slicing_config(replicas: int = 4, name: str = "time-slicing-config",
                        namespace: str | None = "gpu-operator") -> str:
    """A device plugin time-slicing ConfigMap sharing nvidia.com/gpu `replicas` ways (the GPU Operator's layout)."""
    ns = f"\n  namespace: {namespace}" if namespace else ""
    return f"""\
apiVersion: v1
kind: ConfigMap
metadata:
  name: {name}{ns}
data:
  any: |-
    version: v1
    sharing:
      timeSlicing:
        resources:
        - name: nvidia.com/gpu
          replicas: {replicas}
"""


GPU_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: trainer
spec:
  containers:
    - name: main
      image: busybox
      resources:
        limits:
          nvidia.com/gpu: 2
"""
PLAIN = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: b\n"


def cli(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("DRA_MIGRATE_")}
    full["PYTHONPATH"] = str(REPO)
    full.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "dra_migrate", *args],
        cwd=cwd,
        env=full,
        capture_output=True,
        text=True,
        timeout=120,
    )
