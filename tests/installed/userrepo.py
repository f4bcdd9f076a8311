"""A small platform repository as users have them: a .gitignore, the device plugin's time-slicing config, GPU
workloads in YAML and JSON, and manifests without GPUs."""

from __future__ import annotations

import json
import re
from pathlib import Path

TIME_SLICING = """\
# the device plugin's sharing config (GPU Operator: devicePlugin.config.name)
apiVersion: v1
kind: ConfigMap
metadata:
  name: time-slicing-config
  namespace: gpu-operator
data:
  any: |-
    version: v1
    flags:
      migStrategy: none
    sharing:
      timeSlicing:
        resources:
        - name: nvidia.com/gpu
          replicas: 4
"""

TRAIN = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: train
  namespace: ml
spec:
  replicas: 2
  selector:
    matchLabels: {app: train}
  template:
    metadata:
      labels: {app: train}
    spec:
      containers:
        - name: main
          image: nvcr.io/nvidia/pytorch:24.01-py3  # pinned by the platform team
          resources:
            limits:
              nvidia.com/gpu: 1
"""

INFER = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "infer", "namespace": "ml"},
    "spec": {"containers": [{"name": "server", "image": "nvcr.io/nvidia/tritonserver:24.01-py3",
                             "resources": {"limits": {"nvidia.com/gpu": 1}}}]},
}

PLAIN = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: ml\ndata:\n  a: b\n"
SERVICE = '{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"}, "spec": {"ports": [{"port": 80}]}}\n'

# relative path -> text; the ones with a GPU request are CHANGED
FILES = {
    ".gitignore": "*.log\nrendered/\n",
    # at the root: a config governs the workloads of its own directory tree (or what .dra-migrate.yaml maps it to)
    "time-slicing.yaml": TIME_SLICING,
    "apps/train.yaml": TRAIN,
    "apps/infer.json": json.dumps(INFER, indent=2) + "\n",
    "apps/settings.yaml": PLAIN,
    "apps/web.json": SERVICE,
    # ignored by .gitignore: a directory walk leaves it alone even though it requests a GPU
    "rendered/out.yaml": TRAIN.replace("name: train", "name: rendered"),
}
CHANGED = ("apps/train.yaml", "apps/infer.json")
UNCHANGED = tuple(f for f in FILES if f not in CHANGED)


def write(root: Path, files: dict[str, str] | None = None) -> None:
    for rel, text in (files or FILES).items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def snapshot(root: Path) -> dict[str, str]:
    return {rel: (root / rel).read_text() for rel in FILES}


def dra_api_versions(root: Path) -> set[str]:
    """Every resource.k8s.io version in the tree's manifests (the claims may land in a sibling file)."""
    found: set[str] = set()
    for path in root.rglob("*"):
        if path.suffix in (".yaml", ".yml", ".json") and ".git" not in path.parts:
            found |= set(re.findall(r"resource\.k8s\.io/v\w+", path.read_text(errors="replace")))
    return found
