"""Pod equivalence (issue #19): every golden pod, and the synthetic inputs in tests/equivalence/cases, keep on
the synthetic cluster what the device plugin gave them: node set, devices per container, pod-level demand,
spread domains, the common node of shared claims; refusals are byte-identical. The oracle and its modelling
assumptions are described in tests/equivalence/ (properties.py states the properties).

Every (case, property) that fails today is listed ONCE, in XFAIL below, with the class of issue #19 it
belongs to. The marks are strict: a fix makes the test XPASS, which fails, and the entry is then removed.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import GOLDEN
from tests.equivalence import properties as P
from tests.equivalence.manifests import at, documents, pod_templates, requests_dp

# (case, property) -> what differs. Golden cases by directory name, synthetic ones as "synthetic/<name>".
XFAIL: dict[tuple[str, str], str] = {}


def _has_gpu_pod(path: Path) -> bool:
    case = P.Case.golden(path)
    for d in case.before_docs:
        for o in d.objects:
            specs, bare = pod_templates(o, case.rules)
            if any(requests_dp(c) for s in specs for _r, c in s.containers(o)) or any(
                    requests_dp(at(o, b)) for b in bare):
                return True
    return False


GOLDEN_CASES = sorted(p for p in GOLDEN.iterdir() if (p / "expected").is_dir() and _has_gpu_pod(p))
SYNTHETIC_CASES = sorted(p for p in P.CASES_DIR.iterdir() if p.is_dir())


@cache
def golden_case(name: str) -> P.Case:
    return P.Case.golden(GOLDEN / name)


@cache
def synthetic_case(name: str) -> P.Case:
    return P.synthetic(P.CASES_DIR / name)


def _params(
    names: list[str], load: Callable[[str], P.Case], prefix: str,
    applies: Callable[[P.Case, str], bool] = P.applies,
) -> Iterator[Any]:
    for name in names:
        case = load(name)
        for prop in P.PROPERTIES:
            if not applies(case, prop):
                continue
            key = (f"{prefix}{name}", prop)
            marks = [pytest.mark.xfail(strict=True, reason=XFAIL[key])] if key in XFAIL else []
            yield pytest.param(name, prop, id=f"{prefix}{name}-{prop}", marks=marks)


GOLDEN_PARAMS = list(_params([p.name for p in GOLDEN_CASES], golden_case, ""))
# Synthetic cases are migrated inside the tests (after conftest isolated the user cache), not at collection:
# which properties apply is judged from their inputs.
SYNTHETIC_PARAMS = list(_params([p.name for p in SYNTHETIC_CASES], lambda n: P.unmigrated(P.CASES_DIR / n),
                                "synthetic/", P.applies_to_inputs))


def _assert_holds(case: P.Case, prop: str) -> None:
    diffs = P.check(case, prop)
    assert not diffs, f"{case.name}: {prop} differs:\n  " + "\n  ".join(diffs)


@pytest.mark.parametrize(("name", "prop"), GOLDEN_PARAMS)
def test_golden_pods_keep_their_meaning(name: str, prop: str) -> None:
    _assert_holds(golden_case(name), prop)


@pytest.mark.parametrize(("name", "prop"), SYNTHETIC_PARAMS)
def test_synthetic_pods_keep_their_meaning(name: str, prop: str) -> None:
    _assert_holds(synthetic_case(name), prop)


# --- the table and the discovery --------------------------------------------------------------------------------

def test_xfail_entries_name_checked_pairs() -> None:
    """A stale entry (renamed case, property no longer applicable) would hide nothing and mislead."""
    checked = {(v[0], v[1]) for v in (p.values for p in GOLDEN_PARAMS)}
    checked |= {(f"synthetic/{v[0]}", v[1]) for v in (p.values for p in SYNTHETIC_PARAMS)}
    assert set(XFAIL) - checked == set()
    assert all(r.startswith("#19 class ") for r in XFAIL.values())


def test_every_gpu_golden_is_checked_for_every_kind() -> None:
    names = {p.name for p in GOLDEN_CASES}
    # core kinds, CRDs from several rule files, MIG, sharing, init containers and sidecars
    assert {"deployment-basic", "cronjob", "kind-list", "podtemplate-indented-seq", "crd-lws", "crd-kserve-llmisvc",
            "crd-kuberay-raycluster", "crd-training-operator", "crd-user-rule-pack", "mig-mixed", "mig-single",
            "sharing-mps", "init-containers", "sidecar", "sel-product", "invalid-counts"} <= names
    kinds = {o.get("kind") for p in GOLDEN_CASES for d in golden_case(p.name).before_docs for o in d.objects}
    assert {"Pod", "Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob", "ReplicaSet",
            "ReplicationController", "PodTemplate", "LeaderWorkerSet", "RayCluster", "PyTorchJob"} <= kinds
    checked = {v[0] for v in (p.values for p in GOLDEN_PARAMS) if v[1] == "node-set"}
    assert len(checked) >= 50, sorted(checked)


# The class of issue #19 each synthetic case exercises (passing or not).
SYNTHETIC_CLASSES = {"demand": 1, "node-name": 2, "mig-sharing-labels": 3, "spread": 4, "shared-claims": 5,
                     "refusal": 6}


def test_synthetic_cases_cover_every_class() -> None:
    assert {p.name for p in SYNTHETIC_CASES} == set(SYNTHETIC_CLASSES)
    assert set(SYNTHETIC_CLASSES.values()) == set(range(1, 7))
    props = {v[1] for v in (p.values for p in SYNTHETIC_PARAMS)}
    assert props == set(P.PROPERTIES)


# --- the oracle can fail: a deliberately wrong AFTER object is caught ----------------------------------------

def _tampered(case: P.Case, edit: Callable[[dict[str, Any]], None]) -> P.Case:
    """The case with every output object passed through `edit` (files re-dumped as YAML)."""
    outputs = {}
    for name, data in case.outputs.items():
        docs = [copy.deepcopy(o) for d in documents(name, data) for o in d.objects]
        for o in docs:
            edit(o)
        outputs[name] = yaml.safe_dump_all(docs, sort_keys=False).encode()
    return P.Case(case.name, case.inputs, outputs, case.diagnostics_text, case.args, case.base)


def _requests(o: dict[str, Any]) -> list[dict[str, Any]]:
    if o.get("kind") == "ResourceClaimTemplate":
        return list(o["spec"]["spec"]["devices"]["requests"])
    if o.get("kind") == "ResourceClaim":
        return list(o["spec"]["devices"]["requests"])
    return []


def test_oracle_catches_a_wrong_node_set() -> None:
    def drop_selectors(o: dict[str, Any]) -> None:
        for r in _requests(o):
            r.get("exactly", {}).pop("selectors", None)

    case = golden_case("sel-product")
    assert not P.node_set(golden_case("sel-memory"))
    diffs = P.node_set(_tampered(golden_case("sel-memory"), drop_selectors))
    assert diffs and all("only after" in d for d in diffs)
    assert P.node_set(_tampered(case, drop_selectors))


def test_oracle_catches_a_wrong_container_count() -> None:
    def first_request_twice(o: dict[str, Any]) -> None:
        for r in _requests(o)[:1]:
            r["exactly"]["count"] = 2 * int(r["exactly"].get("count", 1))

    case = golden_case("multi-container")
    assert not P.container_devices(case)
    diffs = P.container_devices(_tampered(case, first_request_twice))
    assert diffs and "container" in diffs[0]


def test_oracle_catches_a_wrong_pod_demand() -> None:
    def extra_request(o: dict[str, Any]) -> None:
        reqs = _requests(o)
        if reqs:
            spare = copy.deepcopy(reqs[0])
            spare["name"] = "spare"
            reqs.append(spare)
            o["spec"]["spec"]["devices"]["requests"] = reqs

    case = golden_case("sidecar")
    assert not P.pod_demand(case) and not P.container_devices(case)
    tampered = _tampered(case, extra_request)
    assert P.pod_demand(tampered)
    assert not P.container_devices(tampered)  # no container references the spare request


def test_oracle_catches_an_init_container_that_sees_too_few() -> None:
    """An init container may see more devices than it asked for (it reuses an app request), never fewer."""
    def init_sees_nothing(o: dict[str, Any]) -> None:
        for c in (o.get("spec", {}).get("template", {}).get("spec", {}).get("initContainers") or []):
            c.get("resources", {}).pop("claims", None)

    case = golden_case("init-containers")
    diffs = P.container_devices(_tampered(case, init_sees_nothing))
    assert any("init container 'big-check'" in d for d in diffs)


def test_oracle_catches_wrong_spread_domains() -> None:
    def drop_node_selector(o: dict[str, Any]) -> None:
        spec = o.get("spec", {}).get("template", {}).get("spec", {})
        spec.pop("nodeSelector", None)

    case = synthetic_case("spread")
    diffs = P.spread_domains(_tampered(case, drop_node_selector))
    assert not any("ignore-policy" in d for d in diffs)  # nodeAffinityPolicy Ignore: unaffected
    assert any("taints-honor" in d for d in diffs)


def test_oracle_catches_an_overshared_claim() -> None:
    """sharing-generated-repo passes: give every pod of a template the first named claim and it must fail."""
    case = golden_case("sharing-generated-repo")
    assert not P.shared_claims(case)
    claim = next(o for o in case.after_objects.values() if o.get("kind") == "ResourceClaim")

    def share(o: dict[str, Any]) -> None:
        spec = o.get("spec", {}).get("template", {}).get("spec", {})
        for rc in spec.get("resourceClaims") or []:
            if rc.get("resourceClaimTemplateName"):
                del rc["resourceClaimTemplateName"]
                rc["resourceClaimName"] = claim["metadata"]["name"]
                for c in spec.get("containers") or []:
                    for ref in c.get("resources", {}).get("claims") or []:
                        ref["request"] = claim["spec"]["devices"]["requests"][0]["name"]

    diffs = P.shared_claims(_tampered(case, share))
    assert any("client(s) share" in d for d in diffs)


def test_oracle_catches_a_claim_without_a_common_node() -> None:
    """The L4 Deployment of sharing-generated-repo joins the A100 Deployment's claim: no node has both."""
    case = golden_case("sharing-generated-repo")

    def join(o: dict[str, Any]) -> None:
        if o.get("metadata", {}).get("name") == "infer" and o.get("kind") == "Deployment":
            spec = o["spec"]["template"]["spec"]
            spec["resourceClaims"][0]["resourceClaimName"] = "embed-shared-gpu"
            spec["containers"][0]["resources"]["claims"][0]["request"] = "embed"
            spec["nodeSelector"] = {"nvidia.com/gpu.product": "NVIDIA-L4"}

    diffs = P.shared_claims(_tampered(case, join))
    assert any("fit on its node" in d for d in diffs), diffs


def test_oracle_catches_a_refusal_that_changed_and_a_silent_one() -> None:
    refused = golden_case("invalid-counts")
    assert not P.refusal(refused)
    touched = _tampered(refused, lambda o: o.setdefault("metadata", {}).setdefault("labels", {"x": "y"}))
    assert any("Pod/fraction" in d and "it is changed" in d for d in P.refusal(touched))
    refused_by_error = golden_case("requests-limits-differ")  # an error the oracle does not predict itself
    assert not P.refusal(refused_by_error)
    touched = _tampered(refused_by_error, lambda o: o["metadata"].update(labels={"x": "y"}))
    assert any("refuses it, but its document changed" in d for d in P.refusal(touched))
    migrated = golden_case("deployment-basic")
    silent = P.Case(migrated.name, migrated.inputs, dict(migrated.inputs), "", migrated.args, migrated.base)
    assert any("without an error" in d for d in P.refusal(silent))


def test_oracle_reports_a_cel_runtime_error() -> None:
    def bad_attribute(o: dict[str, Any]) -> None:
        for r in _requests(o):
            r["exactly"]["selectors"] = [{"cel": {"expression": "device.attributes['gpu.nvidia.com'].nope == 1"}}]

    diffs = P.node_set(_tampered(golden_case("deployment-basic"), bad_attribute))
    assert diffs and "scheduling aborts" in diffs[0]


def test_few_golden_pods_compare_empty_node_sets() -> None:
    """A pod that fits nowhere before and after compares nothing: the cluster must keep such pods rare."""
    migrated = [p for c in GOLDEN_CASES for p in golden_case(c.name).migrated]
    empty = [p.id for p in migrated if not p.before_nodes]
    assert len(migrated) >= 100
    assert len(empty) <= len(migrated) // 10, empty
