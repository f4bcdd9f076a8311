"""How many pods a pod template runs: its replica count, and the pods a rolling update may add (maxSurge) or
take down (maxUnavailable). Plain arithmetic, shared by the migration's lints and sharing pass and the simulator."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from dra_migrate.ir import DocPath
from dra_migrate.plan import walk

DAEMON_KINDS = ("DaemonSet",)


def _resolve(value: Any, total: int, round_up: bool) -> int:
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return max(value, 0)
    text = str(value).strip()
    if text.endswith("%"):
        try:
            pct = int(text[:-1])
        except ValueError:
            return 0
        exact = pct * total / 100
        return math.ceil(exact) if round_up else math.floor(exact)
    try:
        return max(int(text), 0)
    except ValueError:
        return 0


def surge_and_unavailable(strategy: Mapping[str, Any] | None, replicas: int) -> tuple[int, int] | None:
    """(maxSurge, maxUnavailable) in pods for a RollingUpdate strategy; None for Recreate."""
    strategy = strategy or {}
    if strategy.get("type") == "Recreate":
        return None
    ru = strategy.get("rollingUpdate") or {}
    surge = _resolve(ru.get("maxSurge", "25%"), replicas, True)
    unavailable = _resolve(ru.get("maxUnavailable", "25%"), replicas, False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def replica_count(obj: Mapping[str, Any], spec_path: DocPath) -> tuple[int, str]:
    """Pods per pod template: `replicas` (Deployment, StatefulSet, ReplicaSet, most CRD replica specs) or
    `parallelism` (Job, CronJob) next to the `template` holding the pod spec; 1 when unset (the API
    defaults of both fields), for bare Pods and PodTemplates."""
    if obj.get("kind") in DAEMON_KINDS:
        return 0, "daemonset"
    if len(spec_path) >= 2 and tuple(spec_path[-2:]) == ("template", "spec"):
        parent_path = spec_path[:-2]
        parent = walk(obj, parent_path)
        if isinstance(parent, Mapping):
            for key in ("replicas", "parallelism"):
                value = parent.get(key)
                if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                    return value, ".".join(map(str, (*parent_path, key)))
    return 1, "default"
