"""The selection pass inside the pipeline: diagnostics point at the nodeSelector / affinity line, and
`explain` shows every label decision and the emitted selectors per pod template."""

from __future__ import annotations

import json

from dra_migrate.cli.explain_cmd import explain_json, explain_text
from dra_migrate.config import Options
from dra_migrate.lower.context import RunContext
from dra_migrate.pipeline import FileResult, process_source

POD = b"""apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  containers:
  - name: app
    image: cuda
    resources:
      limits:
        nvidia.com/gpu: 1
  nodeSelector:
    nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3
    topology.kubernetes.io/zone: zone-a
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions:
          - key: nvidia.com/gpu.family
            operator: DoesNotExist
"""


def run(raw: bytes = POD) -> FileResult:
    return process_source("pod.yaml", raw, RunContext(Options()))


def test_diagnostics_point_at_node_selection_lines() -> None:
    fr = run()
    lines = {d.code: d.location.line for d in fr.diagnostics if d.code.startswith("DRA3")}
    assert lines == {"DRA301": 12, "DRA303": 15}  # nodeSelector: line 12, affinity: line 15


def test_explain_shows_selection_decisions() -> None:
    text = explain_text(run())
    block = text.split("GPU selection:")[1].split("  decisions:")[0]
    assert "moved: nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3 (nodeSelector) moved into the claim" in block
    assert "kept: topology.kubernetes.io/zone=zone-a (nodeSelector) stays on the node" in block
    assert "untranslatable: nvidia.com/gpu.family DoesNotExist (required affinity) stays on the node" in block
    assert ("request app selector: device.attributes['gpu.nvidia.com'].productName"
            ".matches('^NVIDIA[ -]H100[ -]80GB[ -]HBM3$')") in block
    data = json.loads(json.dumps(explain_json(run()), default=str))
    (entry,) = data["selection"]
    assert entry["workload"] == "Pod/p" and entry["podTemplate"] == "spec"
    assert any(d.startswith("moved: nvidia.com/gpu.product") for d in entry["decisions"])


def test_explain_shows_first_available_subrequests() -> None:
    raw = POD.split(b"  nodeSelector:")[0] + b"""  affinity:
    nodeAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 1
        preference:
          matchExpressions:
          - key: nvidia.com/gpu.family
            operator: In
            values: [hopper]
"""
    text = explain_text(run(raw))
    assert "request app/preferred-1 selector: 'architecture' in device.attributes['gpu.nvidia.com']" in text
    assert "request app/fallback: any device of the class" in text
