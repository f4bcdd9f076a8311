from pathlib import Path

import typer
from typer.testing import CliRunner

from dra_migrate.cli.cel_cmd import register


def app() -> typer.Typer:
    a = typer.Typer()
    register(a)

    @a.command("noop")
    def _noop() -> None:  # a second command keeps typer in multi-command mode, like the real app
        pass

    return a


def test_fixture_default() -> None:
    result = CliRunner().invoke(
        app(), ["cel", "device.attributes['gpu.nvidia.com'].productName == 'Tesla T4'"]
    )
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert "node-t4/gpu-0: true" in lines
    assert "node-l4/gpu-0: false" in lines


def test_compile_error_exit_2() -> None:
    result = CliRunner().invoke(app(), ["cel", "device.driver =="])
    assert result.exit_code == 2
    assert "1:15" in result.output


def test_device_and_slices(tmp_path: Path) -> None:
    dev = tmp_path / "d.yaml"
    dev.write_text("name: gpu-7\nattributes:\n  type: {string: gpu}\ncapacity:\n  memory: {value: 16Gi}\n")
    result = CliRunner().invoke(
        app(), ["cel", "device.attributes['gpu.nvidia.com'].index == 1", "--device", str(dev)]
    )
    assert result.exit_code == 0
    assert result.output.strip() == "gpu-7: error: no such key: index"
    slices = tmp_path / "s.yaml"
    slices.write_text(
        "apiVersion: resource.k8s.io/v1beta1\nkind: ResourceSlice\nmetadata: {name: s}\n"
        "spec:\n  driver: gpu.nvidia.com\n  nodeName: n1\n"
        "  pool: {name: n1, generation: 1, resourceSliceCount: 1}\n"
        "  devices:\n  - name: gpu-0\n    basic:\n      attributes: {type: {string: gpu}}\n"
        "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"
    )
    result = CliRunner().invoke(
        app(), ["cel", "device.attributes['gpu.nvidia.com'].type == 'gpu'", "--slices", str(slices)]
    )
    assert result.exit_code == 0
    assert result.output.strip() == "n1/gpu-0: true"
