from dra_migrate.cel import compile_selector, parse_quantity
from dra_migrate.cel.devices import load_nvidia_devices

NV = "device.attributes['gpu.nvidia.com']"


def select(expr: str) -> set[str]:
    sel = compile_selector(expr)
    return {d.name for d in load_nvidia_devices() if sel.evaluate(d)}


def test_fixture_loads_full_gpus_and_mig() -> None:
    devices = load_nvidia_devices()
    types = {d.attributes["gpu.nvidia.com"]["type"] for d in devices}
    assert types == {"gpu", "mig"}
    names = {d.attributes["gpu.nvidia.com"]["productName"] for d in devices}
    for expected in (
        "NVIDIA A100-SXM4-40GB",
        "NVIDIA H100 80GB HBM3",
        "Tesla T4",
        "Tesla V100-SXM2-16GB",
        "NVIDIA L40S",
        "NVIDIA B200",
        "NVIDIA RTX 6000 Ada Generation",
        "NVIDIA GH200 96GB HBM3",
    ):
        assert expected in names
    assert len({d.name for d in devices}) == len(devices)


def test_fixture_mig_sizes_are_real_slice_sizes() -> None:
    mig = [d for d in load_nvidia_devices() if d.attributes["gpu.nvidia.com"]["type"] == "mig"]
    by_profile = {
        d.attributes["gpu.nvidia.com"]["profile"]: d
        for d in mig
        if d.attributes["gpu.nvidia.com"]["productName"] == "NVIDIA A100-SXM4-40GB"
    }
    assert by_profile["1g.5gb"].capacity["gpu.nvidia.com"]["memory"] == parse_quantity("4864Mi")
    assert by_profile["7g.40gb"].capacity["gpu.nvidia.com"]["multiprocessors"] == parse_quantity("98")
    parents = {d.attributes["gpu.nvidia.com"]["uuid"] for d in load_nvidia_devices()}
    assert all(
        d.attributes["gpu.nvidia.com"]["parentUUID"] not in parents for d in mig
    )  # parent not published


def test_class_selectors_partition_the_fixture() -> None:
    gpus = select("device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'")
    migs = select("device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'")
    assert gpus and migs and not gpus & migs
    assert len(gpus | migs) == len(load_nvidia_devices())


def test_selectors_pick_intended_devices() -> None:
    assert select(f"{NV}.type == 'mig' && {NV}.profile == '1g.5gb'") == {
        "node-a100-sxm4-40gb/gpu-0-mig-1g5gb-19-0",
        "node-a100-sxm4-40gb/gpu-0-mig-1g5gb-19-1",
    }
    big = select(
        f"{NV}.type == 'gpu' && device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('80Gi')) >= 0"
    )
    # H100 reports 81559Mi, less than 80Gi: a memory threshold from a label must not assume round sizes.
    assert "node-h100-sxm/gpu-0" not in big and "node-a100-sxm4-80gb/gpu-0" in big
    assert select(f"{NV}.architecture == 'Ada Lovelace'") == {
        "node-l4/gpu-0",
        "node-l4/gpu-1",
        "node-l40s/gpu-0",
        "node-rtx6000ada/gpu-0",
    }
    old = select(f"{NV}.cudaComputeCapability.isLessThan(semver('8.0.0'))")
    assert old == {"node-t4/gpu-0", "node-v100/gpu-0"}
