"""The CLI contract other tools and CI depend on: modes, exit codes, outputs, never a traceback."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import GOLDEN, REPO

GPU_POD = (GOLDEN / "multi-container" / "input.yaml").read_bytes()
BROKEN = (GOLDEN / "invalid-yaml" / "input.yaml").read_bytes()
PLAIN = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: b\n"


def cli(*args: str, cwd: Path, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run(
        [sys.executable, "-m", "dra_migrate", *args], cwd=cwd, input=stdin, capture_output=True, env=env, timeout=120
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / "apps").mkdir()
    (tmp_path / "apps" / "gpu.yaml").write_bytes(GPU_POD)
    (tmp_path / "apps" / "plain.yaml").write_bytes(PLAIN)
    (tmp_path / "notes.txt").write_text("nvidia.com/gpu: 1\n")
    return tmp_path


def test_check_reports_and_writes_nothing(repo: Path) -> None:
    r = cli("migrate", ".", "--check", cwd=repo)
    assert r.returncode == 1, r.stderr
    assert (repo / "apps" / "gpu.yaml").read_bytes() == GPU_POD
    assert b"would change" in r.stderr


def test_diff_prints_unified_diff_and_writes_nothing(repo: Path) -> None:
    r = cli("migrate", "apps", "--diff", cwd=repo)
    assert r.returncode == 1
    assert r.stdout.startswith(b"--- a/apps/gpu.yaml\n+++ b/apps/gpu.yaml\n")
    assert b"+kind: ResourceClaimTemplate" in r.stdout
    assert (repo / "apps" / "gpu.yaml").read_bytes() == GPU_POD


def test_write_in_place_then_clean(repo: Path) -> None:
    r = cli("migrate", ".", cwd=repo)
    assert r.returncode == 1, r.stderr
    out = (repo / "apps" / "gpu.yaml").read_bytes()
    assert b"nvidia.com/gpu: 2" not in out and b"resourceClaimTemplateName" in out
    assert (repo / "apps" / "plain.yaml").read_bytes() == PLAIN
    assert (repo / "notes.txt").read_text() == "nvidia.com/gpu: 1\n"  # not a manifest extension
    again = cli("migrate", ".", cwd=repo)
    assert again.returncode == 0, again.stderr
    assert (repo / "apps" / "gpu.yaml").read_bytes() == out


def test_output_dir_writes_the_migrated_tree(repo: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    r = cli("migrate", "apps", "--output-dir", str(out), cwd=repo)
    assert r.returncode == 1
    assert (repo / "apps" / "gpu.yaml").read_bytes() == GPU_POD
    assert b"ResourceClaimTemplate" in (out / "gpu.yaml").read_bytes()
    assert (out / "plain.yaml").read_bytes() == PLAIN


def test_output_dir_puts_a_json_manifests_claims_beside_its_copy(repo: Path, tmp_path: Path) -> None:
    """The sibling claims file of a JSON manifest lands next to the manifest's copy (a kustomization there lists
    it by its relative name), not at the top of --output-dir."""
    (repo / "apps" / "batch").mkdir()
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"}, "spec": {"template": {"spec": {
        "restartPolicy": "Never", "containers": [{"name": "c", "image": "x",
                                                   "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}}}
    (repo / "apps" / "batch" / "job.json").write_text(json.dumps(job, indent=2) + "\n")
    out = tmp_path / "out"
    r = cli("migrate", ".", "--output-dir", str(out), cwd=repo)
    assert r.returncode == 1, r.stderr
    claims = out / "apps" / "batch" / "job.dra-claims.json"
    assert json.loads(claims.read_text())["items"][0]["kind"] == "ResourceClaimTemplate"
    assert not (out / "job.dra-claims.json").exists() and not (repo / "apps" / "batch" / "job.dra-claims.json").exists()


def test_bad_input_exit_2_and_others_still_processed(repo: Path) -> None:
    (repo / "apps" / "broken.yaml").write_bytes(BROKEN)
    r = cli("migrate", ".", cwd=repo)
    assert r.returncode == 2
    assert b"Traceback" not in r.stderr
    assert b"apps/broken.yaml:9:15: error DRA101" in r.stderr
    assert (repo / "apps" / "broken.yaml").read_bytes() == BROKEN
    assert b"resourceClaimTemplateName" in (repo / "apps" / "gpu.yaml").read_bytes()


def test_stdin_to_stdout(tmp_path: Path) -> None:
    r = cli("migrate", "-", cwd=tmp_path, stdin=GPU_POD)
    assert r.returncode == 0  # a filter, as black and ruff: its output is the migrated text
    assert b"kind: ResourceClaimTemplate" in r.stdout
    clean = cli("migrate", "-", cwd=tmp_path, stdin=PLAIN)
    assert clean.returncode == 0 and clean.stdout == PLAIN


def test_json_report(repo: Path) -> None:
    r = cli("migrate", ".", "--check", "--format", "json", cwd=repo)
    report = json.loads(r.stdout)
    assert report["schemaVersion"] == 1
    assert report["summary"]["filesChanged"] == 1
    assert report["summary"]["exitCode"] == r.returncode == 1
    codes = {d["code"] for d in report["diagnostics"]}
    assert "DRA201" in codes
    d = next(d for d in report["diagnostics"] if d["code"] == "DRA201")
    assert d["file"] == "apps/gpu.yaml" and d["line"] > 0 and d["object"] == "Pod/two-gpu-containers"


def test_missing_path_is_an_error(tmp_path: Path) -> None:
    r = cli("migrate", "nope.yaml", cwd=tmp_path)
    assert r.returncode == 2
    assert b"DRA106" in r.stderr


def test_rules_and_explain(repo: Path) -> None:
    r = cli("rules", cwd=repo)
    assert r.returncode == 0 and b"DRA201" in r.stdout and b"DRA101" in r.stdout
    e = cli("explain", "DRA205", cwd=repo)
    assert e.returncode == 0 and b"init container" in e.stdout
    x = cli("explain", "apps/gpu.yaml", cwd=repo)
    assert x.returncode == 0
    assert b"app     trainer: nvidia.com/gpu=2" in x.stdout
    assert (repo / "apps" / "gpu.yaml").read_bytes() == GPU_POD


def test_unknown_target_version(repo: Path) -> None:
    r = cli("migrate", ".", "--target-version", "1.20", cwd=repo)
    assert r.returncode == 2
    assert b"Traceback" not in r.stderr


def test_fast_path_skips_files_without_gpu_keys(tmp_path: Path) -> None:
    """A pre-commit run on files that cannot hold a GPU request exits 0 without importing the CLI stack."""
    (tmp_path / "plain.yaml").write_bytes(PLAIN)
    code = (
        "import sys; sys.argv=['dra-migrate','migrate','--check','plain.yaml']\n"
        "import atexit\n"
        "atexit.register(lambda: print(sorted({'typer', 'dra_migrate.pipeline'} & set(sys.modules))))\n"
        "from dra_migrate import entry\n"
        "entry.main()\n"
    )
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=dict(os.environ, PYTHONPATH=str(REPO)),
                       capture_output=True)
    assert (r.returncode, r.stdout) == (0, b"[]\n"), r.stderr


def test_examples_quick_start(tmp_path: Path) -> None:
    shutil.copytree(REPO / "examples", tmp_path / "examples")
    r = cli("migrate", "examples/", "--diff", cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    assert b"+kind: ResourceClaimTemplate" in r.stdout
    assert b": error " not in r.stderr
