"""The pre-commit hooks end to end with the real `pre-commit try-repo` (it builds a venv and pip-installs this
repository at HEAD, so this needs PyPI; CI has it). One shared PRE_COMMIT_HOME keeps it to one install."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO

GPU_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: trainer
spec:
  containers:
    - name: main
      image: busybox
      resources:
        limits:
          nvidia.com/gpu: 2
"""
PLAIN = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: b\n"


def test_hook_definitions_hit_the_fast_path() -> None:
    from dra_migrate.entry import _FAST_FLAGS

    hooks = {h["id"]: h for h in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())}
    assert set(hooks) == {"dra-migrate", "dra-migrate-check"}
    for h in hooks.values():
        argv = h["entry"].split()[1:] + list(h.get("args", []))
        assert argv[0] == "migrate"
        assert all(a in _FAST_FLAGS for a in argv[1:]), argv
        assert h["language"] == "python"
        assert h["files"] == r"\.(ya?ml|json)$"


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PRE_COMMIT"))}
    env.update(
        PRE_COMMIT_HOME=str(home),
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.invalid",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.invalid",
    )
    env.pop("PYTHONPATH", None)  # the hook must run the installed copy, not this checkout
    return env


def _git(cwd: Path, *args: str, env: dict[str, str]) -> None:
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


def _try_repo(
    cwd: Path, hook: str, files: list[str], env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "pre_commit", "try-repo", str(REPO), hook, "--files", *files]
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_try_repo_fixer_then_check(tmp_path: Path) -> None:
    pytest.importorskip("pre_commit")
    if subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True).returncode != 0:
        pytest.skip("the repository has no commit for try-repo to clone")
    env = _env(tmp_path / "pre-commit-home")
    work = tmp_path / "work"
    work.mkdir()
    _git(work, "init", "-q", env=env)
    (work / "gpu.yaml").write_text(GPU_POD)
    (work / "plain.yaml").write_text(PLAIN)
    (work / "check.yaml").write_text(GPU_POD)
    _git(work, "add", "gpu.yaml", "plain.yaml", "check.yaml", env=env)

    # 1. the check hook fails and writes nothing
    first = _try_repo(work, "dra-migrate-check", ["check.yaml", "plain.yaml"], env)
    assert first.returncode == 1, first.stdout + first.stderr
    assert (work / "check.yaml").read_text() == GPU_POD
    assert "Failed" in first.stdout

    # 2. the fixer fails because it rewrote the file ...
    second = _try_repo(work, "dra-migrate", ["gpu.yaml", "plain.yaml"], env)
    assert second.returncode == 1, second.stdout + second.stderr
    migrated = (work / "gpu.yaml").read_text()
    assert "nvidia.com/gpu:" not in migrated  # the limit is gone (the toleration's `key: nvidia.com/gpu` stays)
    assert "resourceClaimTemplateName" in migrated and "kind: ResourceClaimTemplate" in migrated
    assert (work / "plain.yaml").read_text() == PLAIN

    # 3. ... and passes on the rewritten file
    third = _try_repo(work, "dra-migrate", ["gpu.yaml", "plain.yaml"], env)
    assert third.returncode == 0, third.stdout + third.stderr
    assert (work / "gpu.yaml").read_text() == migrated
