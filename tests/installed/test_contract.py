"""The "Done when" checks of issue #18, against the installed wheel, in a git repository as users have one
(the output contract, one configuration model, `pr` on an up-to-date branch, `-` as a filter among them)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.installed import userrepo
from tests.installed.conftest import Installed, assert_no_crash, git


@pytest.fixture
def repo(scratch_repo: Path) -> Path:
    userrepo.write(scratch_repo)
    git(scratch_repo, "add", "-A")
    git(scratch_repo, "commit", "-q", "-m", "platform")
    return scratch_repo


def test_check_on_a_repository_with_gitignore_sharing_config_json_and_plain_manifests(
    installed: Installed, repo: Path
) -> None:
    before = userrepo.snapshot(repo)
    proc = installed.run(["migrate", ".", "--check", "--no-progress"], cwd=repo)
    assert_no_crash(proc)
    assert proc.returncode == 1, proc.stderr
    assert userrepo.snapshot(repo) == before
    assert "rendered/" not in proc.stdout + proc.stderr  # .gitignore'd: not walked
    assert "train-shared-gpu" in proc.stderr  # the sharing config (and its schema) was used


def test_check_names_every_file_that_would_change(installed: Installed, repo: Path) -> None:
    proc = installed.run(["migrate", ".", "--check", "--no-progress"], cwd=repo)
    for rel in userrepo.CHANGED:
        assert f"would migrate {rel}" in proc.stdout + proc.stderr


def test_write_then_check_is_clean(installed: Installed, repo: Path) -> None:
    proc = installed.run(["migrate", ".", "--no-progress"], cwd=repo)
    assert_no_crash(proc)
    assert proc.returncode == 1, proc.stderr
    after = userrepo.snapshot(repo)
    assert [f for f in userrepo.FILES if after[f] != userrepo.FILES[f]] == list(userrepo.CHANGED)
    again = installed.run(["migrate", ".", "--check", "--no-progress"], cwd=repo)
    assert_no_crash(again)
    assert again.returncode == 0, again.stderr


def test_diff_with_json_format_prints_one_json_document(installed: Installed, repo: Path) -> None:
    proc = installed.run(["migrate", ".", "--diff", "--format", "json", "--no-progress"], cwd=repo)
    assert_no_crash(proc)
    json.loads(proc.stdout)


# a feature gate setting the target refuses: a finding about the run, not about a file (DRA608)
RUN_LEVEL = ["--target-version", "1.37", "--feature-gates", "DynamicResourceAllocation=false"]


def _sarif_results(installed: Installed, repo: Path, *extra: str) -> list[dict[str, object]]:
    proc = installed.run(["migrate", ".", "--check", "--format", "sarif", "--no-progress", *extra], cwd=repo)
    assert_no_crash(proc)
    results: list[dict[str, object]] = json.loads(proc.stdout)["runs"][0]["results"]
    return results


def _located(result: dict[str, object]) -> bool:
    locations = result.get("locations")
    return isinstance(locations, list) and bool(locations) and all("physicalLocation" in x for x in locations)


def test_every_sarif_result_about_a_file_has_a_physical_location(installed: Installed, repo: Path) -> None:
    results = _sarif_results(installed, repo)
    assert len(results) > 3
    assert all(_located(r) for r in results), [r for r in results if not _located(r)]


def test_every_sarif_result_has_a_physical_location(installed: Installed, repo: Path) -> None:
    results = _sarif_results(installed, repo, *RUN_LEVEL)
    assert "DRA608" in {r["ruleId"] for r in results}
    assert all(_located(r) for r in results), [r for r in results if not _located(r)]


def test_the_github_format_never_prints_a_run_pseudo_file(installed: Installed, repo: Path) -> None:
    proc = installed.run(["migrate", ".", "--check", "--format", "github", "--no-progress", *RUN_LEVEL], cwd=repo)
    assert_no_crash(proc)
    assert "DRA608" in proc.stdout
    assert "file=<run>" not in proc.stdout


def _configure(repo: Path, target: str) -> None:
    (repo / ".dra-migrate.yaml").write_text(f'target-version: "{target}"\n')
    git(repo, "add", ".dra-migrate.yaml")
    git(repo, "commit", "-q", "-m", "config")


def test_migrate_honours_target_version_from_the_config_file(installed: Installed, repo: Path) -> None:
    _configure(repo, "1.33")
    proc = installed.run(["migrate", ".", "--no-progress"], cwd=repo)
    assert_no_crash(proc)
    assert userrepo.dra_api_versions(repo) == {"resource.k8s.io/v1beta2"}


def test_plan_honours_target_version_from_the_config_file(installed: Installed, repo: Path) -> None:
    _configure(repo, "1.33")
    proc = installed.run(["plan", ".", "--format", "json"], cwd=repo)
    assert_no_crash(proc)
    assert json.loads(proc.stdout)["target"]["kubernetes"] == "1.33"


def _pr(installed: Installed, repo: Path, body: Path) -> tuple[int, str]:
    proc = installed.run(["pr", ".", "--branch", "dra/migrate", "--body-file", str(body)], cwd=repo)
    assert_no_crash(proc)
    return proc.returncode, proc.stdout + proc.stderr


def test_pr_commits_the_migration_with_a_body_from_the_installed_template(installed: Installed, repo: Path,
                                                                         tmp_path: Path) -> None:
    code, output = _pr(installed, repo, tmp_path / "body.md")
    assert code in (0, 1), output
    assert git(repo, "rev-parse", "--abbrev-ref", "HEAD").strip() == "dra/migrate"
    changed = git(repo, "diff", "--name-only", "main", "HEAD").split()
    assert set(userrepo.CHANGED) <= set(changed), changed
    body = (tmp_path / "body.md").read_text()
    assert "apps/train.yaml" in body and "train-shared-gpu" in body


def test_pr_honours_target_version_from_the_config_file(installed: Installed, repo: Path, tmp_path: Path) -> None:
    _configure(repo, "1.33")
    _pr(installed, repo, tmp_path / "body.md")
    assert git(repo, "rev-parse", "--abbrev-ref", "HEAD").strip() == "dra/migrate"
    assert userrepo.dra_api_versions(repo) == {"resource.k8s.io/v1beta2"}


def test_a_second_pr_on_an_up_to_date_branch_exits_0_with_nothing_new(installed: Installed, repo: Path,
                                                                     tmp_path: Path) -> None:
    _pr(installed, repo, tmp_path / "first.md")
    head = git(repo, "rev-parse", "dra/migrate").strip()
    code, output = _pr(installed, repo, tmp_path / "second.md")
    assert code == 0, output
    assert git(repo, "rev-parse", "dra/migrate").strip() == head


def test_stdin_migrates_to_stdout(installed: Installed, tmp_path: Path) -> None:
    proc = installed.run(["migrate", "-"], cwd=tmp_path, stdin=userrepo.TRAIN)
    assert_no_crash(proc)
    assert "kind: ResourceClaimTemplate" in proc.stdout
    assert "nvidia.com/gpu: 1" not in proc.stdout
    assert list(tmp_path.iterdir()) == []


def test_stdin_is_a_filter_that_exits_0(installed: Installed, tmp_path: Path) -> None:
    proc = installed.run(["migrate", "-"], cwd=tmp_path, stdin=userrepo.TRAIN)
    assert proc.returncode == 0, proc.stderr
    assert "kind: ResourceClaimTemplate" in proc.stdout


@pytest.mark.parametrize("args", [["rules"], ["rules", "--kinds"], ["explain", "DRA502"],
                                  ["explain", "apps/train.yaml"], ["plan", "."]])
def test_read_only_commands_run_from_the_installed_copy(installed: Installed, repo: Path, args: list[str]) -> None:
    proc = installed.run(args, cwd=repo)
    assert_no_crash(proc)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip()
    if args == ["rules", "--kinds"]:  # rule files named as the repository names them, installed or not
        assert "rules/kinds/core.yaml:" in proc.stdout
