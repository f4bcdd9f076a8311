"""Node labels that imply MIG or sharing (rules/labels.yaml `implications`, PodTemplate.implied) and the
scheduling features whose domains come from the node selection (topology spread).

Facts: shared/reference/nvidia.md §B6-B8, scheduling-semantics.md §3, §5, §6."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from dra_migrate.config import Options
from dra_migrate.diagnostics.codes import CODES
from dra_migrate.frontend.implies import NONE, implied_by_selection
from dra_migrate.lower.context import RepoFacts, RunContext
from dra_migrate.lower.sharing.model import SharingInventory
from dra_migrate.pipeline import FileResult, process_source
from dra_migrate.run.sharing_configs import inventory_from
from tests.integration_helpers import time_slicing_config

REQ = "requiredDuringSchedulingIgnoredDuringExecution"


def affinity(*terms: list[dict[str, Any]]) -> dict[str, Any]:
    return {"nodeAffinity": {REQ: {"nodeSelectorTerms": [{"matchExpressions": t} for t in terms]}}}


def expr(key: str, op: str, *values: str) -> dict[str, Any]:
    return {"key": key, "operator": op, **({"values": list(values)} if values else {})}


# --- what the node selection implies ---------------------------------------------------------------------

def test_nothing_implied_without_such_labels() -> None:
    assert implied_by_selection({}, None) is NONE
    assert implied_by_selection({"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}, None) is NONE
    assert implied_by_selection({"nvidia.com/gpu.sharing-strategy": "none", "nvidia.com/gpu.replicas": "1"},
                                None) is NONE


def test_gfd_sharing_labels() -> None:
    imp = implied_by_selection({"nvidia.com/gpu.sharing-strategy": "time-slicing",
                                "nvidia.com/gpu.replicas": "4"}, None)
    (s,) = imp.sharing
    assert (s.resource, s.strategy, s.replicas) == ("nvidia.com/gpu", "time-slicing", 4)
    assert s.evidence == ("nodeSelector nvidia.com/gpu.sharing-strategy=time-slicing",
                          "nodeSelector nvidia.com/gpu.replicas=4")
    (s,) = implied_by_selection({"nvidia.com/mps.capable": "true"}, None).sharing
    assert s.strategy == "mps" and s.replicas is None
    (s,) = implied_by_selection({"nvidia.com/gpu.product": "Tesla-T4-SHARED"}, None).sharing
    assert s.strategy == "shared"  # GFD's suffix does not say which of the two
    (s,) = implied_by_selection({}, affinity([expr("nvidia.com/gpu.replicas", "Gt", "1")])).sharing
    assert s.strategy == "shared" and s.replicas is None


def test_mixed_strategy_labels_concern_their_profile() -> None:
    (s,) = implied_by_selection({"nvidia.com/mig-1g.10gb.me.replicas": "3"}, None).sharing
    assert (s.resource, s.replicas) == ("nvidia.com/mig-1g.10gb.me", 3)
    (s,) = implied_by_selection(
        {"nvidia.com/mig-1g.5gb.product": "A100-SXM4-40GB-MIG-1g.5gb-SHARED"}, None).sharing
    assert s.resource == "nvidia.com/mig-1g.5gb"


def test_mig_strategy_pinned_only_when_every_alternative_pins_it() -> None:
    assert implied_by_selection({"nvidia.com/mig.strategy": "single"}, None).mig_strategy == "single"
    assert implied_by_selection({"nvidia.com/mig.strategy": "mixed"}, None).mig_strategy == "mixed"
    product = {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb"}
    assert implied_by_selection(product, None).mig_strategy == "single"
    both = affinity([expr("nvidia.com/mig.strategy", "In", "single")],
                    [expr("nvidia.com/gpu.product", "In", "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb")])
    assert implied_by_selection({}, both).mig_strategy == "single"
    one = affinity([expr("nvidia.com/mig.strategy", "In", "single")], [expr("kubernetes.io/os", "Exists")])
    assert implied_by_selection({}, one).mig_strategy is None
    assert implied_by_selection({}, affinity([expr("nvidia.com/mig.strategy", "NotIn", "single")])) is NONE


def test_gke_node_pools() -> None:
    imp = implied_by_selection({"cloud.google.com/gke-gpu-partition-size": "1g.5gb"}, None)
    assert (imp.provider_name, imp.provider_feature) == ("gke", "MIG partition")
    assert imp.provider == ("nodeSelector cloud.google.com/gke-gpu-partition-size=1g.5gb",)
    imp = implied_by_selection({}, affinity([expr("cloud.google.com/gke-gpu-partition-size", "Exists")]))
    assert imp.provider_feature == "MIG partition"
    imp = implied_by_selection({"cloud.google.com/gke-max-shared-clients-per-gpu": "3"}, None)
    assert imp.provider_feature == "GPU sharing" and imp.sharing[0].replicas == 3
    # some alternative lands there: enough to be a GKE pool pod
    imp = implied_by_selection({}, affinity([expr("cloud.google.com/gke-gpu-sharing-strategy", "In", "mps")],
                                            [expr("kubernetes.io/os", "Exists")]))
    assert imp.provider_name == "gke"


# --- the passes --------------------------------------------------------------------------------------------

def pod(spec: dict[str, Any], *, gpus: int = 1, kind: str = "Pod", annotations: dict[str, str] | None = None
        ) -> bytes:
    container = {"name": "app", "image": "cuda", "resources": {"limits": {"nvidia.com/gpu": gpus}}}
    meta: dict[str, Any] = {"name": "p", **({"annotations": annotations} if annotations else {})}
    if kind == "Pod":
        return yaml.safe_dump({"apiVersion": "v1", "kind": "Pod", "metadata": meta,
                               "spec": {**spec, "containers": [container]}}).encode()
    return yaml.safe_dump({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta, "spec": {
        "replicas": 6, "selector": {"matchLabels": {"app": "p"}},
        "template": {"metadata": {"labels": {"app": "p"}}, "spec": {**spec, "containers": [container]}}}}).encode()


def run(raw: bytes, target: str = "1.34", sharing: SharingInventory | None = None) -> FileResult:
    facts = RepoFacts(sharing=sharing) if sharing is not None else RepoFacts()
    return process_source("p.yaml", raw, RunContext(Options(target_version=target), facts=facts))


def codes(fr: FileResult) -> list[str]:
    return [d.code for d in fr.diagnostics]


def docs(fr: FileResult) -> list[dict[str, Any]]:
    assert fr.output is not None
    return list(yaml.safe_load_all(fr.output))


def requests(fr: FileResult) -> list[dict[str, Any]]:
    (rct,) = [d for d in docs(fr) if d["kind"] == "ResourceClaimTemplate"]
    return list(rct["spec"]["spec"]["devices"]["requests"])


@pytest.mark.parametrize("selector", [
    {"cloud.google.com/gke-gpu-partition-size": "1g.5gb"},
    {"cloud.google.com/gke-gpu-sharing-strategy": "time-sharing",
     "cloud.google.com/gke-max-shared-clients-per-gpu": "2"},
])
def test_gke_partition_and_sharing_pools_stay_on_the_device_plugin(selector: dict[str, str]) -> None:
    fr = run(pod({"nodeSelector": selector}))
    assert fr.output is None  # byte-identical
    (d,) = [d for d in fr.diagnostics if d.code == "DRA518"]
    assert "GKE's DRA supports neither" in d.message and d.location.line > 0


def test_single_strategy_without_profile_is_a_full_gpu_or_a_slice() -> None:
    fr = run(pod({"nodeSelector": {"nvidia.com/mig.strategy": "single"}}, gpus=2))
    assert "DRA519" in codes(fr) and "DRA507" not in codes(fr)
    (req,) = requests(fr)
    assert [(s["name"], s["deviceClassName"], s["count"]) for s in req["firstAvailable"]] == [
        ("gpu", "gpu.nvidia.com", 2), ("mig", "mig.nvidia.com", 2)]
    (p,) = [d for d in docs(fr) if d["kind"] == "Pod"]
    assert p["spec"]["nodeSelector"] == {"nvidia.com/mig.strategy": "single"}  # still picks those nodes


def test_single_strategy_gfd_selection_reaches_each_subrequest() -> None:
    fr = run(pod({"nodeSelector": {"nvidia.com/mig.strategy": "single", "nvidia.com/gpu.family": "ampere"}}))
    (req,) = requests(fr)
    for sub in req["firstAvailable"]:
        assert [s["cel"]["expression"] for s in sub["selectors"]] == [
            "'architecture' in device.attributes['gpu.nvidia.com'] && "
            "device.attributes['gpu.nvidia.com'].architecture == 'Ampere'"]


def test_single_strategy_without_first_available_is_left_as_is() -> None:
    fr = run(pod({"nodeSelector": {"nvidia.com/mig.strategy": "single"}}), target="1.33")
    assert fr.output is None and "DRA317" in codes(fr)


def test_single_strategy_with_a_full_gpu_product_is_a_full_gpu() -> None:
    fr = run(pod({"nodeSelector": {"nvidia.com/mig.strategy": "single",
                                   "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB"}}))
    (req,) = requests(fr)
    assert req["exactly"]["deviceClassName"] == "gpu.nvidia.com"
    assert not {"DRA507", "DRA508", "DRA519"} & set(codes(fr))


def test_cluster_default_single_strategy_stays_a_full_gpu_with_a_warning() -> None:
    inv = inventory_from([("cp.yaml", b"apiVersion: nvidia.com/v1\nkind: ClusterPolicy\nmetadata: {name: c}\n"
                                      b"spec:\n  devicePlugin: {enabled: true}\n  mig: {strategy: single}\n")])
    fr = run(pod({}), sharing=inv)
    assert "DRA508" in codes(fr)
    (req,) = requests(fr)
    assert req["exactly"]["deviceClassName"] == "gpu.nvidia.com"
    # pinning the strategy on the pod says how nvidia.com/gpu was read: no guess, no warning
    fr = run(pod({"nodeSelector": {"nvidia.com/mig.strategy": "single"}}), sharing=inv)
    assert "DRA508" not in codes(fr) and "DRA519" in codes(fr)


def test_readme_and_explain_say_the_same_about_the_single_strategy() -> None:
    from dra_migrate.ruleset._paths import RULES_DIR

    readme = (RULES_DIR.parent / "README.md").read_text(encoding="utf-8")
    row = next(line for line in readme.splitlines() if line.startswith("| MIG single, pinned"))
    assert "firstAvailable" in row and "DRA519" in row and "DRA317" in row
    row = next(line for line in readme.splitlines() if line.startswith("| MIG single, cluster default"))
    assert "a full GPU" in row and "DRA508" in row
    assert "translated as a full GPU" in CODES["DRA508"].explanation
    assert "DRA519" in CODES["DRA508"].explanation and "firstAvailable" in CODES["DRA519"].explanation


def test_label_implied_sharing_warns_with_the_numbers() -> None:
    fr = run(pod({"nodeSelector": {"nvidia.com/gpu.sharing-strategy": "time-slicing",
                                   "nvidia.com/gpu.replicas": "4"}}, kind="Deployment"))
    (d,) = [d for d in fr.diagnostics if d.code == "DRA520"]
    assert "6 pod(s) × 1 now need 6 device(s) where replicas=4 needed 2" in d.message
    (req,) = requests(fr)
    assert req["exactly"] == {"deviceClassName": "gpu.nvidia.com", "count": 1}


def test_label_implied_sharing_accepted_by_annotation() -> None:
    raw = pod({"nodeSelector": {"nvidia.com/gpu.sharing-strategy": "time-slicing"}}, kind="Deployment",
              annotations={"dra-migrate.io/sharing": "exclusive"})
    assert "DRA520" not in codes(run(raw))


def test_label_implied_sharing_covered_by_a_config_is_the_sharing_pass_business() -> None:
    inv = inventory_from([("cm.yaml", time_slicing_config(4, name="ts").encode())])
    fr = run(pod({"nodeSelector": {"nvidia.com/gpu.sharing-strategy": "time-slicing"}}, kind="Deployment"),
             sharing=inv)
    assert "DRA520" not in codes(fr) and {"DRA502", "DRA504"} & set(codes(fr))


SPREAD = {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
          "labelSelector": {"matchLabels": {"app": "p"}}}
H100 = {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}


def pod_spec(fr: FileResult) -> dict[str, Any]:
    (p,) = [d for d in docs(fr) if d["kind"] in ("Pod", "Deployment")]
    return dict(p["spec"] if p["kind"] == "Pod" else p["spec"]["template"]["spec"])


@pytest.mark.parametrize("when", ["DoNotSchedule", "ScheduleAnyway"])
def test_honor_spread_keeps_the_labels_on_the_node_side(when: str) -> None:
    fr = run(pod({"nodeSelector": H100, "topologySpreadConstraints": [{**SPREAD, "whenUnsatisfiable": when}]}))
    assert pod_spec(fr)["nodeSelector"] == H100
    assert "DRA316" in codes(fr) and "DRA301" not in codes(fr)
    (req,) = requests(fr)
    assert req["exactly"]["selectors"]  # and the claim selects the same GPUs


def test_ignore_spread_moves_the_labels() -> None:
    fr = run(pod({"nodeSelector": H100,
                  "topologySpreadConstraints": [{**SPREAD, "nodeAffinityPolicy": "Ignore"}]}))
    assert "nodeSelector" not in pod_spec(fr) and "DRA301" in codes(fr) and "DRA316" not in codes(fr)


def test_honor_spread_keeps_required_affinity_but_preferences_still_move() -> None:
    aff = affinity([expr("nvidia.com/gpu.family", "In", "hopper")])
    aff["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"] = [
        {"weight": 10, "preference": {"matchExpressions": [expr("nvidia.com/gpu.memory", "Gt", "90000")]}}]
    fr = run(pod({"affinity": aff, "topologySpreadConstraints": [SPREAD]}))
    na = pod_spec(fr)["affinity"]["nodeAffinity"]
    assert na == {REQ: aff["nodeAffinity"][REQ]}  # preferences do not decide which nodes a spread counts
    (req,) = requests(fr)
    assert [s["name"] for s in req["firstAvailable"]] == ["preferred-1", "fallback"]


def test_spread_without_a_moved_label_says_nothing() -> None:
    fr = run(pod({"nodeSelector": {"kubernetes.io/os": "linux"}, "topologySpreadConstraints": [SPREAD]}))
    assert "DRA316" not in codes(fr)


def test_pod_anti_affinity_does_not_keep_labels() -> None:
    anti = {"podAntiAffinity": {REQ: [{"topologyKey": "kubernetes.io/hostname",
                                       "labelSelector": {"matchLabels": {"app": "p"}}}]}}
    fr = run(pod({"nodeSelector": H100, "affinity": anti}))
    spec = pod_spec(fr)
    assert "nodeSelector" not in spec and spec["affinity"] == anti


def test_new_codes_are_registered() -> None:
    for code in ("DRA316", "DRA317", "DRA518", "DRA519", "DRA520"):
        assert CODES[code].explanation


def test_explain_says_the_spread_kept_labels_on_the_node() -> None:
    from dra_migrate.cli.explain_cmd import explain_text

    text = explain_text(run(pod({"nodeSelector": H100, "topologySpreadConstraints": [SPREAD]})))
    assert "Also kept on the node selection (topology spread)." in text
