"""The output contract (README "Usage"), through the console script of this environment: what stdout carries,
what stderr names, how runs are counted, and what `plan`, `pr` and `explain` read from the configuration."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from tests.conftest import REPO
from tests.integration_helpers import GPU_DEPLOYMENT
from tests.run.test_repo_context import PLAIN, TIME_SLICING

CLI = str(Path(sys.executable).with_name("dra-migrate"))
GPU_POD = (
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: trainer\nspec:\n  containers:\n  - name: main\n"
    "    image: busybox\n    resources:\n      limits:\n        nvidia.com/gpu: 2\n"
)
GPU_JSON = json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "j"}, "spec": {"containers": [
    {"name": "c", "image": "x", "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}, indent=2) + "\n"
SHARED = GPU_DEPLOYMENT.replace("name: web", "name: shared")


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DRA_MIGRATE_", "GIT_"))}
    env.update(GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.invalid", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@example.invalid")
    env.update(extra or {})
    return env


def run(cwd: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CLI, *args], cwd=cwd, env=_env(), input=stdin, capture_output=True, text=True,
                          timeout=300)


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env=_env(), capture_output=True, text=True, check=True).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository with a .gitignore, a time-slicing config, JSON and plain manifests."""
    if shutil.which("git") is None:
        pytest.skip("needs git")
    r = tmp_path / "repo"
    files = {
        ".gitignore": "build/\n",
        "infra/time-slicing.yaml": TIME_SLICING,
        "apps/train.yaml": GPU_POD,
        "apps/web/pod.json": GPU_JSON,
        "apps/plain.yaml": PLAIN,
        "build/generated.yaml": GPU_POD,
    }
    for name, text in files.items():
        (r / name).parent.mkdir(parents=True, exist_ok=True)
        (r / name).write_text(text)
    git(r, "init", "-q", "-b", "main")
    git(r, "add", "-A")
    git(r, "commit", "-q", "-m", "init")
    return r


def _snapshot(d: Path) -> dict[str, bytes]:
    return {str(p.relative_to(d)): p.read_bytes() for p in d.rglob("*") if p.is_file() and ".git" not in p.parts}


def test_check_in_a_repository_names_every_file_that_would_change(repo: Path) -> None:
    before = _snapshot(repo)
    res = run(repo, "migrate", ".", "--check")
    assert res.returncode == 1, res.stderr
    assert "Traceback" not in res.stderr and "DRA902" not in res.stderr
    assert _snapshot(repo) == before
    named = {line.split(" ", 2)[2] for line in res.stderr.splitlines() if line.startswith("would ")}
    written = run(repo, "migrate", ".")
    assert written.returncode == 1
    after = _snapshot(repo)
    changed = {p for p in after if after[p] != before.get(p)}
    assert named == changed and {"apps/train.yaml", "apps/web/pod.json"} <= changed
    assert "build/generated.yaml" not in changed  # .gitignore'd
    assert {line.split(" ", 1)[1] for line in written.stderr.splitlines()
            if line.startswith(("migrated ", "created "))} == changed


def test_diff_with_json_prints_one_json_document_carrying_the_diffs(repo: Path) -> None:
    res = run(repo, "migrate", ".", "--diff", "--format", "json", "--claims-out", "apps/claims.yaml")
    doc = json.loads(res.stdout)  # the whole of stdout
    jsonschema.validate(doc, json.loads((REPO / "schemas" / "report.schema.json").read_text()))
    by_path = {f["path"]: f for f in doc["files"]}
    assert by_path["apps/train.yaml"]["diff"].startswith("--- a/apps/train.yaml\n+++ b/apps/train.yaml\n")
    assert "+  resourceClaims:" in by_path["apps/train.yaml"]["diff"]
    assert [c["path"] for c in doc["created"]] == ["apps/claims.yaml"]
    assert doc["created"][0]["diff"].startswith("--- a/apps/claims.yaml\n")
    assert "would migrate apps/train.yaml" in res.stderr
    assert res.returncode == doc["summary"]["exitCode"] == 1


@pytest.mark.parametrize("fmt", ["sarif", "github"])
def test_other_documents_keep_stdout_to_themselves(repo: Path, fmt: str) -> None:
    res = run(repo, "migrate", ".", "--diff", "--format", fmt, "--target-version", "1.33")
    assert "--- a/apps/train.yaml" in res.stderr and "--- a/" not in res.stdout
    if fmt == "sarif":
        json.loads(res.stdout)
    else:
        assert all(line.startswith("::") for line in res.stdout.splitlines())


def test_every_sarif_result_has_a_physical_location(repo: Path) -> None:
    (repo / ".dra-migrate.yaml").write_text("target-version: '1.33'\nfeature-gates: DRAExtendedResource=true\n")
    res = run(repo, "migrate", ".", "--check", "--format", "sarif", "-v")
    log = json.loads(res.stdout)
    schema = json.loads((REPO / "schemas" / "sarif-2.1.0.schema.json").read_text())
    jsonschema.Draft4Validator(schema, format_checker=jsonschema.FormatChecker()).validate(log)
    results = log["runs"][0]["results"]
    assert results and all(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results)
    run_level = [r for r in results if r["ruleId"] in ("DRA604", "DRA608")]
    assert {r["ruleId"] for r in run_level} == {"DRA604", "DRA608"}  # findings about the run as a whole...
    for r in run_level:  # ...attach to the configuration file
        assert r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == ".dra-migrate.yaml"
    (repo / ".dra-migrate.yaml").unlink()
    res = run(repo, "migrate", "apps/train.yaml", "--check", "--format", "sarif", "--target-version", "1.33")
    dra604 = next(r for r in json.loads(res.stdout)["runs"][0]["results"] if r["ruleId"] == "DRA604")
    assert dra604["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "apps/train.yaml"


def test_github_annotations_never_name_a_pseudo_file(repo: Path) -> None:
    res = run(repo, "migrate", ".", "--check", "--format", "github", "--target-version", "1.33", "-v")
    assert "::warning " in res.stdout and "title=DRA604" in res.stdout
    assert "file=<" not in res.stdout and "file=%3C" not in res.stdout


def test_stdin_is_a_filter(tmp_path: Path) -> None:
    res = run(tmp_path, "migrate", "-", stdin=GPU_POD)
    assert res.returncode == 0 and "kind: ResourceClaimTemplate" in res.stdout and res.stdout.startswith("apiVersion")
    assert "0 with GPU keys" not in res.stderr and "would migrate" not in res.stderr
    check = run(tmp_path, "migrate", "-", "--check", stdin=GPU_POD)
    assert check.returncode == 1 and check.stdout == "" and "would migrate <stdin>" in check.stderr
    diff = run(tmp_path, "migrate", "-", "--diff", stdin=GPU_POD)
    assert diff.stdout.startswith("--- a/<stdin>\n+++ b/<stdin>\n") and "+kind: ResourceClaimTemplate" in diff.stdout
    plain = run(tmp_path, "migrate", "-", stdin=PLAIN)
    assert plain.returncode == 0 and plain.stdout == PLAIN
    assert "1 file(s) scanned, 0 with GPU keys" in plain.stderr
    mixed = run(tmp_path, "migrate", "-", "x.yaml", stdin=PLAIN)
    assert mixed.returncode == 2 and mixed.stderr.count("\n") == 1 and mixed.stderr.startswith("error: ")


def _json_values(text: str) -> list[object]:
    decoder, out, rest = json.JSONDecoder(), [], text.lstrip()
    while rest:
        value, end = decoder.raw_decode(rest)
        out.append(value)
        rest = rest[end:].lstrip()
    return out


def test_json_on_stdin_comes_out_as_json(tmp_path: Path) -> None:
    """JSON in, JSON out: the migrated object, then each new template as a JSON value (a stream kubectl reads),
    laid out as the input; no file is written for it."""
    pod = json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "trainer"}, "spec": {"containers": [
        {"name": "app", "image": "x", "resources": {"limits": {"nvidia.com/gpu": 2}}}]}}, indent=2) + "\n"
    res = run(tmp_path, "migrate", "-", stdin=pod)
    assert res.returncode == 0, res.stderr
    values = _json_values(res.stdout)
    assert [v["kind"] for v in values] == ["Pod", "ResourceClaimTemplate"]  # type: ignore[index]
    assert values[1]["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"] == 2  # type: ignore[index]
    assert "---" not in res.stdout and '\n  "kind": "ResourceClaimTemplate"' in res.stdout
    assert list(tmp_path.iterdir()) == []  # no <stdin>.dra-claims.json
    diff = run(tmp_path, "migrate", "-", "--diff", stdin=pod)
    assert diff.returncode == 1 and '+  "kind": "ResourceClaimTemplate",' in diff.stdout


def test_a_workload_file_the_kustomize_layout_refuses_counts_as_a_file_with_gpu_keys(tmp_path: Path) -> None:
    """Counting is exact: the base file a patch keeps on the device plugin has GPU keys and is left as is."""
    shutil.copytree(REPO / "golden" / "kustomize-refused-with-sibling" / "input", tmp_path / "input")
    res = run(tmp_path, "migrate", "--check", "input")
    assert res.returncode == 0, res.stderr
    assert "1 with GPU keys, 0 would change" in res.stderr and "DRA717" in res.stderr
    doc = json.loads(run(tmp_path, "migrate", "--check", "--format", "json", "input").stdout)
    assert [f["path"] for f in doc["files"]] == ["input/base/all.yaml"]
    assert not doc["files"][0]["changed"] and not doc["files"][0]["failed"]


def test_a_refused_write_counts_as_failed_and_untouched(tmp_path: Path) -> None:
    (tmp_path / "ro.yaml").write_text(GPU_POD)
    (tmp_path / "ok.yaml").write_text(GPU_POD.replace("name: trainer", "name: other"))
    os.chmod(tmp_path / "ro.yaml", stat.S_IRUSR | stat.S_IRGRP)
    try:
        res = run(tmp_path, "migrate", ".", "--format", "json")
    finally:
        os.chmod(tmp_path / "ro.yaml", stat.S_IRUSR | stat.S_IWUSR)
    doc = json.loads(res.stdout)
    assert res.returncode == 2 and (tmp_path / "ro.yaml").read_text() == GPU_POD
    files = {f["path"]: f for f in doc["files"]}
    assert files["ro.yaml"] == {"path": "ro.yaml", "changed": False, "failed": True}
    assert files["ok.yaml"]["changed"] and doc["summary"]["filesChanged"] == 1 and doc["summary"]["filesFailed"] == 1
    text = run(tmp_path, "migrate", ".", "--check")  # ro.yaml is writable again: it is all that is left
    assert "would migrate ro.yaml\n" in text.stderr and "2 with GPU keys, 1 would change" in text.stderr


def test_explain_takes_a_directory(repo: Path) -> None:
    res = run(repo, "explain", "apps")
    assert res.returncode == 0, res.stderr
    assert "file apps/train.yaml" in res.stdout and "file apps/web/pod.json" in res.stdout
    doc = json.loads(run(repo, "explain", "apps", "--format", "json").stdout)
    assert {f["file"] for f in doc["files"]} == {"apps/train.yaml", "apps/web/pod.json"}
    one = json.loads(run(repo, "explain", "apps/train.yaml", "--format", "json").stdout)
    assert one["file"] == "apps/train.yaml" and one["wouldChange"]


def test_plan_and_pr_honour_the_config_file(repo: Path) -> None:
    (repo / ".dra-migrate.yaml").write_text("target-version: '1.33'\n")
    git(repo, "add", ".dra-migrate.yaml")
    git(repo, "commit", "-q", "-m", "config")
    plan = run(repo, "plan", "apps", "--format", "json")
    assert json.loads(plan.stdout)["target"]["kubernetes"] == "1.33", plan.stderr
    pr = run(repo, "pr", "apps", "--branch", "dra/migrate", "--body-file", "../body.md")
    assert pr.returncode == 0, pr.stderr
    assert "resource.k8s.io/v1beta2" in (repo / "apps/train.yaml").read_text()  # 1.33's API
    assert "1.33" in (repo.parent / "body.md").read_text()
    head = git(repo, "rev-parse", "HEAD").strip()
    again = run(repo, "pr", "apps", "--branch", "dra/migrate")
    assert again.returncode == 0 and again.stdout == ""
    assert "up to date" in again.stderr and "no commit" in again.stderr
    assert git(repo, "rev-parse", "dra/migrate").strip() == head  # no empty commit


def test_pr_takes_the_migration_options_of_migrate(repo: Path) -> None:
    res = run(repo, "pr", "apps/train.yaml", "--branch", "x", "--sharing", "exclusive", "--target-version", "1.35",
              "--ignore", "DRA504", "--exclude", "build/*", "--report", "json=../pr.json")
    assert res.returncode == 0, res.stderr
    migrated = (repo / "apps/train.yaml").read_text()
    assert "resourceClaimTemplateName" in migrated and "shared-gpu" not in migrated  # --sharing exclusive
    assert "apps/train.yaml" in git(repo, "show", "--stat", "--format=", "HEAD")
    report = json.loads((repo.parent / "pr.json").read_text())
    assert report["target"]["kubernetes"] == "1.35"
    assert "DRA504" not in {d["code"] for d in report["diagnostics"]}  # --ignore, as for migrate
