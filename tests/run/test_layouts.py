"""Repository layouts: kustomize patches and resources, Helm charts, .gitignore."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from dra_migrate.run.driver import RunConfig, run_migration
from dra_migrate.run.integrations.kustomize import add_resource
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


def test_patches_that_give_a_base_without_gpus_its_gpus_are_refused_by_name(tmp_path: Path) -> None:
    (tmp_path / "kustomization.yaml").write_text(KUSTOMIZATION)
    (tmp_path / "job.yaml").write_text(JOB)
    (tmp_path / "job-patch.yaml").write_text(PATCH)
    result = run_migration(RunConfig([str(tmp_path)]))
    assert (tmp_path / "job-patch.yaml").read_text() == PATCH  # never rewritten
    codes = _codes(result)
    assert ("DRA716", "job-patch.yaml", 13) in codes
    assert ("DRA716", "kustomization.yaml", 9) in codes
    msg = next(d.message for d in result.all_diagnostics if d.code == "DRA716")
    assert "kustomization.yaml:6" in msg  # where the patch is listed
    assert "GPUs its base does not request" in msg
    assert result.exit_code == 0


def test_patches_of_a_base_outside_the_run_stay_and_say_so(tmp_path: Path) -> None:
    base, overlay = tmp_path / "base", tmp_path / "overlay"
    base.mkdir()
    overlay.mkdir()
    (base / "kustomization.yaml").write_text("resources:\n- job.yaml\n")
    (base / "job.yaml").write_text(PATCH)
    (overlay / "kustomization.yaml").write_text("resources:\n- ../base\npatches:\n- path: p.yaml\n")
    (overlay / "p.yaml").write_text(PATCH.replace("gpu: 1", "gpu: 4"))
    result = run_migration(RunConfig([str(overlay)]))
    assert [c for c in _codes(result) if c[0].startswith("DRA7")] == [("DRA701", "p.yaml", 13)]
    assert "not migrated" in next(d.message for d in result.all_diagnostics if d.code == "DRA701")
    assert result.exit_code == 0 and (base / "job.yaml").read_text() == PATCH


def test_corpus_gke_a100_kustomize_case(tmp_path: Path) -> None:
    corpus = require_shared()
    for part in ("kustomization", "job", "job-patch", "service"):
        shutil.copy(corpus / f"{GKE}{part}.yaml", tmp_path / f"{part}.yaml")
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    result = run_migration(RunConfig([str(tmp_path)]))
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before  # refused by name, nothing written
    # the patch file gives the Job its GPU, the inline JSON 6902 patch its accelerator: both stay, by name
    assert sorted(c for c in _codes(result) if c[0].startswith("DRA7")) == [
        ("DRA716", "job-patch.yaml", 30), ("DRA716", "kustomization.yaml", 26)]


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
    assert after == ("# base\nresources:\n  - deploy.yaml   # the app\n  - gpu-claims.yaml\nnamePrefix: x-\n"
                     "configurations:\n  - dra-nameref.yaml\n")
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
    from dra_migrate.source.reader import is_helm_template_path
    from dra_migrate.source.realpaths import real_dir

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


KUSTOMIZATION_TEXT_ONLY = """\
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- job.yaml
configMapGenerator:
- name: notes
  literals:
  - HINT=request nvidia.com/gpu: 1 per worker
patches:
- patch: |-
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: mig-notes
    data:
      notes: |
        # nvidia.com/mig-1g.5gb: 1   (the old MIG request, kept for reference)
        nvidia.com/gpu: 1
  target:
    kind: ConfigMap
- patch: |-
    apiVersion: batch/v1
    kind: Job
    metadata:
      name: j
    spec:
      template:
        spec:
          containers:
          - name: w
            resources:
              limits:
                # nvidia.com/mig-1g.5gb: 1
                nvidia.com/gpu: 2  # nvidia.com/mig-2g.10gb: 1
"""


def test_kustomize_inline_patch_scan_reads_only_patch_code(tmp_path: Path) -> None:
    """Comments, block-scalar strings inside a patch and the rest of the kustomization never count as a GPU
    request: only the Job patch's `nvidia.com/gpu: 2` is reported, at its own line (DRA716: it gives the Job,
    whose base requests none, its GPU, so the build stays on the device plugin)."""
    (tmp_path / "kustomization.yaml").write_text(KUSTOMIZATION_TEXT_ONLY)
    (tmp_path / "job.yaml").write_text(JOB)
    result = run_migration(RunConfig([str(tmp_path)]))
    assert [c for c in _codes(result) if c[0].startswith("DRA7")] == [("DRA716", "kustomization.yaml", 34)]
    message = next(d.message for d in result.all_diagnostics if d.code == "DRA716")
    assert "nvidia.com/gpu" in message and "nvidia.com/mig" not in message


def test_patch_file_scan_skips_comments_and_block_scalars(tmp_path: Path) -> None:
    (tmp_path / "kustomization.yaml").write_text(KUSTOMIZATION.replace("- patch: |-", "- patch: |-\n    []\n"
                                                                       "- patch: |-", 1))
    (tmp_path / "job.yaml").write_text(JOB)
    patch = JOB + (
        "        args:\n        - |\n          nvidia.com/gpu: 8\n"
        "        # nvidia.com/mig-1g.5gb: 1\n        resources: {}\n"
    )
    (tmp_path / "job-patch.yaml").write_text(patch)
    result = run_migration(RunConfig([str(tmp_path)]))
    assert not [c for c in _codes(result) if c[0] == "DRA701"]


def test_helm_template_scan_skips_comments_and_block_scalars(tmp_path: Path) -> None:
    chart = tmp_path / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n")
    (chart / "values.yaml").write_text("notes: |\n  nvidia.com/gpu: 1\n# nvidia.com/gpu: 2\ngpus: 1\n")
    tpl = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-notes\ndata:\n"
        "  run.sh: |\n    # nvidia.com/mig-1g.5gb: 1\n    nvidia.com/gpu: {{ .Values.gpus }}\n"
        "  size: {{ .Values.size }}  # nvidia.com/gpu: 1\n"
    )
    (chart / "templates" / "notes.yaml").write_text(tpl)
    result = run_migration(RunConfig([str(tmp_path)]))
    assert not [c for c in _codes(result) if c[0] in ("DRA704", "DRA705")]


def test_build_index_names_the_builds_a_file_is_applied_in(tmp_path: Path) -> None:
    """The API other passes use (names collide only among objects applied together): the kustomize roots whose
    build includes a file, and the namespace each gives it."""
    import os

    from dra_migrate.run.integrations import kustomize
    from dra_migrate.run.integrations.kustomize_tree import BuildIndex

    for d, text in {"base": "resources:\n- job.yaml\n",
                    "overlays/a": "namespace: team-a\nresources:\n- ../../base\n",
                    "overlays/b": "resources:\n- ../../base\n- extra.yaml\n",
                    "other": "resources:\n- own.yaml\n"}.items():
        (tmp_path / d).mkdir(parents=True)
        (tmp_path / d / "kustomization.yaml").write_text(text)
    for f in ("base/job.yaml", "overlays/b/extra.yaml", "other/own.yaml", "loose.yaml"):
        (tmp_path / f).write_text(JOB)
    real = Path(os.path.realpath(tmp_path))
    index = BuildIndex(k for d in ("base", "overlays/a", "overlays/b", "other")
                       if (k := kustomize.load(real / d / "kustomization.yaml", d)) is not None)
    assert index.roots_of(real / "base" / "job.yaml") == {real / "overlays" / "a", real / "overlays" / "b"}
    assert index.roots_of(real / "overlays" / "b" / "extra.yaml") == {real / "overlays" / "b"}
    assert index.roots_of(real / "other" / "own.yaml") == {real / "other"}
    assert index.roots_of(real / "loose.yaml") == frozenset()
    assert index.namespace_in(real / "overlays" / "a", real / "base" / "job.yaml") == "team-a"
    assert index.namespace_in(real / "overlays" / "b", real / "base" / "job.yaml") is None


def test_a_run_on_a_base_file_refuses_it_when_an_overlay_outside_the_run_needs_an_edit(tmp_path: Path) -> None:
    """A pre-commit run on a staged base file sees the repository's overlays (read only): one whose patch would
    have to change is outside the run, so the base stays as it is, by name; a second overlay that needs no
    edit does not matter."""
    (tmp_path / ".git").mkdir()
    base, overlay = tmp_path / "base", tmp_path / "overlays" / "big"
    base.mkdir()
    overlay.mkdir(parents=True)
    (base / "kustomization.yaml").write_text("resources:\n- job.yaml\n")
    (base / "job.yaml").write_text(PATCH)
    (overlay / "kustomization.yaml").write_text("resources:\n- ../../base\npatches:\n- path: p.yaml\n")
    (overlay / "p.yaml").write_text(PATCH.replace("gpu: 1", "gpu: 4"))
    for repo_context in (False, True):
        result = run_migration(RunConfig([str(base / "job.yaml")], repo_context=repo_context,
                                         context_root=tmp_path if repo_context else None))
        codes = [c for c in _codes(result) if c[0].startswith("DRA71")]
        assert ("DRA716", "job.yaml", 13) in codes, codes
        assert (base / "job.yaml").read_text() == PATCH and (overlay / "p.yaml").read_text() == PATCH.replace(
            "gpu: 1", "gpu: 4")
    result = run_migration(RunConfig([str(tmp_path)]))  # the whole repository: carried over
    assert "DRA715" in [c[0] for c in _codes(result)]
