"""Init containers and sidecars: the migrated claim holds the kubelet's effective demand, whatever the pod.

Random pods (plain init containers, sidecars, app containers; full GPUs and MIG slices, in any order) go
through the whole pipeline; tests/lower/test_pod_demand.check_pod checks the result against the input alone.
"""

from __future__ import annotations

from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from dra_migrate.config import Options
from dra_migrate.lower.context import RunContext
from dra_migrate.lower.passes.init_containers import pick
from dra_migrate.pipeline import process_source
from tests.lower.test_pod_demand import check_pod

RESOURCES = ["nvidia.com/gpu", "nvidia.com/mig-1g.5gb", "nvidia.com/mig-3g.20gb"]

_counts = st.dictionaries(st.sampled_from(RESOURCES), st.integers(0, 4), max_size=2)
_init = st.tuples(st.booleans(), _counts)  # (sidecar?, counts)


def _container(name: str, counts: dict[str, int], sidecar: bool = False) -> dict[str, Any]:
    c: dict[str, Any] = {"name": name, "image": "x"}
    if sidecar:
        c["restartPolicy"] = "Always"
    if counts:
        c["resources"] = {"limits": dict(counts)}
    return c


MAX_DEVICES_PER_CLAIM = 32  # AllocationResultsMaxSize (shared/reference/dra-api.md)


def _demand(inits: list[tuple[bool, dict[str, int]]], apps: list[dict[str, int]]) -> int:
    """The kubelet's effective demand summed over every resource: what the one claim must hold."""
    total = 0
    for r in RESOURCES:
        running, peak = sum(c.get(r, 0) for c in apps), 0
        sidecars = 0
        for sidecar, c in inits:
            if sidecar:
                sidecars += c.get(r, 0)
                peak = max(peak, sidecars)
            else:
                peak = max(peak, c.get(r, 0) + sidecars)
        total += max(running + sidecars, peak)
    return total


def _pod(inits: list[tuple[bool, dict[str, int]]], apps: list[dict[str, int]]) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [_container(f"app-{i}", c) for i, c in enumerate(apps)]}
    if inits:
        spec["initContainers"] = [_container(f"init-{i}", c, s) for i, (s, c) in enumerate(inits)]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec}


@settings(max_examples=150, deadline=None)
@given(st.lists(_init, max_size=4), st.lists(_counts, min_size=1, max_size=3))
def test_claim_holds_the_effective_demand(inits: list[tuple[bool, dict[str, int]]], apps: list[dict[str, int]]) -> None:
    pod = _pod(inits, apps)
    raw = yaml.safe_dump(pod, sort_keys=False).encode()
    result = process_source("pod.yaml", raw, RunContext(Options()))
    if result.failed and _demand(inits, apps) > MAX_DEVICES_PER_CLAIM:
        # one claim holds at most 32 devices (DRA603); such a pod is refused, never cut down
        errors = {d.code for d in result.diagnostics if d.severity.name == "ERROR"}
        assert errors == {"DRA603"} and result.output is None
        return
    assert not result.failed, [d.render() for d in result.diagnostics]
    docs = list(yaml.safe_load_all(result.output)) if result.output is not None else []
    if len(docs) < 2:  # no claim: only zero counts (their keys are removed)
        assert not any(n for _, c in inits for n in c.values()) and not any(n for c in apps for n in c.values())
        return
    after, rct = docs[0], docs[1]
    assert after["spec"]["resourceClaims"][-1]["resourceClaimTemplateName"] == rct["metadata"]["name"]
    check_pod(pod["spec"], after["spec"], {after["spec"]["resourceClaims"][-1]["name"]: rct})


def test_pick_prefers_an_exact_set_with_the_fewest_requests() -> None:
    assert pick([2, 1, 2], 2) == [0]
    assert pick([1, 1, 2], 2) == [2]
    assert pick([2, 1], 3) == [0, 1]
    assert pick([2, 2], 3) == [0, 1]  # no exact set: the smallest sum above
    assert pick([4, 2], 1) == [1]
    assert pick([], 0) == []
