"""BEFORE: what the device plugin gave a pod, from the Kubernetes and NVIDIA documentation.

* Per container: the device plugin resources of its limits (nvidia.md §B6): `nvidia.com/gpu` (a full GPU, a
  MIG slice under the single strategy or on a GKE partition pool, a replica on a sharing node),
  `nvidia.com/mig-<profile>` (mixed strategy), `<name>.shared` (renameByDefault).
* Per pod: the kubelet's effective demand, per resource (scheduling-semantics.md §1):
  max(Σ app + Σ restartable sidecars, max over init entries of its use), where a sidecar's use is the sum of
  the sidecars up to it and a plain init container's use is its request plus the sidecars declared before it.
* Tolerations: the ExtendedResourceToleration admission plugin adds `{key: <resource>, operator: Exists,
  effect: NoSchedule}` for every extended resource the pod requests (GKE enables it and taints GPU nodes).
* Fit: the scheduler's NodeAffinity and TaintToleration filters and the effective demand within the node's
  allocatable; with `failRequestsGreaterThanOne` (MPS default; GKE time-sharing and MPS pools) a container
  asking for more than one shared replica fails admission. A preset `spec.nodeName` bypasses the scheduler:
  the kubelet admits the pod on that node if node affinity, NoExecute taints and devices allow.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from tests.equivalence.cluster import SynthNode
from tests.equivalence.manifests import Obj
from tests.equivalence.nodematch import pod_matches_node, untolerated

Containers = Sequence[tuple[str, str, Mapping[str, int]]]  # (role, name, device plugin limits)


def effective_demand(containers: Containers) -> Counter[str]:
    """The kubelet's effective pod request for each device plugin resource."""
    resources = {r for _role, _name, lim in containers for r in lim}
    out: Counter[str] = Counter()
    for r in resources:
        regular = sum(lim.get(r, 0) for role, _n, lim in containers if role in ("app", "sidecar"))
        sidecars, peak = 0, 0
        for role, _n, lim in containers:
            if role == "sidecar":
                sidecars += lim.get(r, 0)
                peak = max(peak, sidecars)
            elif role == "init":
                peak = max(peak, lim.get(r, 0) + sidecars)
        out[r] = max(regular, peak)
    return +out


def ert_tolerations(containers: Containers) -> list[dict[str, Any]]:
    names = sorted({r for _role, _n, lim in containers for r in lim})
    return [{"key": r, "operator": "Exists", "effect": "NoSchedule"} for r in names]


def tolerations(spec: Mapping[str, Any], containers: Containers) -> list[Mapping[str, Any]]:
    own = [t for t in spec.get("tolerations") or [] if isinstance(t, dict)]
    return [*own, *ert_tolerations(containers)]


def fits(spec: Obj, containers: Containers, node: SynthNode) -> bool:
    preset = spec.get("nodeName")
    if preset and preset != node.name:
        return False
    if not pod_matches_node(spec, node.labels, node.name):
        return False
    effects = ("NoExecute",) if preset else ("NoSchedule", "NoExecute")
    if untolerated(node.taints, tolerations(spec, containers), effects):
        return False
    demand = effective_demand(containers)
    if any(node.allocatable.get(r, 0) < n for r, n in demand.items()):
        return False
    return not refused_at_admission(containers, node)


def refused_at_admission(containers: Containers, node: SynthNode) -> bool:
    """failRequestsGreaterThanOne: a container asking for more than one shared replica fails admission
    (UnexpectedAdmissionError, nvidia.md §B7; GKE: "at most 1 nvidia.com/gpu can be requested")."""
    if node.sharing is None or not node.sharing.fail_gt_one:
        return False
    return any(n > 1 and node.shares(r) for _role, _n, lim in containers for r, n in lim.items())
