"""GPU node selection → DRA device selection.

Two kinds of assertions: the exact CEL text, and (when the CEL engine dra_migrate.cel is importable) that the
translated selection picks exactly the devices whose nodes the original labels picked.
"""

from __future__ import annotations

import re
from typing import Any

import celpy
import pytest

from dra_migrate.diagnostics.codes import CODES
from dra_migrate.lower.selection import (
    SelectionInput,
    SelectionResult,
    cel_string,
    load_label_rules,
    node_matches,
    regex_escape,
    translate_selection,
)

A = "device.attributes['gpu.nvidia.com']"
C = "device.capacity['gpu.nvidia.com']"
MEM = f"'memory' in {C}"

# --- devices, and the labels GPU Feature Discovery would put on a node holding them ---------------------------  # noqa: E501


def gpu(
    name: str,
    arch: str | None,
    cc: str,
    mem_mib: int | None,
    driver: str = "550.107.2",
    cuda: str = "12.4.0",
    **extra: Any,
) -> dict[str, Any]:
    attrs: dict[str, Any] = {
        "type": {"string": extra.pop("type", "gpu")},
        "uuid": {"string": f"GPU-{abs(hash(name)) % 10**8}"},
        "productName": {"string": name},
        "cudaComputeCapability": {"version": cc},
        "driverVersion": {"version": driver},
        "cudaDriverVersion": {"version": cuda},
    }
    if arch is not None:
        attrs["architecture"] = {"string": arch}
    for k, v in extra.items():
        attrs[k] = {"string": v}
    dev: dict[str, Any] = {"name": name, "attributes": attrs, "capacity": {}}
    if mem_mib is not None:
        dev["capacity"]["memory"] = {"value": f"{mem_mib}Mi"}
    return dev


FAMILY = {
    "Volta": "volta",
    "Turing": "turing",
    "Ampere": "ampere",
    "Ada Lovelace": "ada-lovelace",
    "Hopper": "hopper",
    "Blackwell": "blackwell",
}

GPUS = [
    gpu("NVIDIA A100-SXM4-40GB", "Ampere", "8.0.0", 40960),
    gpu("NVIDIA A100-SXM4-80GB", "Ampere", "8.0.0", 81920, driver="535.54.3"),
    gpu("NVIDIA H100 80GB HBM3", "Hopper", "9.0.0", 81559, driver="570.86.15", cuda="12.8.0"),
    gpu("NVIDIA H100 NVL", "Hopper", "9.0.0", 95830, driver="570.86.15", cuda="12.8.0"),
    gpu("NVIDIA L4", "Ada Lovelace", "8.9.0", 23034),
    gpu("Tesla T4", "Turing", "7.5.0", 15360, driver="535.54.3"),
    gpu("Tesla V100-SXM2-16GB", "Volta", "7.0.0", 16160),
    gpu("NVIDIA A10G", "Ampere", "8.6.0", 23028),
    gpu("NVIDIA RTX A1000", "Ampere", "8.6.0", 8192),
    # No architecture attribute and no memory capacity: guards must keep selectors from failing on it.
    gpu("NVIDIA GB10", None, "12.1.0", None),
]
MIGS = [
    gpu("NVIDIA A100-SXM4-40GB", "Ampere", "8.0.0", 4864, type="mig", profile="1g.5gb"),
    gpu("NVIDIA A100-SXM4-40GB", "Ampere", "8.0.0", 9984, type="mig", profile="2g.10gb"),
    gpu("NVIDIA H100 80GB HBM3", "Hopper", "9.0.0", 10240, type="mig", profile="1g.10gb"),
]


def _attr(dev: dict[str, Any], name: str) -> str | None:
    v = dev["attributes"].get(name)
    return None if v is None else next(iter(v.values()))


def sanitise(name: str) -> str:
    return "-".join(re.sub(r"[^A-Za-z0-9_. -]", "", name).split())


def gfd_labels(dev: dict[str, Any]) -> dict[str, str]:
    """The labels GFD writes for a node whose GPUs all look like `dev` (nvidia.md §B8)."""
    product = sanitise(str(_attr(dev, "productName")))
    if _attr(dev, "type") == "mig":
        product += f"-MIG-{_attr(dev, 'profile')}"
    labels = {
        "nvidia.com/gpu.product": product,
        "nvidia.com/gpu.count": "8",
        "nvidia.com/gpu.present": "true",
    }
    mem = dev["capacity"].get("memory")
    if mem:
        labels["nvidia.com/gpu.memory"] = mem["value"].removesuffix("Mi")
    arch = _attr(dev, "architecture")
    if arch:
        labels["nvidia.com/gpu.family"] = FAMILY[arch]
    major, minor, _ = str(_attr(dev, "cudaComputeCapability")).split(".")
    labels |= {"nvidia.com/gpu.compute.major": major, "nvidia.com/gpu.compute.minor": minor}
    dmaj, dmin, drev = str(_attr(dev, "driverVersion")).split(".")
    labels |= {
        "nvidia.com/cuda.driver-version.major": dmaj,
        "nvidia.com/cuda.driver-version.minor": dmin,
        "nvidia.com/cuda.driver-version.revision": drev.zfill(2),
        "nvidia.com/cuda.driver-version.full": f"{dmaj}.{dmin}.{drev.zfill(2)}",
    }
    cmaj, cmin, _ = str(_attr(dev, "cudaDriverVersion")).split(".")
    labels |= {"nvidia.com/cuda.runtime-version.major": cmaj, "nvidia.com/cuda.runtime-version.minor": cmin}
    return labels


# --- CEL evaluation (dra_migrate.cel arrives later) ------------------------------------------------------------  # noqa: E501


def cel_true(expression: str, device: dict[str, Any]) -> bool:
    """Evaluate with the project's Kubernetes CEL environment (a missing attribute is an error, as upstream)."""
    from dra_migrate.cel import compile_selector, device_from_slice

    return compile_selector(expression).evaluate(device_from_slice(device, "gpu.nvidia.com"))


def needs_cel(fn: Any) -> Any:  # the engine is part of the package now; kept as a marker for readers
    return fn


def assert_equivalent(
    inp: SelectionInput,
    res: SelectionResult,
    devices: list[dict[str, Any]],
    node_labels: dict[str, str] | None = None,
    expect: set[str] | None = None,
) -> None:
    """Every device is alone on a node with its GFD labels (+ node_labels); before and after must agree."""
    chosen = set()
    for dev in devices:
        labels = gfd_labels(dev) | (node_labels or {})
        before = node_matches(labels, inp.node_selector, inp.required_terms)
        after = all(cel_true(s, dev) for s in res.selectors) and node_matches(
            labels, res.node_selector, res.required_terms
        )
        assert before == after, (dev["name"], _attr(dev, "profile"), before, after, res.selectors)
        if after:
            chosen.add(f"{dev['name']}/{_attr(dev, 'profile')}" if _attr(dev, "profile") else dev["name"])
    if expect is not None:
        assert chosen == expect


def tr(
    node_selector: dict[str, str] | None = None,
    terms: list[dict[str, Any]] | None = None,
    preferred: list[dict[str, Any]] | None = None,
    device_class: str = "gpu.nvidia.com",
    **kw: Any,
) -> tuple[SelectionInput, SelectionResult]:
    inp = SelectionInput(dict(node_selector or {}), terms, preferred, device_class)
    return inp, translate_selection(inp, **kw)


def term(*exprs: tuple[str, str, list[str]]) -> dict[str, Any]:
    out = []
    for key, op, values in exprs:
        e: dict[str, Any] = {"key": key, "operator": op}
        if op not in ("Exists", "DoesNotExist"):
            e["values"] = values
        out.append(e)
    return {"matchExpressions": out}


def codes(res: SelectionResult) -> list[str]:
    return [c for c, _ in res.diagnostics]


# --- product ---------------------------------------------------------------------------------------------------  # noqa: E501

H100_SEL = f"{A}.productName.matches('^NVIDIA[ -]H100[ -]80GB[ -]HBM3$')"


def test_product_node_selector_moves() -> None:
    inp, res = tr({"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"})
    assert res.selectors == [H100_SEL]
    assert res.node_selector == {}
    assert res.changed
    assert [(d.label, d.action) for d in res.decisions] == [("nvidia.com/gpu.product", "moved")]
    assert codes(res) == ["DRA301"]


@needs_cel
def test_product_node_selector_selects_same_devices() -> None:
    inp, res = tr({"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"})
    assert_equivalent(inp, res, GPUS, expect={"NVIDIA H100 80GB HBM3"})


def test_product_dots_are_escaped_and_dashes_stay_ambiguous() -> None:
    _, res = tr({"nvidia.com/gpu.product": "Tesla-V100-SXM2-16GB"})
    assert res.selectors == [f"{A}.productName.matches('^Tesla[ -]V100[ -]SXM2[ -]16GB$')"]
    _, res = tr({"nvidia.com/gpu.product": "A.100"})
    assert res.selectors == [f"{A}.productName.matches('^A\\\\.100$')"]


def test_product_shared_suffix_is_stripped() -> None:
    inp, res = tr({"nvidia.com/gpu.product": "Tesla-T4-SHARED"})
    assert res.selectors == [f"{A}.productName.matches('^Tesla[ -]T4$')"]


def test_product_in_several_values_is_one_or() -> None:
    inp, res = tr(terms=[term(("nvidia.com/gpu.product", "In", ["NVIDIA-L4", "Tesla-T4"]))])
    assert res.selectors == [
        f"({A}.productName.matches('^NVIDIA[ -]L4$') || {A}.productName.matches('^Tesla[ -]T4$'))"
    ]
    assert res.required_terms is None


@needs_cel
def test_product_in_selects_same_devices() -> None:
    inp, res = tr(terms=[term(("nvidia.com/gpu.product", "In", ["NVIDIA-L4", "Tesla-T4"]))])
    assert_equivalent(inp, res, GPUS, expect={"NVIDIA L4", "Tesla T4"})


def test_product_notin_is_negation() -> None:
    inp, res = tr(terms=[term(("nvidia.com/gpu.product", "NotIn", ["Tesla-T4"]))])
    assert res.selectors == [f"!({A}.productName.matches('^Tesla[ -]T4$'))"]


@needs_cel
def test_product_notin_selects_same_devices() -> None:
    inp, res = tr(terms=[term(("nvidia.com/gpu.product", "NotIn", ["Tesla-T4"]))])
    assert_equivalent(inp, res, GPUS, expect={d["name"] for d in GPUS} - {"Tesla T4"})


def test_product_exists_needs_no_selector() -> None:
    inp, res = tr(terms=[term(("nvidia.com/gpu.product", "Exists", []))])
    assert res.selectors == []
    assert res.required_terms is None  # the only requirement moved: the block goes away
    assert res.decisions[0].action == "moved"


def test_product_does_not_exist_is_kept() -> None:
    terms = [term(("nvidia.com/gpu.product", "DoesNotExist", []))]
    inp, res = tr(terms=terms)
    assert res.selectors == []
    assert res.required_terms == terms
    assert res.decisions[0].action == "untranslatable"
    assert codes(res) == ["DRA303"]
    assert not res.changed


# --- memory ----------------------------------------------------------------------------------------------------  # noqa: E501


def test_memory_equality_is_the_floored_mib_range() -> None:
    _, res = tr({"nvidia.com/gpu.memory": "81920"})
    assert res.selectors == [
        f"{MEM} && {C}.memory.compareTo(quantity('81920Mi')) >= 0 && {C}.memory.compareTo(quantity('81921Mi')) < 0"  # noqa: E501
    ]


def test_memory_gt_lt() -> None:
    _, res = tr(
        terms=[term(("nvidia.com/gpu.memory", "Gt", ["16384"]), ("nvidia.com/gpu.memory", "Lt", ["81920"]))]
    )
    assert res.selectors == [
        f"{MEM} && {C}.memory.compareTo(quantity('16385Mi')) >= 0",
        f"{MEM} && {C}.memory.compareTo(quantity('81920Mi')) < 0",
    ]


@needs_cel
@pytest.mark.parametrize(
    "op,value",
    [
        ("Gt", "16384"),
        ("Lt", "23034"),
        ("In", "23034"),
        ("NotIn", "40960"),
        ("Exists", ""),
        ("Gt", "81559"),
        ("Lt", "81560"),
    ],
)
def test_memory_selects_same_devices(op: str, value: str) -> None:
    inp, res = tr(terms=[term(("nvidia.com/gpu.memory", op, [value]))])
    assert res.required_terms is None
    assert_equivalent(inp, res, GPUS)


def test_memory_non_integer_is_untranslatable() -> None:
    _, res = tr(terms=[term(("nvidia.com/gpu.memory", "Gt", ["16Gi"]))])
    assert res.selectors == [] and codes(res) == ["DRA303"]


def test_deepops_family_and_memory_example() -> None:
    """NVIDIA/deepops gpu-with-affinity-by-memory.yml: any Ampere GPU with more than 16 GB."""
    inp, res = tr(
        terms=[term(("nvidia.com/gpu.family", "In", ["ampere"]), ("nvidia.com/gpu.memory", "Gt", ["16384"]))]
    )
    assert res.selectors == [
        f"'architecture' in {A} && {A}.architecture == 'Ampere'",
        f"{MEM} && {C}.memory.compareTo(quantity('16385Mi')) >= 0",
    ]
    assert res.required_terms is None


@needs_cel
def test_deepops_example_selects_same_devices() -> None:
    inp, res = tr(
        terms=[term(("nvidia.com/gpu.family", "In", ["ampere"]), ("nvidia.com/gpu.memory", "Gt", ["16384"]))]
    )
    assert_equivalent(
        inp, res, GPUS, expect={"NVIDIA A100-SXM4-40GB", "NVIDIA A100-SXM4-80GB", "NVIDIA A10G"}
    )


# --- family ----------------------------------------------------------------------------------------------------  # noqa: E501


def test_family_ada_lovelace_has_a_space() -> None:
    _, res = tr({"nvidia.com/gpu.family": "ada-lovelace"})
    assert res.selectors == [f"'architecture' in {A} && {A}.architecture == 'Ada Lovelace'"]


@needs_cel
@pytest.mark.parametrize(
    "op,values", [("In", ["ada-lovelace", "hopper"]), ("NotIn", ["ampere"]), ("Exists", [])]
)
def test_family_selects_same_devices(op: str, values: list[str]) -> None:
    inp, res = tr(terms=[term(("nvidia.com/gpu.family", op, values))])
    assert_equivalent(inp, res, GPUS)


def test_family_unknown_value_is_untranslatable() -> None:
    _, res = tr({"nvidia.com/gpu.family": "fermi"})
    assert res.node_selector == {"nvidia.com/gpu.family": "fermi"}
    assert res.decisions[0].action == "untranslatable"


# --- compute capability and versions ---------------------------------------------------------------------------  # noqa: E501

CC = f"{A}.cudaComputeCapability"
DV = f"{A}.driverVersion"


def test_compute_major_minor_pair_is_one_version() -> None:
    _, res = tr({"nvidia.com/gpu.compute.major": "8", "nvidia.com/gpu.compute.minor": "9"})
    assert res.selectors == [
        f"'cudaComputeCapability' in {A} && {CC}.compareTo(semver('8.9.0')) >= 0 && "
        f"{CC}.compareTo(semver('8.10.0')) < 0"
    ]
    assert res.node_selector == {}


def test_compute_major_alone_is_a_range_and_gt() -> None:
    _, res = tr({"nvidia.com/gpu.compute.major": "8"})
    assert res.selectors == [
        f"'cudaComputeCapability' in {A} && {CC}.compareTo(semver('8.0.0')) >= 0 && "
        f"{CC}.compareTo(semver('9.0.0')) < 0"
    ]
    _, res = tr(terms=[term(("nvidia.com/gpu.compute.major", "Gt", ["7"]))])
    assert res.selectors == [f"'cudaComputeCapability' in {A} && {CC}.compareTo(semver('8.0.0')) >= 0"]


def test_compute_minor_alone_is_untranslatable() -> None:
    _, res = tr({"nvidia.com/gpu.compute.minor": "0"})
    assert res.node_selector == {"nvidia.com/gpu.compute.minor": "0"}
    assert codes(res) == ["DRA303"]


@needs_cel
@pytest.mark.parametrize(
    "ns,terms",
    [
        ({"nvidia.com/gpu.compute.major": "8", "nvidia.com/gpu.compute.minor": "0"}, None),
        ({}, [term(("nvidia.com/gpu.compute.major", "In", ["8", "9"]))]),
        ({}, [term(("nvidia.com/gpu.compute.major", "Lt", ["8"]))]),
        ({}, [term(("nvidia.com/gpu.compute.major", "NotIn", ["8"]))]),
        (
            {},
            [
                term(
                    ("nvidia.com/gpu.compute.major", "In", ["7", "8"]),
                    ("nvidia.com/gpu.compute.minor", "In", ["5", "6"]),
                )
            ],
        ),
    ],
)
def test_compute_selects_same_devices(ns: dict[str, str], terms: list[dict[str, Any]] | None) -> None:
    inp, res = tr(ns, terms)
    assert res.selectors
    assert_equivalent(inp, res, GPUS)


def test_driver_version_full_strips_leading_zeros() -> None:
    _, res = tr({"nvidia.com/cuda.driver-version.full": "550.107.02"})
    assert res.selectors == [f"'driverVersion' in {A} && {DV}.compareTo(semver('550.107.2')) == 0"]


def test_driver_version_parts_and_deprecated_labels() -> None:
    _, res = tr(
        {
            "nvidia.com/cuda.driver.major": "550",
            "nvidia.com/cuda.driver.minor": "107",
            "nvidia.com/cuda.driver.rev": "02",
        }
    )
    assert res.selectors == [f"'driverVersion' in {A} && {DV}.compareTo(semver('550.107.2')) == 0"]
    _, res = tr(terms=[term(("nvidia.com/cuda.driver-version.major", "Gt", ["549"]))])
    assert res.selectors == [f"'driverVersion' in {A} && {DV}.compareTo(semver('550.0.0')) >= 0"]


def test_cuda_runtime_version_is_cuda_driver_version() -> None:
    _, res = tr({"nvidia.com/cuda.runtime-version.full": "12.8"})
    assert res.selectors == [
        f"'cudaDriverVersion' in {A} && {A}.cudaDriverVersion.compareTo(semver('12.8.0')) == 0"
    ]


@needs_cel
@pytest.mark.parametrize(
    "ns,terms",
    [
        ({"nvidia.com/cuda.driver-version.full": "550.107.02"}, None),
        ({"nvidia.com/cuda.driver-version.major": "570"}, None),
        ({}, [term(("nvidia.com/cuda.driver-version.major", "Gt", ["540"]))]),
        ({"nvidia.com/cuda.runtime-version.major": "12", "nvidia.com/cuda.runtime-version.minor": "8"}, None),
    ],
)
def test_versions_select_same_devices(ns: dict[str, str], terms: list[dict[str, Any]] | None) -> None:
    inp, res = tr(ns, terms)
    assert res.selectors
    assert_equivalent(inp, res, GPUS)


# --- node, drop and cloud labels -------------------------------------------------------------------------------  # noqa: E501


def test_node_describing_labels_always_stay() -> None:
    ns = {
        "nvidia.com/gpu.count": "8",
        "nvidia.com/gpu.machine": "DGX-H100",
        "nvidia.com/gpu.present": "true",
        "node.kubernetes.io/instance-type": "p5.48xlarge",
        "topology.kubernetes.io/zone": "us-east-1a",
    }
    _, res = tr(ns, move_cloud_labels=True)
    assert res.node_selector == ns
    assert res.selectors == [] and not res.changed
    assert {d.action for d in res.decisions} == {"kept"}


def test_device_plugin_labels_are_kept_with_a_warning() -> None:
    """Removing them would widen the nodes the pod may use; the warning says they can go later."""
    ns = {"nvidia.com/device-plugin.config": "a100-ts", "nvidia.com/gfd.timestamp": "1700000000", "app": "x"}
    _, res = tr(ns)
    assert res.node_selector == ns
    assert [d.action for d in res.decisions] == ["kept", "kept"]
    assert codes(res) == ["DRA304", "DRA304"]
    assert not res.changed


def test_unknown_labels_are_untouched_and_unreported() -> None:
    _, res = tr({"app": "x", "gpu": "true"})
    assert res.node_selector == {"app": "x", "gpu": "true"} and res.decisions == [] and not res.changed


def test_gke_accelerator_stays_by_default() -> None:
    _, res = tr({"cloud.google.com/gke-accelerator": "nvidia-l4"})
    assert res.node_selector == {"cloud.google.com/gke-accelerator": "nvidia-l4"}
    assert res.selectors == [] and codes(res) == ["DRA309"] and not res.changed


def test_gke_accelerator_moves_with_flag() -> None:
    _, res = tr({"cloud.google.com/gke-accelerator": "nvidia-a100-80gb"}, move_cloud_labels=True)
    assert res.node_selector == {}
    assert res.selectors == [
        f"{MEM} && {A}.productName.matches('(^| )A100([ -]|$)') && "
        f"{C}.memory.compareTo(quantity('73728Mi')) >= 0 && {C}.memory.compareTo(quantity('90112Mi')) < 0"
    ]


@needs_cel
@pytest.mark.parametrize(
    "value,expect",
    [
        ("nvidia-tesla-a100", {"NVIDIA A100-SXM4-40GB"}),
        ("nvidia-a100-80gb", {"NVIDIA A100-SXM4-80GB"}),
        ("nvidia-h100-80gb", {"NVIDIA H100 80GB HBM3"}),
        ("nvidia-l4", {"NVIDIA L4"}),
        ("nvidia-tesla-t4", {"Tesla T4"}),
        ("nvidia-tesla-v100", {"Tesla V100-SXM2-16GB"}),
    ],
)
def test_gke_accelerator_table_picks_the_model(value: str, expect: set[str]) -> None:
    _, res = tr({"cloud.google.com/gke-accelerator": value}, move_cloud_labels=True)
    chosen = {d["name"] for d in GPUS if all(cel_true(s, d) for s in res.selectors)}
    assert chosen == expect


def test_unconventional_accelerator_label() -> None:
    _, res = tr({"accelerator": "nvidia-tesla-v100"}, move_cloud_labels=True)
    assert res.selectors == [f"{A}.productName.matches('(^| )V100([ -]|$)')"]
    _, res = tr({"accelerator": "nvidia-tesla-v100"})
    assert res.node_selector == {"accelerator": "nvidia-tesla-v100"}


def test_gke_accelerator_unknown_value_stays() -> None:
    _, res = tr({"cloud.google.com/gke-accelerator": "nvidia-future-9000"}, move_cloud_labels=True)
    assert res.node_selector == {"cloud.google.com/gke-accelerator": "nvidia-future-9000"}
    assert codes(res) == ["DRA303"]


def test_karpenter_labels() -> None:
    ns = {
        "karpenter.k8s.aws/instance-gpu-name": "a10g",
        "karpenter.k8s.aws/instance-gpu-manufacturer": "nvidia",
        "karpenter.k8s.aws/instance-gpu-memory": "24576",
        "karpenter.k8s.aws/instance-gpu-count": "1",
    }
    _, res = tr(ns, move_cloud_labels=True)
    assert res.node_selector == {"karpenter.k8s.aws/instance-gpu-count": "1"}
    assert res.selectors == [
        f"{A}.productName.matches('(^| )A10G$')",
        f"{MEM} && {C}.memory.compareTo(quantity('21504Mi')) >= 0 && {C}.memory.compareTo(quantity('24576Mi')) <= 0",  # noqa: E501
    ]
    # (a real A10G reports 23028 MiB for the catalogue's 24576, more than 1/16 less: the range must admit it)
    assert "DRA307" in codes(res)  # nominal memory is approximate
    manufacturer = [d for d in res.decisions if d.label.endswith("manufacturer")][0]
    assert manufacturer.action == "moved" and "no selector" in manufacturer.detail


def test_karpenter_other_manufacturer_stays() -> None:
    _, res = tr({"karpenter.k8s.aws/instance-gpu-manufacturer": "amd"}, move_cloud_labels=True)
    assert res.node_selector == {"karpenter.k8s.aws/instance-gpu-manufacturer": "amd"}


def test_aks_accelerator_nvidia() -> None:
    _, res = tr({"kubernetes.azure.com/accelerator": "nvidia"}, move_cloud_labels=True)
    assert res.node_selector == {} and res.selectors == []
    _, res = tr({"kubernetes.azure.com/accelerator": "nvidia"})
    assert res.node_selector == {"kubernetes.azure.com/accelerator": "nvidia"}


def test_mixed_gfd_cloud_and_zone_selectors() -> None:
    ns = {
        "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
        "cloud.google.com/gke-accelerator": "nvidia-h100-80gb",
        "topology.kubernetes.io/zone": "us-central1-a",
        "app": "llm",
    }
    _, res = tr(ns)
    assert res.selectors == [H100_SEL]
    assert res.node_selector == {
        "cloud.google.com/gke-accelerator": "nvidia-h100-80gb",
        "topology.kubernetes.io/zone": "us-central1-a",
        "app": "llm",
    }
    actions = {d.label: d.action for d in res.decisions}
    assert actions == {
        "nvidia.com/gpu.product": "moved",
        "cloud.google.com/gke-accelerator": "kept",
        "topology.kubernetes.io/zone": "kept",
    }


@needs_cel
def test_mixed_selection_with_zone_selects_same_devices() -> None:
    ns = {"nvidia.com/gpu.family": "hopper", "topology.kubernetes.io/zone": "a"}
    inp, res = tr(ns)
    for zone in ("a", "b"):
        assert_equivalent(
            inp,
            res,
            GPUS,
            {"topology.kubernetes.io/zone": zone},
            expect={"NVIDIA H100 80GB HBM3", "NVIDIA H100 NVL"} if zone == "a" else set(),
        )


# --- ORed required terms ---------------------------------------------------------------------------------------  # noqa: E501

ZONE = "topology.kubernetes.io/zone"


def test_or_terms_with_identical_node_part_become_one_or() -> None:
    terms = [
        term((ZONE, "In", ["a", "b"]), ("nvidia.com/gpu.product", "In", ["NVIDIA-L4"])),
        term(("nvidia.com/gpu.family", "In", ["hopper"]), (ZONE, "In", ["b", "a"])),
    ]
    _, res = tr(terms=terms)
    assert res.required_terms == [term((ZONE, "In", ["a", "b"]))]
    assert res.selectors == [
        f"({A}.productName.matches('^NVIDIA[ -]L4$') || ('architecture' in {A} && {A}.architecture == 'Hopper'))"  # noqa: E501
    ]


def test_or_terms_with_identical_gpu_part_keep_node_alternatives() -> None:
    terms = [
        term((ZONE, "In", ["a"]), ("nvidia.com/gpu.product", "In", ["NVIDIA-L4"])),
        term(("kubernetes.io/hostname", "In", ["n1"]), ("nvidia.com/gpu.product", "In", ["NVIDIA-L4"])),
    ]
    _, res = tr(terms=terms)
    assert res.required_terms == [term((ZONE, "In", ["a"])), term(("kubernetes.io/hostname", "In", ["n1"]))]
    assert res.selectors == [f"{A}.productName.matches('^NVIDIA[ -]L4$')"]


def test_or_terms_tying_gpu_to_zone_are_not_split() -> None:
    terms = [
        term((ZONE, "In", ["a"]), ("nvidia.com/gpu.product", "In", ["NVIDIA-A100-SXM4-40GB"])),
        term((ZONE, "In", ["b"]), ("nvidia.com/gpu.product", "In", ["NVIDIA-H100-80GB-HBM3"])),
    ]
    inp, res = tr(terms=terms)
    assert res.required_terms == terms and res.selectors == []
    assert codes(res) == ["DRA302"]
    assert {d.label: d.action for d in res.decisions} == {
        ZONE: "kept",
        "nvidia.com/gpu.product": "untranslatable",
    }
    assert not res.changed


@needs_cel
@pytest.mark.parametrize(
    "terms",
    [
        [
            term((ZONE, "In", ["a", "b"]), ("nvidia.com/gpu.product", "In", ["NVIDIA-L4"])),
            term(("nvidia.com/gpu.family", "In", ["hopper"]), (ZONE, "In", ["b", "a"])),
        ],
        [
            term((ZONE, "In", ["a"]), ("nvidia.com/gpu.family", "In", ["ampere"])),
            term((ZONE, "In", ["c"]), ("nvidia.com/gpu.family", "In", ["ampere"])),
        ],
        [
            term((ZONE, "In", ["a"]), ("nvidia.com/gpu.product", "In", ["NVIDIA-A100-SXM4-40GB"])),
            term((ZONE, "In", ["b"]), ("nvidia.com/gpu.product", "In", ["NVIDIA-H100-80GB-HBM3"])),
        ],
        [term(("nvidia.com/gpu.memory", "Gt", ["40000"])), term(("nvidia.com/gpu.family", "In", ["turing"]))],
    ],
)
def test_or_terms_select_same_devices(terms: list[dict[str, Any]]) -> None:
    inp, res = tr(terms=terms)
    for zone in ("a", "b", "c"):
        assert_equivalent(inp, res, GPUS, {ZONE: zone})


def test_or_terms_where_one_term_is_gpu_only() -> None:
    terms = [
        term(("nvidia.com/gpu.memory", "Gt", ["40000"])),
        term(("nvidia.com/gpu.family", "In", ["turing"])),
    ]
    _, res = tr(terms=terms)
    assert res.required_terms is None
    # Each alternative keeps its own guard: a guard shared by only one side must not constrain the other.
    assert res.selectors == [
        f"(({MEM} && {C}.memory.compareTo(quantity('40001Mi')) >= 0) || "
        f"('architecture' in {A} && {A}.architecture == 'Turing'))"
    ]


def test_match_fields_stay_with_their_term() -> None:
    t = {
        "matchExpressions": [{"key": "nvidia.com/gpu.family", "operator": "In", "values": ["hopper"]}],
        "matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}],
    }
    _, res = tr(terms=[t])
    assert res.required_terms == [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}
    ]


# --- preferred terms → firstAvailable --------------------------------------------------------------------------  # noqa: E501


def pref(weight: int, *exprs: tuple[str, str, list[str]]) -> dict[str, Any]:
    return {"weight": weight, "preference": term(*exprs)}


def test_preferences_become_alternatives_by_weight() -> None:
    prefs = [
        pref(10, ("nvidia.com/gpu.product", "In", ["NVIDIA-L4"])),
        pref(80, ("nvidia.com/gpu.product", "In", ["NVIDIA-H100-80GB-HBM3"])),
        pref(10, ("nvidia.com/gpu.product", "In", ["Tesla-T4"])),
        pref(5, (ZONE, "In", ["a"])),
    ]
    _, res = tr({"nvidia.com/gpu.family": "ada-lovelace"}, preferred=prefs)
    fam = f"'architecture' in {A} && {A}.architecture == 'Ada Lovelace'"
    assert res.selectors == [fam]
    assert res.alternatives == [
        [fam, H100_SEL],
        [fam, f"{A}.productName.matches('^NVIDIA[ -]L4$')"],  # ties keep their original order
        [fam, f"{A}.productName.matches('^Tesla[ -]T4$')"],
        [fam],  # fallback: any device the required selection allows
    ]
    assert res.preferred == [pref(5, (ZONE, "In", ["a"]))]
    assert "DRA305" in codes(res)


def test_no_gpu_preference_means_no_alternatives() -> None:
    prefs = [pref(5, (ZONE, "In", ["a"]))]
    _, res = tr(preferred=prefs)
    assert res.alternatives is None and res.preferred == prefs and not res.changed


def test_preference_mixing_gpu_and_node_is_left_alone() -> None:
    prefs = [pref(50, (ZONE, "In", ["a"]), ("nvidia.com/gpu.product", "In", ["NVIDIA-L4"]))]
    _, res = tr(preferred=prefs)
    assert res.alternatives is None and res.preferred == prefs
    assert codes(res) == ["DRA306"]


def test_too_many_preferences_are_truncated() -> None:
    prefs = [pref(100 - i, ("nvidia.com/gpu.memory", "Gt", [str(1000 * i)])) for i in range(10)]
    _, res = tr(preferred=prefs)
    assert res.alternatives is not None and len(res.alternatives) == 8
    assert res.alternatives[-1] == []
    assert "DRA310" in codes(res)


# --- MIG -------------------------------------------------------------------------------------------------------  # noqa: E501


def test_mig_product_label_gives_profile_and_parent() -> None:
    _, res = tr({"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb"}, device_class="mig.nvidia.com")
    assert res.selectors == [
        f"'profile' in {A} && {A}.productName.matches('^NVIDIA[ -]A100[ -]SXM4[ -]40GB$') && "
        f"{A}.profile == '1g.5gb'"
    ]


def test_mig_shared_product_and_me_profile() -> None:
    _, res = tr(
        {"nvidia.com/gpu.product": "A100-SXM4-80GB-MIG-1g.10gb.me-SHARED"}, device_class="mig.nvidia.com"
    )
    assert res.selectors == [
        f"'profile' in {A} && {A}.productName.matches('^A100[ -]SXM4[ -]80GB$') && {A}.profile == '1g.10gb+me'"  # noqa: E501
    ]


@needs_cel
def test_mig_product_selects_same_slices() -> None:
    inp, res = tr(
        {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb"}, device_class="mig.nvidia.com"
    )
    assert_equivalent(inp, res, MIGS, expect={"NVIDIA A100-SXM4-40GB/1g.5gb"})


def test_mig_product_with_full_gpu_class_is_kept() -> None:
    _, res = tr({"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb"})
    assert res.node_selector == {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb"}
    assert codes(res) == ["DRA308"]


def test_mig_only_labels() -> None:
    _, res = tr({"nvidia.com/gpu.multiprocessors": "14"}, device_class="mig.nvidia.com")
    assert res.selectors == [
        f"'multiprocessors' in {C} && {C}.multiprocessors.compareTo(quantity('14')) == 0"
    ]
    _, res = tr({"nvidia.com/gpu.multiprocessors": "14"})
    assert codes(res) == ["DRA308"]


def test_gke_partition_size_describes_the_node_pool() -> None:
    # GKE's own GPU stack serves that pool: such pods stay on the device plugin (DRA518, the
    # provider-features pass), so the label itself never becomes a device selector.
    _, res = tr(
        {"cloud.google.com/gke-gpu-partition-size": "1g.5gb"},
        device_class="mig.nvidia.com",
        move_cloud_labels=True,
    )
    assert res.selectors == []
    assert res.node_selector == {"cloud.google.com/gke-gpu-partition-size": "1g.5gb"}


def test_gke_accelerator_on_mig_has_no_memory_bound() -> None:
    _, res = tr(
        {"cloud.google.com/gke-accelerator": "nvidia-a100-80gb"},
        device_class="mig.nvidia.com",
        move_cloud_labels=True,
    )
    assert res.selectors == [f"{A}.productName.matches('(^| )A100([ -]|$)')"]


def test_mig_mixed_strategy_labels_stay() -> None:
    _, res = tr({"nvidia.com/mig-1g.5gb.count": "7"}, device_class="mig.nvidia.com")
    assert res.node_selector == {"nvidia.com/mig-1g.5gb.count": "7"}
    assert res.decisions[0].action == "kept"


# --- hostile values --------------------------------------------------------------------------------------------  # noqa: E501

HOSTILE = "x') || true || ('\\\"$.*"


def test_hostile_value_cannot_change_expression_structure() -> None:
    _, res = tr({"nvidia.com/gpu.product": HOSTILE})
    (sel,) = res.selectors
    assert sel == A + r""".productName.matches('^x\'\\) \\|\\| true \\|\\| \\(\'\\\\"\\$\\.\\*$')"""
    # The whole value is inside one literal: the text outside it is exactly the template.
    literal = sel[len(f"{A}.productName.matches(") : -1]
    assert celpy_string(literal) == "^" + regex_escape(HOSTILE) + "$"


@needs_cel
def test_hostile_value_selects_nothing() -> None:
    inp, res = tr(terms=[term(("nvidia.com/gpu.product", "In", [HOSTILE, "x') || true"]))])
    assert res.selectors
    assert_equivalent(inp, res, GPUS, expect=set())


# --- literals --------------------------------------------------------------------------------------------------  # noqa: E501


def celpy_string(literal: str) -> str:
    env = celpy.Environment()
    return str(env.program(env.compile(literal)).evaluate({}))


@pytest.mark.parametrize(
    "value",
    [
        "plain",
        "it's",
        "back\\slash",
        'dq"',
        "new\nline",
        "tab\t",
        "uni✓",
        "\x00nul",
        "emoji😀",
        "''') || true",
    ],
)
def test_cel_string_round_trips(value: str) -> None:
    lit = cel_string(value)
    assert lit.startswith("'") and lit.endswith("'") and lit.isascii()
    assert celpy_string(lit) == value


@pytest.mark.parametrize("value", ["a.b", "a+b*c?", "(x)|[y]{z}", "^$", "back\\slash", "NVIDIA A100"])
def test_regex_escape_matches_literally(value: str) -> None:
    assert re.fullmatch(regex_escape(value), value)
    assert not re.fullmatch(regex_escape(value), value + "x")


# --- rules data ------------------------------------------------------------------------------------------------  # noqa: E501


def test_rules_load_and_validate() -> None:
    rules = load_label_rules()
    assert rules.lookup("nvidia.com/gpu.product") is not None
    assert rules.lookup("nvidia.com/mig-3g.20gb.product") is not None  # prefix rule
    assert rules.lookup("example.com/whatever") is None
    assert rules.tables["family-to-architecture"]["ada-lovelace"] == "Ada Lovelace"


def test_rules_schema_rejects_bad_rules() -> None:
    import jsonschema
    import yaml

    from dra_migrate.ruleset.labels import DEFAULT_RULES, parse_label_rules

    data = yaml.safe_load(DEFAULT_RULES.read_text())
    data["labels"]["nvidia.com/gpu.product"]["policy"] = "maybe"
    with pytest.raises(jsonschema.ValidationError):
        parse_label_rules(data)
    data = yaml.safe_load(DEFAULT_RULES.read_text())
    data["labels"]["nvidia.com/gpu.count"]["transform"] = "product"  # node targets take no transform
    with pytest.raises(jsonschema.ValidationError):
        parse_label_rules(data)


def test_every_emitted_code_is_registered_in_the_dra3xx_range() -> None:
    seen = set()
    for ns in (
        {"nvidia.com/gpu.product": "X"},
        {"nvidia.com/gfd.timestamp": "1"},
        {"cloud.google.com/gke-accelerator": "nvidia-l4"},
        {"nvidia.com/gpu.compute.minor": "1"},
    ):
        seen |= set(codes(tr(ns)[1]))
    for c in seen:
        assert c in CODES and c.startswith("DRA3")


def test_input_is_not_mutated() -> None:
    terms = [term(("nvidia.com/gpu.family", "In", ["hopper"]), (ZONE, "In", ["a"]))]
    ns = {"nvidia.com/gpu.product": "NVIDIA-L4"}
    snapshot = (repr(terms), repr(ns))
    tr(ns, terms)
    assert (repr(terms), repr(ns)) == snapshot
