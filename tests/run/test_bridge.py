"""Bridge mode (--strategy extended-resource) and the already-DRA-backed pre-pass."""

from __future__ import annotations

from pathlib import Path

import yaml

from dra_migrate.config import Options
from dra_migrate.run.bridge import (
    classes_destination,
    extended_resource_classes,
    mig_class,
    mig_class_name,
    mig_profile,
    scan_raw,
)
from dra_migrate.run.driver import RunConfig, run_migration

POD = """apiVersion: v1
kind: Pod
metadata: {{name: {name}}}
spec:
{extra}  containers:
  - name: c
    image: x
    resources:
      limits:
        {resource}: 1
"""


def _run(tmp_path: Path, files: dict[str, str], target: str = "1.36", mode: str = "write", **opts: object):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    cfg = RunConfig(
        [str(tmp_path)],
        mode=mode,
        options=Options(target_version=target, strategy="extended-resource", **opts),
    )  # type: ignore[arg-type]
    return run_migration(cfg)


def _codes(result) -> dict[str, list[str]]:  # type: ignore[no-untyped-def]
    out: dict[str, list[str]] = {}
    for d in result.all_diagnostics:
        out.setdefault(d.code, []).append(d.object or d.message)
    return out


def test_mig_profiles_and_names() -> None:
    assert mig_profile("nvidia.com/mig-1g.10gb") == "1g.10gb"
    assert mig_profile("nvidia.com/mig-1g.10gb.me") == "1g.10gb+me"
    assert mig_profile("nvidia.com/mig-1g.5gb.shared") is None
    assert mig_profile("nvidia.com/gpu") is None
    assert mig_class_name("1g.10gb") == "mig-1g-10gb.gpu.nvidia.com"
    assert mig_class_name("1g.10gb+me") == "mig-1g-10gb-me.gpu.nvidia.com"
    cls = mig_class("nvidia.com/mig-1g.10gb", "resource.k8s.io/v1")
    assert cls["spec"]["extendedResourceName"] == "nvidia.com/mig-1g.10gb"
    assert cls["spec"]["selectors"][0]["cel"]["expression"] == (
        "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig' && "
        "device.attributes['gpu.nvidia.com'].profile == '1g.10gb'"
    )


def test_workloads_are_never_changed_and_classes_go_to_one_file(tmp_path: Path) -> None:
    pod = POD.format(name="p", extra="", resource="nvidia.com/mig-1g.5gb")
    result = _run(tmp_path, {"a.yaml": pod})
    assert (tmp_path / "a.yaml").read_text() == pod
    classes = list(yaml.safe_load_all((tmp_path / "dra-deviceclasses.yaml").read_text()))
    assert [c["metadata"]["name"] for c in classes] == ["mig-1g-5gb.gpu.nvidia.com"]
    assert "DRA610" in _codes(result)
    assert result.exit_code == 1
    again = _run(tmp_path, {})  # the class file is now part of the repo: nothing new, workload already backed
    assert again.exit_code == 0 and "DRA615" in _codes(again) and "DRA614" in _codes(again)


def test_gpu_class_not_emitted_by_default_and_conflict_explained(tmp_path: Path) -> None:
    pod = POD.format(name="p", extra="", resource="nvidia.com/gpu")
    result = _run(tmp_path, {"a.yaml": pod})
    assert "DRA612" in _codes(result) and not (tmp_path / "dra-deviceclasses.yaml").exists()
    assert result.exit_code == 0
    result = _run(tmp_path, {}, bridge_emit_gpu_class=True)
    assert "DRA613" in _codes(result)
    cls = yaml.safe_load((tmp_path / "dra-deviceclasses.yaml").read_text())
    assert cls["metadata"]["name"] == "gpu-extended.nvidia.com"


def test_verdicts_name_what_bridge_cannot_carry(tmp_path: Path) -> None:
    selector = "  nodeSelector:\n    nvidia.com/gpu.product: NVIDIA-A100-SXM4-40GB\n"
    single = "  nodeSelector:\n    nvidia.com/mig.strategy: single\n"
    files = {
        "a.yaml": POD.format(name="model", extra=selector, resource="nvidia.com/gpu"),
        "b.yaml": POD.format(name="shared", extra="", resource="nvidia.com/gpu.shared"),
        "c.yaml": POD.format(name="single", extra=single, resource="nvidia.com/gpu"),
    }
    result = _run(tmp_path, files, mode="check")
    messages = {d.object: d.message for d in result.all_diagnostics if d.code == "DRA611"}
    assert "nvidia.com/gpu.product" in messages["Pod/model"]
    assert "shared GPU" in messages["Pod/shared"]
    assert "MIG single strategy" in messages["Pod/single"]


def test_old_targets_refuse_and_write_nothing(tmp_path: Path) -> None:
    pod = POD.format(name="p", extra="", resource="nvidia.com/mig-1g.5gb")
    for target, code in (("1.33", "DRA605"), ("1.34", "DRA606")):
        result = _run(tmp_path, {"a.yaml": pod}, target=target)
        assert code in _codes(result) and result.exit_code == 2
        assert not (tmp_path / "dra-deviceclasses.yaml").exists()
    result = _run(tmp_path, {"a.yaml": pod}, target="1.34", feature_gates={"DRAExtendedResource": True})
    assert result.exit_code == 1 and "DRA609" in _codes(result)


def test_destination(tmp_path: Path) -> None:
    f = tmp_path / "x.yaml"
    f.write_text("")
    assert classes_destination(RunConfig([str(f)])) == tmp_path / "dra-deviceclasses.yaml"
    assert classes_destination(RunConfig([str(tmp_path)], claims_out=tmp_path / "out")) == (
        tmp_path / "out" / "dra-deviceclasses.yaml"
    )
    assert classes_destination(RunConfig([str(tmp_path)], claims_out=tmp_path / "c.yaml")) == tmp_path / "c.yaml"


def test_prepass_reads_device_classes_only() -> None:
    text = b"""apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: mine}
spec: {extendedResourceName: nvidia.com/gpu}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: extendedResourceName}
data: {extendedResourceName: nvidia.com/mig-1g.5gb}
"""
    assert scan_raw(text) == {"nvidia.com/gpu": "mine"}
    assert scan_raw(b"kind: DeviceClass\n") == {}
    assert scan_raw(b"extendedResourceName: [\n") == {}  # broken YAML is the main pass's business
    assert extended_resource_classes([{"kind": "List", "items": [yaml.safe_load(text.split(b"---")[0])]}]) == {
        "nvidia.com/gpu": "mine"
    }


def test_rewrite_mode_leaves_dra_backed_workloads(tmp_path: Path) -> None:
    cls = (
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: g}\n"
        "spec:\n  extendedResourceName: nvidia.com/gpu\n"
    )
    pod = POD.format(name="p", extra="", resource="nvidia.com/gpu")
    (tmp_path / "cls.yaml").write_text(cls)
    (tmp_path / "pod.yaml").write_text(pod)
    result = run_migration(RunConfig([str(tmp_path)], options=Options()))
    assert (tmp_path / "pod.yaml").read_text() == pod
    assert [d.object for d in result.all_diagnostics if d.code == "DRA614"] == ["Pod/p"]


def test_a_class_file_that_cannot_be_read_is_an_error_not_a_traceback_nor_a_new_file(tmp_path: Path) -> None:
    """The DeviceClass file goes through the run's one path for files of new objects (run.writes.
    settle_new_objects): planned, checked, then written; a file it cannot read or write is reported (before, an
    unreadable one raised out of the run) and not counted as created."""
    pod = POD.format(name="p", extra="", resource="nvidia.com/mig-1g.5gb")
    (tmp_path / "dra-deviceclasses.yaml").mkdir()  # where the class file goes: a directory, so no write succeeds
    result = _run(tmp_path, {"a.yaml": pod})
    assert result.new_files == {}
    assert "DRA106" in _codes(result) or "DRA111" in _codes(result)
    assert result.exit_code == 2


def test_a_class_file_whose_existing_content_would_change_is_left_untouched(tmp_path: Path) -> None:
    existing = "# DeviceClasses of this repository\n---\n"  # kept byte for byte: the new class is appended
    (tmp_path / "dra-deviceclasses.yaml").write_text(existing)
    pod = POD.format(name="p", extra="", resource="nvidia.com/mig-1g.5gb")
    result = _run(tmp_path, {"a.yaml": pod}, mode="check")
    created = result.new_files[str(tmp_path / "dra-deviceclasses.yaml")]
    assert created.startswith(existing.encode())
    assert "DRA901" not in _codes(result)
