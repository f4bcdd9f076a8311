"""A run on some files of a repository (the pre-commit hook's staged files) reads the repository's settings as a
run over all of it: its sharing configs, DeviceClasses and kustomizations, found from the repository root.
Everything runs through the console script of this environment, as the hook does."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration_helpers import time_slicing_config

CLI = str(Path(sys.executable).with_name("dra-migrate"))
pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

TIME_SLICING = time_slicing_config(4, "time-slicing-config-all", namespace=None) + """\
---
apiVersion: nvidia.com/v1
kind: ClusterPolicy
metadata:
  name: cluster-policy
spec:
  devicePlugin:
    config:
      name: time-slicing-config-all
      default: any
"""
DEVICE_CLASS = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: mig-1g-5gb.gpu.nvidia.com
spec:
  selectors:
  - cel:
      expression: "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].profile == '1g.5gb'"
  extendedResourceName: nvidia.com/mig-1g.5gb
"""
WORKLOADS = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: notebook
spec:
  replicas: 2
  selector:
    matchLabels: {app: notebook}
  template:
    metadata:
      labels: {app: notebook}
    spec:
      containers:
        - name: jupyter
          image: jupyter/base-notebook
          resources:
            limits:
              nvidia.com/gpu: 1
---
apiVersion: v1
kind: Pod
metadata:
  name: small
spec:
  containers:
    - name: jupyter
      image: jupyter/base-notebook
      resources:
        limits:
          nvidia.com/mig-1g.5gb: 1
"""
PLAIN = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: b\n"


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DRA_MIGRATE_", "GIT_"))}
    env.update(GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.invalid", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@example.invalid")
    return env


def run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CLI, *args], cwd=cwd, env=_env(), capture_output=True, text=True, timeout=300)


def make_repo(root: Path, files: dict[str, str]) -> Path:
    root.mkdir()
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True, env=_env())
    subprocess.run(["git", "add", "-A"], cwd=root, check=True, env=_env())
    return root


REPO_FILES = {
    ".gitignore": "vendor/\n",
    "time-slicing.yaml": TIME_SLICING,  # a config governs its own directory tree: here, the whole repository
    "device-classes.yaml": DEVICE_CLASS,  # a DeviceClass too: the whole repository (its directory tree)
    "apps/train/workloads.yaml": WORKLOADS,
    "apps/web/plain.json": '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "j"}}\n',
    "apps/plain.yaml": PLAIN,
    "vendor/ignored.yaml": WORKLOADS,
}


def _lines_of(stderr: str, path: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith(path + ":")]


def test_the_hook_on_one_file_translates_it_as_the_whole_repository_run(tmp_path: Path) -> None:
    whole = make_repo(tmp_path / "whole", REPO_FILES)
    hook = make_repo(tmp_path / "hook", REPO_FILES)
    target = "apps/train/workloads.yaml"
    full = run(whole, "migrate", "-v", ".")
    staged = run(hook, "migrate", "-v", target)  # the hook's command line: file names only
    assert full.returncode == staged.returncode == 1, (full.stderr, staged.stderr)
    migrated = (hook / target).read_text()
    assert migrated == (whole / target).read_text()
    assert "notebook-shared-gpu" in migrated  # the repository's time-slicing config was seen
    assert "nvidia.com/mig-1g.5gb: 1" in migrated  # served by the repository's DeviceClass: left as is
    assert _lines_of(staged.stderr, target) == _lines_of(full.stderr, target)
    assert any("DRA614" in line for line in _lines_of(staged.stderr, target))
    # what the run says about the other files is theirs: a hook run reports on the staged ones
    others = ("device-classes.yaml:", "time-slicing.yaml:")
    assert not any(line.startswith(others) for line in staged.stderr.splitlines())
    assert any(line.startswith("time-slicing.yaml:") for line in full.stderr.splitlines())
    for other in REPO_FILES:  # and the hook wrote nothing else
        if other != target:
            assert (hook / other).read_text() == REPO_FILES[other], other


def test_the_result_does_not_depend_on_the_directory_run_from_or_the_paths_named(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", REPO_FILES)
    target = repo / "apps/train/workloads.yaml"
    checks = [run(repo / "apps", "migrate", "--diff", "train/workloads.yaml"),
              run(repo, "migrate", "--diff", "apps/train"),
              run(tmp_path, "migrate", "--diff", str(target))]
    bodies = {c.stdout.split("\n", 2)[2] for c in checks}  # the diff without its file names
    assert len(bodies) == 1 and "notebook-shared-gpu" in bodies.pop()
    assert all(c.returncode == 1 for c in checks)


def test_the_config_file_marks_the_root_outside_git(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    for name, text in REPO_FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    (root / ".dra-migrate.yaml").write_text("target-version: '1.34'\n")
    res = run(tmp_path, "migrate", "--diff", str(root / "apps/train/workloads.yaml"))
    assert res.returncode == 1 and "notebook-shared-gpu" in res.stdout, res.stderr


def test_without_a_root_the_run_says_what_it_could_not_see(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    for name, text in REPO_FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    res = run(elsewhere, "migrate", "--check", str(root / "apps/train/workloads.yaml"))
    assert res.returncode == 1
    assert "warning DRA120" in res.stderr and "notebook-shared-gpu" not in res.stderr


def test_a_shared_claim_other_files_may_use_is_flagged(tmp_path: Path) -> None:
    other = WORKLOADS.replace("name: notebook", "name: trainer").replace("name: small", "name: small2")
    repo = make_repo(tmp_path / "repo", {**REPO_FILES, "apps/batch/trainer.yaml": other})
    res = run(repo, "migrate", "--check", "apps/train/workloads.yaml")
    assert res.returncode == 1
    assert "warning DRA121" in res.stderr and "dra-migrate migrate ." in res.stderr, res.stderr
    alone = run(repo, "migrate", "--check", ".")  # one run over all of them: nothing to warn about
    assert "DRA121" not in alone.stderr


def test_a_staged_kustomize_patch_is_reported_as_in_the_whole_run(tmp_path: Path) -> None:
    patch = ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n"
             "      containers:\n        - name: app\n          resources:\n            limits:\n"
             "              nvidia.com/gpu: 2\n")
    files = {
        "base/kustomization.yaml": "resources:\n  - deploy.yaml\n",
        "base/deploy.yaml": PLAIN,
        "overlays/prod/kustomization.yaml": "resources:\n  - ../../base\npatches:\n  - path: gpu-patch.yaml\n",
        "overlays/prod/gpu-patch.yaml": patch,
    }
    repo = make_repo(tmp_path / "repo", files)
    staged = run(repo, "migrate", "overlays/prod/gpu-patch.yaml")
    full = run(repo, "migrate", "--check", ".")
    assert (repo / "overlays/prod/gpu-patch.yaml").read_text() == patch  # a patch is never rewritten alone
    assert "DRA701" in staged.stderr
    name = "overlays/prod/gpu-patch.yaml"
    assert _lines_of(staged.stderr, name) == _lines_of(full.stderr, name)


def test_the_hook_on_one_file_reads_the_sharing_scopes_of_the_repository(tmp_path: Path) -> None:
    """A config elsewhere governs the workloads `sharing-scopes` (.dra-migrate.yaml at the root) maps to it."""
    files = {k: v for k, v in REPO_FILES.items() if k != "time-slicing.yaml"}
    files["infra/device-plugin/time-slicing.yaml"] = TIME_SLICING
    repo = make_repo(tmp_path / "repo", files)
    unmapped = run(repo, "migrate", "--diff", "apps/train/workloads.yaml")
    assert "DRA524" in unmapped.stderr and "notebook-shared-gpu" not in unmapped.stdout  # its own tree only
    (repo / ".dra-migrate.yaml").write_text(
        "sharing-scopes:\n  - config: infra/device-plugin/*.yaml\n    paths: ['apps/**']\n")
    staged = run(repo / "apps", "migrate", "--diff", "train/workloads.yaml")
    assert staged.returncode == 1 and "notebook-shared-gpu" in staged.stdout, staged.stderr


def test_a_device_class_serves_the_workloads_of_its_own_cluster_only(tmp_path: Path) -> None:
    """A DeviceClass mapping an extended resource is scoped like a sharing config: clusters/a's class leaves
    clusters/a's workloads on the extended resource; clusters/b's workloads are migrated."""
    files = {"clusters/a/device-classes.yaml": DEVICE_CLASS, "clusters/a/workloads.yaml": WORKLOADS,
             "clusters/b/workloads.yaml": WORKLOADS}
    repo = make_repo(tmp_path / "repo", files)
    res = run(repo, "migrate", "-v", ".")
    assert res.returncode == 1, res.stderr
    assert "nvidia.com/mig-1g.5gb: 1" in (repo / "clusters/a/workloads.yaml").read_text()
    assert "nvidia.com/mig-1g.5gb: 1" not in (repo / "clusters/b/workloads.yaml").read_text()
    assert any("DRA614" in line for line in _lines_of(res.stderr, "clusters/a/workloads.yaml"))
    assert not any("DRA614" in line for line in _lines_of(res.stderr, "clusters/b/workloads.yaml"))
