"""Repository layouts: kustomize patches and resources, Helm charts, .gitignore."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from dra_migrate.integrations.kustomize import add_resource
from dra_migrate.run import RunConfig, run_migration
from tests.conftest import CORPUS, require_shared
from tests.integration_helpers import GPU_DEPLOYMENT

GKE = "GoogleCloudPlatform__kubernetes-engine-samples__ai-ml__gke-a100-jax__kubernetes__"

KUSTOMIZATION = """\
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- job.yaml
patches:
- path: job-patch.yaml
- patch: |-
    - op: add
      path: /spec/template/spec/containers/0/resources/limits/nvidia.com~1gpu
      value: 2
  target:
    kind: Job
"""
JOB = (
    "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\nspec:\n  template:\n    spec:\n"
    "      containers:\n      - name: w\n        image: x\n"
)
PATCH = JOB + "        resources:\n          limits:\n            nvidia.com/gpu: 1\n"


def _codes(result: object) -> list[tuple[str, str, int]]:
    return [(d.code, Path(d.location.file).name, d.location.line) for d in result.all_diagnostics]  # type: ignore[attr-defined]


def test_kustomize_patch_file_and_inline_patch_are_reported_not_migrated(tmp_path: Path) -> None:
    (tmp_path / "kustomization.yaml").write_text(KUSTOMIZATION)
    (tmp_path / "job.yaml").write_text(JOB)
    (tmp_path / "job-patch.yaml").write_text(PATCH)
    result = run_migration(RunConfig([str(tmp_path)]))
    assert (tmp_path / "job-patch.yaml").read_text() == PATCH  # never rewritten
    codes = _codes(result)
    assert ("DRA701", "job-patch.yaml", 13) in codes
    assert ("DRA702", "kustomization.yaml", 9) in codes
    msg = next(d.message for d in result.all_diagnostics if d.code == "DRA701")
    assert "kustomization.yaml:6" in msg  # where the patch is listed
    assert result.exit_code == 0


def test_corpus_gke_a100_kustomize_case(tmp_path: Path) -> None:
    corpus = require_shared()
    for part in ("kustomization", "job", "job-patch", "service"):
        shutil.copy(corpus / f"{GKE}{part}.yaml", tmp_path / f"{part}.yaml")
    before = (tmp_path / "job-patch.yaml").read_bytes()
    result = run_migration(RunConfig([str(tmp_path)]))
    assert (tmp_path / "job-patch.yaml").read_bytes() == before
    assert [c for c in _codes(result) if c[0] == "DRA701"] == [("DRA701", "job-patch.yaml", 30)]


def test_corpus_fixture_path_is_spelled_right() -> None:
    if CORPUS.is_dir():
        assert (CORPUS / f"{GKE}job-patch.yaml").is_file()


def test_claims_out_into_a_kustomize_base_updates_resources(tmp_path: Path) -> None:
    base = tmp_path / "base"
    base.mkdir()
    kust = "# base\nresources:\n  - deploy.yaml   # the app\nnamePrefix: x-\n"
    (base / "kustomization.yaml").write_text(kust)
    (base / "deploy.yaml").write_text(GPU_DEPLOYMENT)
    result = run_migration(RunConfig([str(base / "deploy.yaml")], claims_out=base / "gpu-claims.yaml"))
    assert (base / "gpu-claims.yaml").read_text().count("kind: ResourceClaimTemplate") == 1
    after = (base / "kustomization.yaml").read_text()
    assert after == "# base\nresources:\n  - deploy.yaml   # the app\n  - gpu-claims.yaml\nnamePrefix: x-\n"
    assert "DRA703" in [c[0] for c in _codes(result)]
    # a second run changes nothing
    again = run_migration(RunConfig([str(base / "deploy.yaml")], claims_out=base / "gpu-claims.yaml"))
    assert (base / "kustomization.yaml").read_text() == after and again.exit_code == 0


def test_add_resource_creates_the_list_and_refuses_odd_layouts(tmp_path: Path) -> None:
    k = tmp_path / "kustomization.yaml"
    k.write_text("namespace: a\n")
    old, new = add_resource(k, "c.yaml")  # type: ignore[misc]
    assert new.decode() == "namespace: a\nresources:\n  - c.yaml\n"
    k.write_text("resources: x.yaml\n")
    assert isinstance(add_resource(k, "c.yaml"), str)


def test_helm_templates_and_values_are_reported(tmp_path: Path) -> None:
    chart = tmp_path / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n")
    values = "replicaCount: 1\nresources:\n  limits:\n    nvidia.com/gpu: 1\n"
    (chart / "values.yaml").write_text(values)
    tpl = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n"
        "  template:\n    spec:\n      containers:\n      - name: a\n        resources:\n"
        '          limits:\n            "nvidia.com/gpu": {{ .Values.gpus }}\n'
        "            nvidia.com/mig-1g.5gb: 1\n"
    )
    (chart / "templates" / "deploy.yaml").write_text(tpl)
    result = run_migration(RunConfig([str(tmp_path)]))
    codes = _codes(result)
    assert ("DRA704", "deploy.yaml", 12) in codes and ("DRA704", "deploy.yaml", 13) in codes
    assert ("DRA705", "values.yaml", 4) in codes
    assert not any(c[0] in ("DRA102", "DRA108") for c in codes)
    assert (chart / "templates" / "deploy.yaml").read_text() == tpl
    assert (chart / "values.yaml").read_text() == values


def test_gitignore_prunes_walks_but_not_named_files(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("build/\n*.gen.yaml\n!keep.gen.yaml\n")
    (tmp_path / "build").mkdir()
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / ".gitignore").write_text("local.yaml\n")
    for f in ("build/a.yaml", "x.gen.yaml", "keep.gen.yaml", "sub/local.yaml", "sub/ok.yaml"):
        (tmp_path / f).write_text(GPU_DEPLOYMENT)

    def scanned(**kw: object) -> set[str]:
        res = run_migration(RunConfig([str(tmp_path)], mode="check", **kw))  # type: ignore[arg-type]
        return {str(Path(f.path).relative_to(tmp_path)) for f in res.files}

    assert scanned() == {"keep.gen.yaml", "sub/ok.yaml"}
    assert scanned(gitignore=False) == {
        "build/a.yaml",
        "x.gen.yaml",
        "keep.gen.yaml",
        "sub/local.yaml",
        "sub/ok.yaml",
    }
    named = run_migration(RunConfig([str(tmp_path / "x.gen.yaml")], mode="check"))
    assert len(named.files) == 1


def test_named_directory_is_walked_even_when_gitignored(tmp_path: Path) -> None:
    # As ripgrep does: naming an ignored directory is asking for it. The patterns that ignore the
    # directory (or one above it) do not apply inside it; every other pattern still does.
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("out/\n*.tmp.yaml\n")
    (tmp_path / "out" / "repo" / "app").mkdir(parents=True)
    (tmp_path / "out" / "repo" / "app" / ".gitignore").write_text("local.yaml\n")
    for f in ("out/repo/a.yaml", "out/repo/app/b.yaml", "out/repo/app/c.tmp.yaml", "out/repo/app/local.yaml"):
        (tmp_path / f).write_text(GPU_DEPLOYMENT)

    def scanned(arg: Path) -> set[str]:
        res = run_migration(RunConfig([str(arg)], mode="check"))
        return {Path(f.path).relative_to(tmp_path).as_posix() for f in res.files}

    assert scanned(tmp_path) == set()
    assert scanned(tmp_path / "out") == {"out/repo/a.yaml", "out/repo/app/b.yaml"}
    assert scanned(tmp_path / "out" / "repo") == {"out/repo/a.yaml", "out/repo/app/b.yaml"}


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_gitignore_matches_git_itself(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".gitignore").write_text("gen/\n*.tmp.yaml\n")
    (tmp_path / "gen").mkdir()
    (tmp_path / "gen" / "g.yaml").write_text(GPU_DEPLOYMENT)
    (tmp_path / "a.tmp.yaml").write_text(GPU_DEPLOYMENT)
    (tmp_path / "b.yaml").write_text(GPU_DEPLOYMENT)
    # nested files: one deeper .gitignore overriding a shallower one, directories without one in between
    (tmp_path / "x" / "y" / "z").mkdir(parents=True)
    (tmp_path / "x" / "y" / ".gitignore").write_text("!keep.tmp.yaml\nlocal.yaml\n")
    for f in ("x/y/keep.tmp.yaml", "x/y/local.yaml", "x/y/z/local.yaml", "x/y/z/c.yaml", "x/d.tmp.yaml"):
        (tmp_path / f).write_text(GPU_DEPLOYMENT)
    res = run_migration(RunConfig([str(tmp_path)], mode="check"))
    ours = {Path(f.path).relative_to(tmp_path).as_posix() for f in res.files}
    git = subprocess.run(
        ["git", "-C", str(tmp_path), "ls-files", "--others", "--exclude-standard"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert ours == {f for f in git if f.endswith(".yaml")} == {"b.yaml", "x/y/keep.tmp.yaml", "x/y/z/c.yaml"}


def test_chart_templates_are_recognised_through_links_and_only_beside_a_chart(tmp_path: Path) -> None:
    from dra_migrate.discover import real_dir
    from dra_migrate.source.reader import is_helm_template_path

    chart = tmp_path / "chart"
    (chart / "templates" / "sub").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n")
    (tmp_path / "other" / "templates").mkdir(parents=True)  # a templates/ directory of no chart
    (tmp_path / "link").symlink_to(chart / "templates" / "sub")  # the name says nothing, the target does
    real_dir.cache_clear()
    assert is_helm_template_path(chart / "templates" / "a.yaml")
    assert is_helm_template_path(str(chart / "templates" / "sub" / "a.yaml"))
    assert is_helm_template_path(tmp_path / "link" / "a.yaml")
    assert not is_helm_template_path(tmp_path / "other" / "templates" / "a.yaml")
    assert not is_helm_template_path(chart / "values.yaml")
