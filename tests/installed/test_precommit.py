"""The pre-commit hooks (.pre-commit-hooks.yaml) through the real pre-commit, which installs the package with a
plain `pip install` as every user's pre-commit does: `try-repo` (a new install per call, so twice here) and
`pre-commit run` with a config naming this repository (one install for the session)."""

from __future__ import annotations

from pathlib import Path

from tests.installed import userrepo
from tests.installed.conftest import HookRepo, assert_no_crash, git
from tests.integration_helpers import GPU_POD, PLAIN


def test_try_repo_fixer_then_check(hook_repo: HookRepo, scratch_repo: Path) -> None:
    work = scratch_repo
    (work / "gpu.yaml").write_text(GPU_POD)
    (work / "plain.yaml").write_text(PLAIN)
    (work / "check.yaml").write_text(GPU_POD)
    git(work, "add", "gpu.yaml", "plain.yaml", "check.yaml")

    # 1. the check hook fails and writes nothing
    first = hook_repo.run(work, "dra-migrate-check", "--files", "check.yaml", "plain.yaml")
    assert first.returncode == 1, first.stdout + first.stderr
    assert (work / "check.yaml").read_text() == GPU_POD
    assert "Failed" in first.stdout

    # 2. the fixer fails because it rewrote the file ...
    second = hook_repo.run(work, "dra-migrate", "--files", "gpu.yaml", "plain.yaml")
    assert second.returncode == 1, second.stdout + second.stderr
    migrated = (work / "gpu.yaml").read_text()
    assert "nvidia.com/gpu:" not in migrated  # the limit is gone (the toleration's `key: nvidia.com/gpu` stays)
    assert "resourceClaimTemplateName" in migrated and "kind: ResourceClaimTemplate" in migrated
    assert (work / "plain.yaml").read_text() == PLAIN

    # 3. ... and passes on the rewritten file
    third = hook_repo.run(work, "dra-migrate", "--files", "gpu.yaml", "plain.yaml")
    assert third.returncode == 0, third.stdout + third.stderr
    assert (work / "gpu.yaml").read_text() == migrated


def test_try_repo_runs_both_hooks_on_a_repository_with_gitignore_sharing_config_and_json(
    hook_repo: HookRepo, scratch_repo: Path
) -> None:
    """The issue #18 failures of an installed copy: pathspec (the .gitignore) and the sharing schema (the
    time-slicing config). try-repo runs every hook of the repository."""
    work = scratch_repo
    userrepo.write(work)
    git(work, "add", "-A")
    before = userrepo.snapshot(work)

    both = hook_repo.try_repo(work, "--all-files")
    assert_no_crash(both)
    assert both.returncode == 1, both.stdout + both.stderr
    results = {line.split(".", 1)[0]: line.rsplit(".", 1)[-1] for line in both.stdout.splitlines() if "...." in line}
    # in .pre-commit-hooks.yaml order: the fixer rewrites, then the check hook passes on what it wrote
    assert results == {"dra-migrate (NVIDIA device plugin → DRA)": "Failed", "dra-migrate check (read-only)": "Passed"}
    after = userrepo.snapshot(work)
    for rel in userrepo.CHANGED:
        assert after[rel] != before[rel], rel
        assert "nvidia.com/gpu: 1" not in after[rel] and '"nvidia.com/gpu": 1' not in after[rel], rel  # limits
    for rel in userrepo.UNCHANGED:
        assert after[rel] == before[rel], rel
    assert "train-shared-gpu" in after["apps/train.yaml"]  # the time-slicing config applied


def test_check_hook_then_fixer_then_both_pass(hook_repo: HookRepo, scratch_repo: Path) -> None:
    work = scratch_repo
    userrepo.write(work)
    git(work, "add", "-A")
    before = userrepo.snapshot(work)
    check = hook_repo.run(work, "dra-migrate-check", "--all-files")
    assert_no_crash(check)
    assert check.returncode == 1, check.stdout + check.stderr
    assert userrepo.snapshot(work) == before
    fix = hook_repo.run(work, "dra-migrate", "--all-files")
    assert_no_crash(fix)
    assert fix.returncode == 1, fix.stdout + fix.stderr
    migrated = userrepo.snapshot(work)
    git(work, "add", "-A")
    for hook in ("dra-migrate", "dra-migrate-check"):
        again = hook_repo.run(work, hook, "--all-files")
        assert_no_crash(again)
        assert again.returncode == 0, again.stdout + again.stderr
    assert userrepo.snapshot(work) == migrated


def test_a_staged_workload_uses_the_repositorys_time_slicing_config(hook_repo: HookRepo,
                                                                     scratch_repo: Path) -> None:
    """Only apps/train.yaml is staged; the committed time-slicing ConfigMap still decides how it is migrated,
    exactly as `migrate` on the whole repository would."""
    work = scratch_repo
    userrepo.write(work, {k: v for k, v in userrepo.FILES.items() if k != "apps/train.yaml"})
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "platform")
    userrepo.write(work, {"apps/train.yaml": userrepo.TRAIN})
    git(work, "add", "apps/train.yaml")

    fix = hook_repo.try_repo(work, "dra-migrate")  # the staged files
    assert_no_crash(fix)
    assert fix.returncode == 1, fix.stdout + fix.stderr
    migrated = (work / "apps/train.yaml").read_text()
    assert "train-shared-gpu" in migrated, migrated
    assert "TimeSlicing" in migrated, migrated
