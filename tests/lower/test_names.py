"""Names that do not depend on what was scanned: the same names for a file's objects whether the file is migrated
alone, with the files staged beside it (the pre-commit hook's command line), or with the whole repository; names
unique within every apply unit (a kustomize build, a directory), and plain everywhere else."""

from __future__ import annotations

import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from dra_migrate.lower.names import Claimant, Existing, Scopes, compose, resolve
from dra_migrate.run.driver import RunConfig, run_migration


def gpu(kind: str, name: str, namespace: str | None = None, gpus: int = 1) -> str:
    ns = f"  namespace: {namespace}\n" if namespace else ""
    return (f"apiVersion: apps/v1\nkind: {kind}\nmetadata:\n  name: {name}\n{ns}spec:\n  template:\n    spec:\n"
            f"      containers:\n        - name: main\n          image: example.com/serve:1\n"
            f"          resources:\n            limits:\n              nvidia.com/gpu: {gpus}\n")


EXISTING_TEMPLATE = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: train-gpu
spec:
  spec:
    devices:
      requests:
        - name: gpu
          exactly:
            deviceClassName: gpu.nvidia.com
"""
def appwrapper(name: str, job: str, gpus: int) -> str:
    return (f"apiVersion: workload.codeflare.dev/v1beta2\nkind: AppWrapper\nmetadata:\n  name: {name}\nspec:\n"
            f"  components:\n  - template:\n      apiVersion: batch/v1\n      kind: Job\n      metadata:\n"
            f"        name: {job}\n      spec:\n        template:\n          spec:\n            restartPolicy: Never\n"
            f"            containers:\n            - name: main\n              image: example.com/train:1\n"
            f"              resources:\n                limits:\n                  nvidia.com/gpu: {gpus}\n")


REPO_FILES = {
    # the same sample in unrelated directories: nothing to tell apart
    "samples/gemma/vllm.yaml": gpu("Deployment", "vllm-gemma-deployment"),
    "samples/llama/vllm.yaml": gpu("Deployment", "vllm-gemma-deployment", gpus=2),
    # variants of one sample in one directory: applied together, named after their files
    "samples/variants/vllm-2b.yaml": gpu("Deployment", "vllm-gemma-deployment"),
    "samples/variants/vllm-7b.yaml": gpu("Deployment", "vllm-gemma-deployment", gpus=4),
    # same-named objects of different kinds in one directory
    "apps/serve/deployment.yaml": gpu("Deployment", "serve", "prod"),
    "apps/serve/statefulset.yaml": gpu("StatefulSet", "serve", "prod"),
    "apps/serve/other-namespace.yaml": gpu("StatefulSet", "serve-statefulset", "dev"),
    # a namespace-less object collides with the same name in default
    "apps/web/web.yaml": gpu("Deployment", "web"),
    "apps/web/web-default.yaml": gpu("Deployment", "web", "default"),
    # a kustomize base in two overlays: one puts a StatefulSet of the same name in its namespace
    "kust/base/kustomization.yaml": "resources:\n  - deployment.yaml\n",
    "kust/base/deployment.yaml": gpu("Deployment", "app"),
    "kust/overlays/prod/kustomization.yaml": "namespace: prod\nresources:\n  - ../../base\n  - statefulset.yaml\n",
    "kust/overlays/prod/statefulset.yaml": gpu("StatefulSet", "app", "elsewhere"),
    "kust/overlays/dev/kustomization.yaml": "namespace: dev\nnamePrefix: dev-\nresources:\n  - ../../base\n",
    # a file in a build's directory that the build does not list: applied with its directory
    "kust/overlays/dev/standalone.yaml": gpu("Deployment", "app"),
    # an existing claim template takes its name
    "batch/existing.yaml": EXISTING_TEMPLATE,
    "batch/train.yaml": gpu("Deployment", "train"),
    # objects embedded in others are applied where those are: two AppWrappers each create a Job `train`
    "queue/aw-a.yaml": appwrapper("aw-a", "train", 1),
    "queue/aw-b.yaml": appwrapper("aw-b", "train", 2),
}
EXPECTED = {
    "samples/gemma/vllm.yaml": ["vllm-gemma-deployment-gpu"],
    "samples/llama/vllm.yaml": ["vllm-gemma-deployment-gpu"],
    "samples/variants/vllm-2b.yaml": ["vllm-gemma-deployment-vllm-2b-gpu"],
    "samples/variants/vllm-7b.yaml": ["vllm-gemma-deployment-vllm-7b-gpu"],
    # `serve-statefulset-gpu` is taken by serve-statefulset (dev) only in another namespace: no collision
    "apps/serve/deployment.yaml": ["serve-deployment-gpu"],
    "apps/serve/statefulset.yaml": ["serve-statefulset-gpu"],
    "apps/serve/other-namespace.yaml": ["serve-statefulset-gpu"],
    "apps/web/web.yaml": ["web-gpu"],  # qualified by its file's name, which the name already says
    "apps/web/web-default.yaml": ["web-default-gpu"],
    "kust/base/deployment.yaml": ["app-deployment-gpu"],
    "kust/overlays/prod/statefulset.yaml": ["app-statefulset-gpu"],
    "kust/overlays/dev/standalone.yaml": ["app-gpu"],
    "batch/train.yaml": ["train-deployment-gpu"],
    "queue/aw-a.yaml": ["train-aw-a-gpu"],
    "queue/aw-b.yaml": ["train-aw-b-gpu"],
}


def make_repo(root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    if shutil.which("git") is None or subprocess.run(["git", "init", "-q", str(root)]).returncode != 0:
        (root / ".git").mkdir()
    for rel, text in REPO_FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def template_names(root: Path) -> dict[str, list[str]]:
    """The claim templates each file's pod templates reference."""
    out: dict[str, list[str]] = {}
    for p in sorted(root.rglob("*.yaml")):
        refs = [line.split(":", 1)[1].strip() for line in p.read_text().splitlines()
                if "resourceClaimTemplateName:" in line]
        if refs:
            out[str(p.relative_to(root))] = refs
    return out


def migrate(root: Path, paths: list[str], monkeypatch: pytest.MonkeyPatch, jobs: int | None = 1) -> int:
    monkeypatch.chdir(root)
    return run_migration(RunConfig(paths, jobs=jobs)).exit_code


@pytest.fixture
def whole(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> dict[str, list[str]]:
    root = tmp_path_factory.mktemp("whole")
    make_repo(root)
    assert migrate(root, ["."], monkeypatch) == 1
    return template_names(root)


def test_whole_repository_names(whole: dict[str, list[str]]) -> None:
    assert whole == EXPECTED


@pytest.mark.parametrize("rel", sorted(EXPECTED))
def test_one_file_alone_is_named_as_in_the_whole_run(
    rel: str, whole: dict[str, list[str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_repo(tmp_path)
    assert migrate(tmp_path, [rel], monkeypatch) == 1
    assert template_names(tmp_path) == {rel: whole[rel]}


def test_the_hook_command_line_on_staged_files_names_as_the_whole_run(
    whole: dict[str, list[str]], tmp_path: Path
) -> None:
    """What pre-commit runs: `dra-migrate migrate FILE...` from the repository root, on the staged files."""
    make_repo(tmp_path)
    staged = ["kust/base/deployment.yaml", "samples/variants/vllm-7b.yaml", "apps/web/web.yaml"]
    done = subprocess.run([sys.executable, "-m", "dra_migrate", "migrate", *staged], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    assert template_names(tmp_path) == {rel: whole[rel] for rel in staged}


def test_a_subdirectory_run_names_as_the_whole_run(
    whole: dict[str, list[str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_repo(tmp_path)
    assert migrate(tmp_path, ["kust/overlays", "apps/web"], monkeypatch) == 1
    assert template_names(tmp_path) == {rel: n for rel, n in whole.items() if rel.startswith(("kust/over", "apps/web"))}


def test_jobs_2_names_as_jobs_1(whole: dict[str, list[str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(tmp_path)
    assert migrate(tmp_path, ["."], monkeypatch, jobs=2) == 1
    assert template_names(tmp_path) == whole


def test_files_migrated_one_by_one_give_the_whole_run_and_a_fixed_point(
    whole: dict[str, list[str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_repo(tmp_path)
    order = sorted(EXPECTED)
    random.Random(3).shuffle(order)
    for rel in order:  # each run sees the files before it migrated already
        assert migrate(tmp_path, [rel], monkeypatch) == 1
    assert template_names(tmp_path) == whole
    before = {p: p.read_bytes() for p in tmp_path.rglob("*.yaml")}
    assert migrate(tmp_path, ["."], monkeypatch) == 0  # a second run over the migrated repository changes nothing
    assert {p: p.read_bytes() for p in tmp_path.rglob("*.yaml")} == before


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="needs kubectl (kustomize) to build the overlays")
def test_overlays_built_after_one_file_runs_hold_distinct_templates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """kustomize refuses two objects of one kind, name and namespace: the prod build, migrated a file at a time,
    builds, and every claim template a pod references is in it."""
    make_repo(tmp_path)
    for rel in ("kust/base/deployment.yaml", "kust/overlays/prod/statefulset.yaml"):
        assert migrate(tmp_path, [rel], monkeypatch) == 1
    built = subprocess.run(["kubectl", "kustomize", str(tmp_path / "kust/overlays/prod")], capture_output=True,
                           text=True, timeout=120)
    assert built.returncode == 0, built.stderr
    docs = list(yaml.safe_load_all(built.stdout))
    templates = sorted(d["metadata"]["name"] for d in docs if d["kind"] == "ResourceClaimTemplate")
    assert templates == ["app-deployment-gpu", "app-statefulset-gpu"]
    refs = {c["resourceClaimTemplateName"] for d in docs if d["kind"] != "ResourceClaimTemplate"
            for c in d["spec"]["template"]["spec"]["resourceClaims"]}
    assert refs == set(templates)


def test_a_unit_with_one_gpu_file_is_not_parsed_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The pre-pass reads the files applied with each file the run translates, and parses them only when two
    or more may need migration."""
    from dra_migrate.run.driver import load_rules
    from dra_migrate.run.integrations import unit_names
    from dra_migrate.run.integrations.apply_units import ApplyUnits

    make_repo(tmp_path)
    rules, _problem = load_rules([])
    assert rules is not None

    def table(rel: str) -> unit_names.NameTable:
        path = str(tmp_path / rel)
        return unit_names.name_table([(rel, path, (tmp_path / rel).read_bytes())], ApplyUnits({}), rules)

    assert table("samples/gemma/vllm.yaml").parsed == 0
    assert table("batch/train.yaml").parsed == 2  # the existing claim template's file is read, then both parsed


def test_compose_never_repeats_a_word() -> None:
    assert compose("vllm-gemma-deployment", "deployment", "gpu") == "vllm-gemma-deployment-gpu"
    assert compose("mindspore-gpu", "gpu") == "mindspore-gpu"
    assert compose("vllm", "vllm-7b", "gpu") == "vllm-7b-gpu"
    long = compose("a" * 300, "worker", "gpu")
    assert len(long) == 63 and long.endswith("-worker-gpu") and long != compose("a" * 299, "worker", "gpu")
    assert compose("My_App.v2", "Worker", "gpu") == "my-app.v2-worker-gpu"


_NAMES = st.sampled_from(["a", "b", "a-b", "a-deployment"])
_KINDS = st.sampled_from(["Deployment", "StatefulSet"])
_SPACES = st.sampled_from([None, "x", "y"])
_FILES = st.sampled_from(["f.yaml", "g.yaml"])
_ROLES = st.sampled_from([(), ("b",), ("worker",)])
_UNITS = st.sampled_from([(("dir", "1"),), (("dir", "2"),), (("dir", "1"), ("dir", "2"))])


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(_NAMES, _KINDS, _SPACES, _FILES, _ROLES, _UNITS, st.booleans()), min_size=1, max_size=8),
    st.lists(st.tuples(st.sampled_from(["a-gpu", "a-deployment-gpu", "b-gpu"]), _SPACES, _UNITS), max_size=3),
    st.randoms(use_true_random=False),
)
def test_resolved_names_are_unique_where_applied_together_and_do_not_depend_on_order(
    specs: list[tuple[str, str, str | None, str, tuple[str, ...], tuple[tuple[tuple[str, str], ...]], bool]],
    taken: list[tuple[str, str | None, tuple[tuple[tuple[str, str], ...]]]],
    rnd: random.Random,
) -> None:
    def scopes(units: tuple[tuple[str, str], ...], namespace: str | None) -> Scopes:
        return tuple((u, namespace) for u in units)

    claimants = [(Claimant((i, ()), kind, name, ns, role, where, needs), scopes(units, ns))
                 for i, (name, kind, ns, where, role, units, needs) in enumerate(specs)]
    existing = [(Existing(name, ns, "e.yaml"), scopes(units, ns)) for name, ns, units in taken]
    names = dict(zip((c.key for c, _s in claimants), resolve(claimants, existing), strict=True))
    shuffled = claimants[:]
    rnd.shuffle(shuffled)
    again = dict(zip((c.key for c, _s in shuffled), resolve(shuffled, existing[::-1]), strict=True))
    assert again == names

    def together(a: Scopes, b: Scopes) -> bool:
        units = dict(a)
        return any(u in units and (ns is None or units[u] is None or ns == units[u]) for u, ns in b)

    for i, (c, s) in enumerate(claimants):
        for d, t in claimants[i + 1:]:
            if together(s, t):
                assert names[c.key][0] != names[d.key][0]
        for e, t in existing:
            if together(s, t):
                assert names[c.key][0] != e.name


@pytest.mark.parametrize("claims_out", ["claims.yaml", "claims"])
def test_templates_going_to_one_claims_file_have_distinct_names(
    claims_out: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A claims file is applied as one: the same sample in unrelated directories (`vllm-gemma-deployment-gpu`
    in each) must not put two templates of one name in it. A later run on one file avoids what it holds."""
    make_repo(tmp_path)
    monkeypatch.chdir(tmp_path)
    result = run_migration(RunConfig(["samples", "apps/web/web.yaml"], claims_out=Path(claims_out), jobs=1))
    assert result.exit_code == 1, [d.render() for d in result.all_diagnostics if d.severity.name == "ERROR"]
    docs = [d for p in sorted(tmp_path.glob("claims*")) for d in
            ([*yaml.safe_load_all(p.read_text())] if p.is_file() else
             [x for q in sorted(p.iterdir()) for x in yaml.safe_load_all(q.read_text())])]
    keys = [(d["metadata"].get("namespace"), d["metadata"]["name"]) for d in docs]
    assert len(keys) == len(set(keys)) == 5
    counts = {d["metadata"]["name"]: d["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"] for d in docs}
    for rel, names in template_names(tmp_path).items():
        wanted = yaml.safe_load((tmp_path / rel).read_text().split("\n---")[0])
        gpus = {"samples/llama/vllm.yaml": 2, "samples/variants/vllm-7b.yaml": 4}.get(rel, 1)
        assert [counts[n] for n in names] == [gpus], (rel, wanted["metadata"]["name"])
    (tmp_path / "samples/gemma/vllm.yaml").write_text(REPO_FILES["samples/gemma/vllm.yaml"])  # migrated again
    again = run_migration(RunConfig(["samples/gemma/vllm.yaml"], claims_out=Path(claims_out), jobs=1))
    assert again.exit_code == 1, [d.render() for d in again.all_diagnostics if d.severity.name == "ERROR"]


def test_a_claims_file_never_holds_two_objects_of_one_name(tmp_path: Path) -> None:
    from dra_migrate.emit.claims_file import ClaimsFileError, claims_files

    a = {"kind": "ResourceClaimTemplate", "metadata": {"name": "x-gpu"}, "spec": {"n": 1}}
    b = {"kind": "ResourceClaimTemplate", "metadata": {"name": "x-gpu"}, "spec": {"n": 2}}
    assert claims_files(tmp_path / "c.yaml", [("a.yaml", a), ("b.yaml", a)])  # the same object once
    with pytest.raises(ClaimsFileError) as err:
        claims_files(tmp_path / "c.yaml", [("a.yaml", a), ("b.yaml", b)])
    assert err.value.code == "DRA901" and "twice" in err.value.message


def test_files_whose_names_may_depend_on_their_neighbours_wait_for_the_pre_pass(
    whole: dict[str, list[str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Translation starts while the run still reads, before the pre-pass names anything. Files of one directory
    whose names may depend on each other wait for it (and go to the workers with their names): only a name that
    depends on a file elsewhere in a kustomize build sends a file back to the main process."""
    from dra_migrate.perf import parallel

    monkeypatch.setattr(parallel, "default_jobs", lambda: 2)
    monkeypatch.setattr(parallel, "LARGE_WALK", 0)
    again: list[str] = []
    serial = parallel.Processor._serial
    monkeypatch.setattr(parallel.Processor, "_serial",
                        lambda self, display, *a: (again.append(display), serial(self, display, *a))[1])
    make_repo(tmp_path)
    assert migrate(tmp_path, ["."], monkeypatch, jobs=None) == 1
    assert template_names(tmp_path) == whole
    assert again and all(d.startswith("kust/") for d in again)
