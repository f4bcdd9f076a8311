"""`dra-migrate pr` against a real git repository with a local bare repository as its remote."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from dra_migrate.cli.pr import PrError, PrRequest, create_pr
from tests.integration_helpers import GPU_DEPLOYMENT, cli

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

IDENTITY = {
    "GIT_AUTHOR_NAME": "Dev",
    "GIT_AUTHOR_EMAIL": "dev@example.invalid",
    "GIT_COMMITTER_NAME": "Dev",
    "GIT_COMMITTER_EMAIL": "dev@example.invalid",
}
INVALID = (
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: half\nspec:\n  containers:\n  - name: c\n"
    "    resources:\n      limits:\n        nvidia.com/gpu: 0.5\n"
)


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for k, v in IDENTITY.items():
        monkeypatch.setenv(k, v)
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    work = tmp_path / "work"
    work.mkdir()
    git(work, "init", "-q", "-b", "main")
    (work / "k8s").mkdir()
    (work / "k8s" / "web.yaml").write_text(GPU_DEPLOYMENT)
    (work / "k8s" / "half.yaml").write_text(INVALID)
    (work / "README").write_text("hi\n")
    git(work, "add", ".")
    git(work, "commit", "-q", "-m", "init")
    git(work, "remote", "add", "origin", str(remote))
    git(work, "push", "-q", "origin", "main")
    monkeypatch.chdir(work)
    return work


def test_dirty_tree_is_refused(repo: Path) -> None:
    (repo / "README").write_text("changed\n")
    with pytest.raises(PrError, match="uncommitted changes.*README"):
        create_pr(PrRequest(["k8s"], "dra/migrate"))
    assert "dra/migrate" not in git(repo, "branch")
    res = cli(["pr", "k8s", "--branch", "dra/migrate"], repo, {**os.environ, **IDENTITY})
    assert res.returncode == 2 and "--allow-dirty" in res.stderr


def test_branch_commit_body_and_push(repo: Path) -> None:
    base = git(repo, "rev-parse", "HEAD").strip()
    out = create_pr(PrRequest(["k8s"], "dra/migrate", push="origin"))
    assert git(repo, "rev-parse", "--abbrev-ref", "HEAD").strip() == "dra/migrate"
    assert git(repo, "rev-parse", "HEAD~1").strip() == base
    # commit content: only the migrated file; the invalid one is left alone and reported
    assert git(repo, "show", "--name-only", "--format=", "HEAD").split() == ["k8s/web.yaml"]
    message = git(repo, "log", "-1", "--format=%B")
    assert message.startswith("Migrate 1 GPU workload(s) from the NVIDIA device plugin to DRA\n")
    assert "- files changed: 1" in message and "- errors (files left untouched): 1" in message
    assert "kind: ResourceClaimTemplate" in (repo / "k8s" / "web.yaml").read_text()
    assert git(repo, "status", "--porcelain", "--untracked-files=no") == ""
    body = out.body
    assert (
        "| Deployment | ml/web | `k8s/web.yaml:2` | 1 | — | per-pod ResourceClaimTemplate web-gpu |" in body
    )
    assert "**error DRA203** `k8s/half.yaml:10:" in body
    assert "gpuResourcesEnabledOverride=true" in body and "not yet officially supported" in body
    assert "device plugin must be disabled" in body
    assert (
        body.index("test cluster") < body.index("real device preference") < body.index("batch and training")
    )
    # the push landed in the bare repository
    remote = repo.parent / "remote.git"
    assert git(remote, "rev-parse", "refs/heads/dra/migrate").strip() == out.commit
    assert out.pushed


def test_existing_branch_gets_what_is_left_and_nothing_to_do_is_no_commit(repo: Path) -> None:
    git(repo, "branch", "taken")  # an existing branch: the migration is added to it
    out = create_pr(PrRequest(["k8s"], "taken"))
    assert out.existed and not out.nothing_new and out.changed_files
    assert git(repo, "rev-parse", "taken").strip() == out.commit
    again = create_pr(PrRequest(["k8s"], "taken"))  # up to date: nothing new, no empty commit
    assert again.nothing_new and again.existed and again.commit == out.commit
    assert git(repo, "rev-parse", "taken").strip() == out.commit
    git(repo, "checkout", "-q", "main")
    empty = create_pr(PrRequest(["README"], "empty"))
    assert empty.nothing_new and not empty.existed
    assert git(repo, "rev-parse", "--abbrev-ref", "HEAD").strip() == "main"
    assert "empty" not in git(repo, "branch")


def test_cli_with_template_base_and_body_file(repo: Path) -> None:
    (repo / "tpl.md.j2").write_text("{{ counts.workloads }} workload(s) on {{ branch }}\n")
    git(repo, "add", "tpl.md.j2")
    git(repo, "commit", "-q", "-m", "tpl")
    res = cli(
        [
            "pr",
            "k8s/web.yaml",
            "--branch",
            "x",
            "--base",
            "main",
            "--template",
            "tpl.md.j2",
            "--body-file",
            "body.md",
            "--message",
            "Move GPUs to DRA",
        ],
        repo,
        {**os.environ, **IDENTITY},
    )
    assert res.returncode == 0, res.stderr
    assert (repo / "body.md").read_text() == "1 workload(s) on x\n"
    assert git(repo, "log", "-1", "--format=%s").strip() == "Move GPUs to DRA"
