"""The GitHub Action (action.yml): its run step executed by bash as the runner does, against the installed
console script; the metadata validated against the published schema; the example workflow linted."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO
from tests.installed import userrepo
from tests.installed.conftest import Installed, assert_no_crash, clean_env, unavailable

ACTION = REPO / "action.yml"
WORKFLOWS = sorted((REPO / "examples" / ".github" / "workflows").glob("*.y*ml"))
SYSTEM_PATH = ("/usr/local/bin", "/usr/bin", "/bin")


def _steps() -> dict[str, dict[str, object]]:
    action = yaml.safe_load(ACTION.read_text())
    return {str(s.get("name") or s.get("uses")): s for s in action["runs"]["steps"]}


def run_step(tmp_path: Path, mode: str, bin_dirs: list[Path], paths: str = ".", args: str = "",
             sarif: str = "dra-migrate.sarif") -> tuple[subprocess.CompletedProcess[str], dict[str, str]]:
    """The "Run dra-migrate" step, as a composite action runs a `shell: bash` step; its exit code and outputs."""
    step = _steps()["Run dra-migrate"]
    assert step["shell"] == "bash"
    script = tmp_path.parent / f"step-{tmp_path.name}.sh"
    script.write_text(str(step["run"]))
    out = tmp_path.parent / f"github-output-{tmp_path.name}"
    out.write_text("")
    runner_temp = tmp_path.parent / "runner-temp"
    runner_temp.mkdir(exist_ok=True)
    env = clean_env()
    env.update(PATH=":".join([*map(str, bin_dirs), *SYSTEM_PATH]), GITHUB_OUTPUT=str(out),
               RUNNER_TEMP=str(runner_temp), GITHUB_ACTION_PATH=str(REPO), GITHUB_WORKSPACE=str(tmp_path),
               INPUT_PATHS=paths, INPUT_MODE=mode, INPUT_ARGS=args, INPUT_SARIF=sarif)
    env.pop("CI", None)
    proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=300)
    outputs = dict(line.split("=", 1) for line in out.read_text().splitlines() if "=" in line)
    return proc, outputs


@pytest.fixture
def gpu_repo(tmp_path: Path) -> Path:
    userrepo.write(tmp_path)
    return tmp_path


def _sarif(repo: Path) -> dict[str, object]:
    data = json.loads((repo / "dra-migrate.sarif").read_text())
    assert data["version"] == "2.1.0"
    return data


def test_check_mode_fails_when_manifests_would_change(installed: Installed, gpu_repo: Path) -> None:
    before = userrepo.snapshot(gpu_repo)
    proc, outputs = run_step(gpu_repo, "check", [installed.bin])
    assert_no_crash(proc)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert outputs == {"exit-code": "1", "sarif": "true"}
    assert "::error title=dra-migrate::manifests would change" in proc.stdout
    assert userrepo.snapshot(gpu_repo) == before
    assert _sarif(gpu_repo)["runs"]


def test_check_mode_passes_on_a_migrated_tree(installed: Installed, gpu_repo: Path) -> None:
    proc, outputs = run_step(gpu_repo, "write", [installed.bin])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert outputs["exit-code"] == "1"
    proc, outputs = run_step(gpu_repo, "check", [installed.bin])
    assert_no_crash(proc)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert outputs == {"exit-code": "0", "sarif": "true"}


def test_diff_mode_reports_and_writes_nothing(installed: Installed, gpu_repo: Path) -> None:
    before = userrepo.snapshot(gpu_repo)
    proc, outputs = run_step(gpu_repo, "diff", [installed.bin])
    assert_no_crash(proc)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert outputs == {"exit-code": "1", "sarif": "true"}
    assert userrepo.snapshot(gpu_repo) == before


def test_write_mode_migrates(installed: Installed, gpu_repo: Path) -> None:
    before = userrepo.snapshot(gpu_repo)
    proc, outputs = run_step(gpu_repo, "write", [installed.bin], args="--target-version 1.33")
    assert_no_crash(proc)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert outputs == {"exit-code": "1", "sarif": "true"}
    after = userrepo.snapshot(gpu_repo)
    assert [f for f in userrepo.FILES if after[f] != before[f]] == list(userrepo.CHANGED)
    assert userrepo.dra_api_versions(gpu_repo) == {"resource.k8s.io/v1beta2"}  # args reached the command


@pytest.mark.parametrize("mode", ["check", "diff", "write"])
def test_errors_fail_the_step_in_every_mode(installed: Installed, tmp_path: Path, mode: str) -> None:
    (tmp_path / "broken.yaml").write_text("kind: Pod\nspec: {containers: [\n  nvidia.com/gpu: 1\n")
    proc, outputs = run_step(tmp_path, mode, [installed.bin])
    assert_no_crash(proc)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert outputs["exit-code"] == "2"
    assert "::error title=dra-migrate::dra-migrate failed with exit code 2" in proc.stdout


@pytest.mark.parametrize("mode", ["check", "diff", "write"])
def test_a_missing_dra_migrate_fails_the_step(tmp_path: Path, mode: str) -> None:
    """The install step failed or another Python is first on PATH: 127, never a green check."""
    (tmp_path / "dra-migrate.sarif").write_text("{}")  # left by an earlier run: must not be uploaded
    proc, outputs = run_step(tmp_path, mode, [])
    assert proc.returncode == 127, proc.stdout + proc.stderr
    assert outputs == {"exit-code": "127"}
    assert "dra-migrate is not on PATH" in proc.stdout
    assert not (tmp_path / "dra-migrate.sarif").exists()


@pytest.mark.parametrize("code", [3, 120, 139])
def test_any_other_exit_code_fails_the_step(tmp_path: Path, code: int) -> None:
    fake = tmp_path.parent / f"fake-bin-{code}"
    fake.mkdir()
    (fake / "dra-migrate").write_text(f"#!/bin/sh\nexit {code}\n")
    (fake / "dra-migrate").chmod(0o755)
    for mode in ("check", "diff", "write"):
        proc, outputs = run_step(tmp_path, mode, [fake])
        assert proc.returncode == code, (mode, proc.stdout + proc.stderr)
        assert outputs == {"exit-code": str(code)}


def test_an_unknown_mode_fails_the_step(tmp_path: Path) -> None:
    proc, _ = run_step(tmp_path, "fix", [])
    assert proc.returncode == 2
    assert "mode must be check, diff or write" in proc.stdout


def test_the_sarif_upload_runs_after_a_failed_step_when_there_is_a_report() -> None:
    steps = _steps()
    upload = steps["Upload SARIF"]
    assert str(upload["uses"]).startswith("github/codeql-action/upload-sarif@")
    condition = str(upload["if"])
    assert "always()" in condition and "steps.run.outputs.sarif == 'true'" in condition
    run = steps["Run dra-migrate"]
    assert run["id"] == "run"
    action = yaml.safe_load(ACTION.read_text())
    assert action["outputs"]["exit-code"]["value"] == "${{ steps.run.outputs.exit-code }}"
    env = run["env"]
    assert isinstance(env, dict)
    assert {v.removeprefix("${{ inputs.").removesuffix(" }}") for v in env.values()} <= set(action["inputs"])


# -- static checks of the metadata and the example workflow (dev tools from the dev extra) --

def _tool(*names: str) -> str:
    for name in names:
        for candidate in (Path(sys.executable).parent / name, shutil.which(name)):
            if candidate and Path(candidate).exists():
                return str(candidate)
    unavailable(f"{' or '.join(names)} is not installed (pip install -e '.[dev]')")
    raise AssertionError  # unreachable


def test_action_yml_matches_the_published_github_action_schema() -> None:
    proc = subprocess.run([_tool("check-jsonschema"), "--builtin-schema", "vendor.github-actions", str(ACTION)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_schema_check_rejects_a_broken_action(tmp_path: Path) -> None:
    broken = yaml.safe_load(ACTION.read_text())
    broken["runs"]["steps"][1].pop("shell")  # a composite run step needs its shell
    bad = tmp_path / "action.yml"
    bad.write_text(yaml.safe_dump(broken))
    proc = subprocess.run([_tool("check-jsonschema"), "--builtin-schema", "vendor.github-actions", str(bad)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stdout + proc.stderr


def test_the_example_workflows_pass_actionlint() -> None:
    assert WORKFLOWS
    # rhysd's actionlint when present; otherwise jactionlint, its maintained fork that PyPI ships as a wheel
    proc = subprocess.run([_tool("actionlint", "jactionlint"), *map(str, WORKFLOWS)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_zizmor_finds_nothing_in_the_action_and_the_example_workflows() -> None:
    proc = subprocess.run([_tool("zizmor"), "--offline", "--no-progress", str(ACTION), *map(str, WORKFLOWS)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_readme_shows_the_example_workflow() -> None:
    readme = (REPO / "README.md").read_text()
    for workflow in WORKFLOWS:
        assert f"```yaml\n{workflow.read_text()}```" in readme, f"README.md must show {workflow} verbatim"
