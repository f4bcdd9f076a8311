"""Kind rules: schema, loading, precedence, dispatch, path resolution, and coverage of the real corpus."""

from __future__ import annotations

import json
import os
import pathlib
import re
import textwrap

import jsonschema
import pytest
import yaml

from dra_migrate.diagnostics.codes import CODES
from dra_migrate.ruleset import kinds
from dra_migrate.ruleset.kinds import (
    KindRuleSet,
    RuleError,
    format_path,
    load_kind_rules,
    parse_path,
    resolve,
)

# CI lays shared/ beside the project; DRA_MIGRATE_SHARED lets a worktree elsewhere point at it.
SHARED = pathlib.Path(
    os.environ.get("DRA_MIGRATE_SHARED") or pathlib.Path(__file__).parents[2] / ".." / "shared"
)
CORPUS = SHARED / "corpus" / "visible"

GOOD_RULE = """\
kinds:
  - group: example.com
    kind: Widget
    podSpecs: [spec.template.spec]
    claimsSupport:
      minVersion: "v1.0.0"
      note: "example/widget crd.yaml@v1.0.0"
"""


def write(d: pathlib.Path, name: str, text: str) -> pathlib.Path:
    d.mkdir(parents=True, exist_ok=True)
    p = d / name
    p.write_text(textwrap.dedent(text), encoding="utf-8")
    return p


# --- built-in data ----------------------------------------------------------------------------------


def test_schema_is_valid_2020_12() -> None:
    schema = json.loads(kinds.SCHEMA_FILE.read_text())
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)


def test_builtin_rules_pass_the_schema() -> None:
    rules = load_kind_rules(validate_builtin=True)
    assert len(rules.all()) > 40
    assert {(r.group, r.kind) for r in rules.non_workloads()} >= {
        ("", "ResourceQuota"),
        ("", "LimitRange"),
        ("kueue.x-k8s.io", "ClusterQueue"),
        ("kueue.x-k8s.io", "ResourceFlavor"),
        ("karpenter.sh", "NodePool"),
    }


def test_every_claims_note_cites_a_source() -> None:
    # Each verdict on claim pass-through must be checkable: a repo path@ref or a PR/issue number.
    for rule in load_kind_rules().all():
        assert re.search(r"@|#\d+", rule.claims_note), f"{rule.source}: claimsSupport.note cites nothing"
        for entry in rule.embedded:
            if entry.claims is not None:
                assert re.search(r"@|#\d+", entry.claims[1]), f"{rule.source}: embedded claimsSupport cites nothing"


def test_every_new_family_has_a_golden_with_its_source() -> None:
    # issue #20: each kind rule added for these families is exercised by a golden copied from upstream
    from tests.conftest import GOLDEN
    from tests.golden_runner import input_files

    inputs = {c.name: "".join(f.read_bytes().decode("utf-8", "replace") for f in input_files(c))
              for c in GOLDEN.iterdir() if c.is_dir()}
    rules = load_kind_rules()
    for group, kind in [("kubeflow.org", "Experiment"), ("workload.codeflare.dev", "AppWrapper"),
                        ("workloads.x-k8s.io", "RoleBasedGroup"), ("orchestration.aibrix.ai", "StormService"),
                        ("orchestration.aibrix.ai", "RayClusterFleet"), ("inference.llmaz.io", "Service"),
                        ("workload.serving.volcano.sh", "ModelServing"), ("nvidia.com", "DynamoGraphDeployment"),
                        ("kubeflow.org", "Notebook"), ("elastic.pytorch.org", "ElasticJob")]:
        assert any(rule.group == group and rule.kind == kind for rule in rules.all()), (group, kind)
        cases = [n for n, text in inputs.items() if f"apiVersion: {group}/" in text and f"kind: {kind}\n" in text]
        assert cases, (group, kind)
        assert all((GOLDEN / n / "SOURCE").is_file() for n in cases), cases


def test_rule_sources_point_at_the_entry() -> None:
    rule = load_kind_rules().lookup("batch.volcano.sh/v1alpha1", "Job")
    assert rule is not None
    file, _, line = rule.source.rpartition(":")
    lines = pathlib.Path(file).read_text().splitlines()
    assert lines[int(line) - 1].strip() == "- group: batch.volcano.sh"


# --- dispatch -------------------------------------------------------------------------------------


def test_group_and_kind_dispatch_volcano_job_is_not_batch_job() -> None:
    rules = load_kind_rules()
    volcano = rules.lookup("batch.volcano.sh/v1alpha1", "Job")
    batch = rules.lookup("batch/v1", "Job")
    assert volcano is not None and batch is not None
    assert volcano.pod_specs == (("spec", "tasks", "*", "template", "spec"),)
    assert batch.pod_specs == (("spec", "template", "spec"),)
    assert rules.lookup("example.com/v1", "Job") is None


def test_core_group_and_legacy_groups() -> None:
    rules = load_kind_rules()
    pod = rules.lookup("v1", "Pod")
    assert pod is not None and pod.group == "" and pod.pod_specs == (("spec",),)
    cron = rules.lookup("batch/v1", "CronJob")
    assert cron is not None and cron.pod_specs == (("spec", "jobTemplate", "spec", "template", "spec"),)
    apps = rules.lookup("apps/v1", "Deployment")
    legacy = rules.lookup("apps/v1beta2", "Deployment")
    ext = rules.lookup("extensions/v1beta1", "Deployment")
    assert apps is not None and legacy is not None and ext is not None
    assert apps.claims_min_version != "unknown"
    assert legacy.claims_min_version == "unknown" and ext.claims_min_version == "unknown"
    assert rules.lookup("apps/v1", "Pod") is None


def test_version_specific_rules_for_one_kind() -> None:
    rules = load_kind_rules()
    v1 = rules.lookup("kubeflow.org/v1", "MPIJob")
    v2 = rules.lookup("kubeflow.org/v2beta1", "MPIJob")
    assert v1 is not None and v2 is not None and v1 is not v2
    assert v1.claims_min_version == "v1.9.0"  # training operator
    assert v2.claims_min_version == "v0.6.0"  # mpi-operator


def test_non_workload_lookup() -> None:
    rules = load_kind_rules()
    cq = rules.lookup_non_workload("kueue.x-k8s.io/v1beta2", "ClusterQueue")
    assert cq is not None
    assert ("spec", "resourceGroups", "*", "flavors", "*", "resources", "*") in [
        f.path for f in cq.gpu_fields
    ]
    assert rules.lookup_non_workload("v1", "ResourceQuota") is not None
    assert rules.lookup("v1", "ResourceQuota") is None


def test_ray_kinds_carry_the_num_gpus_side_effect() -> None:
    rules = load_kind_rules()
    for kind in ("RayCluster", "RayJob", "RayService"):
        rule = rules.lookup("ray.io/v1", kind)
        assert rule is not None and "ray-num-gpus" in rule.side_effects


# --- paths ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("spec", ("spec",)),
        ("spec.template.spec", ("spec", "template", "spec")),
        ("spec.a.*.b", ("spec", "a", "*", "b")),
        ("metadata.annotations.[example.com/x.y].z", ("metadata", "annotations", "example.com/x.y", "z")),
        ("[a.b]", ("a.b",)),
        ("*", ("*",)),
    ],
)
def test_parse_path(text: str, parsed: tuple[str, ...]) -> None:
    assert parse_path(text) == parsed
    assert parse_path(format_path(parsed)) == parsed


@pytest.mark.parametrize(
    "text", ["", "a..b", "a.", ".a", "a.[b", "a.[]", "a.b]", "a[b]", "a.[x]y", "a.b*", "a.[*]"]
)
def test_parse_path_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        parse_path(text)


def test_format_path_shows_indexes() -> None:
    assert format_path(("spec", "tasks", 0, "template")) == "spec.tasks[0].template"


def test_resolve_over_dicts_and_lists() -> None:
    data = {
        "spec": {
            "replicaSpecs": {
                "Master": {"template": {"spec": {"containers": [{"name": "m"}]}}},
                "Worker": {"template": {"spec": {"containers": [{"name": "w0"}, {"name": "w1"}]}}},
                "Broken": {"template": "not-a-map"},
            },
            "tasks": [{"template": {"spec": 1}}, {"other": 2}, {"template": {"spec": 3}}],
        }
    }
    got = resolve(data, parse_path("spec.replicaSpecs.*.template.spec.containers.*.name"))
    assert got == [
        (("spec", "replicaSpecs", "Master", "template", "spec", "containers", 0, "name"), "m"),
        (("spec", "replicaSpecs", "Worker", "template", "spec", "containers", 0, "name"), "w0"),
        (("spec", "replicaSpecs", "Worker", "template", "spec", "containers", 1, "name"), "w1"),
    ]
    assert resolve(data, parse_path("spec.tasks.*.template.spec")) == [
        (("spec", "tasks", 0, "template", "spec"), 1),
        (("spec", "tasks", 2, "template", "spec"), 3),
    ]
    assert resolve(data, parse_path("spec.missing.*")) == []
    # A concrete segment names a map key; it never indexes a list.
    assert resolve(data, ("spec", "tasks", "0")) == []
    assert resolve(data, ()) == [((), data)]
    assert resolve("scalar", ("a",)) == []


def test_resolve_bracketed_key() -> None:
    data = {"spec": {"sparkConf": {"spark.executor.resource.gpu.amount": "1"}}}
    path = parse_path("spec.sparkConf.[spark.executor.resource.gpu.amount]")
    assert resolve(data, path) == [(("spec", "sparkConf", "spark.executor.resource.gpu.amount"), "1")]


# --- errors with file:line ------------------------------------------------------------------------


def _error(tmp_path: pathlib.Path, text: str) -> RuleError:
    write(tmp_path / "rules", "bad.yaml", text)
    with pytest.raises(RuleError) as info:
        load_kind_rules([tmp_path / "rules"])
    err = info.value
    assert err.code == "DRA402" and err.code in CODES
    assert err.file.endswith("bad.yaml")
    assert str(err).startswith(f"{err.file}:{err.line}: ")
    return err


def test_schema_error_unknown_property_has_its_line(tmp_path: pathlib.Path) -> None:
    err = _error(tmp_path, GOOD_RULE + "  - group: example.com\n    kind: Gadget\n    podspecs: [spec]\n")
    assert err.line == 10
    assert "podspecs" in err.message


def test_schema_error_missing_claims_support_points_at_the_entry(tmp_path: pathlib.Path) -> None:
    err = _error(tmp_path, GOOD_RULE + "  - group: example.com\n    kind: Gadget\n    podSpecs: [spec]\n")
    assert err.line == 8
    assert "claimsSupport" in err.message


def test_schema_error_bad_version_value(tmp_path: pathlib.Path) -> None:
    err = _error(tmp_path, GOOD_RULE.replace('"v1.0.0"', '"latest"'))
    assert err.line == 6
    assert "minVersion" in err.message


def test_bad_path_has_its_line(tmp_path: pathlib.Path) -> None:
    err = _error(
        tmp_path, GOOD_RULE.replace("podSpecs: [spec.template.spec]", "podSpecs:\n      - spec\n      - a.b*")
    )
    assert err.line == 6


def test_invalid_yaml_has_its_line(tmp_path: pathlib.Path) -> None:
    err = _error(tmp_path, "kinds:\n  - group: a\n    kind: [unclosed\n")
    assert err.line >= 3


def test_duplicate_key_is_an_error(tmp_path: pathlib.Path) -> None:
    err = _error(tmp_path, GOOD_RULE + "    kind: Other\n")
    assert err.line == 8
    assert "duplicate" in err.message


def test_overlapping_rules_in_one_dir_are_an_error(tmp_path: pathlib.Path) -> None:
    write(tmp_path / "rules", "a.yaml", GOOD_RULE)
    err = _error(tmp_path, GOOD_RULE)
    assert "overlaps" in err.message and "a.yaml:2" in err.message


def test_disjoint_versions_in_one_dir_are_allowed(tmp_path: pathlib.Path) -> None:
    write(
        tmp_path / "rules", "a.yaml", GOOD_RULE.replace("    podSpecs:", "    versions: [v1]\n    podSpecs:")
    )
    write(
        tmp_path / "rules",
        "b.yaml",
        GOOD_RULE.replace("    podSpecs: [spec.template.spec]", "    versions: [v2]\n    podSpecs: [spec]"),
    )
    rules = load_kind_rules([tmp_path / "rules"])
    v1, v2 = rules.lookup("example.com/v1", "Widget"), rules.lookup("example.com/v2", "Widget")
    assert v1 is not None and v2 is not None
    assert v1.pod_specs == (("spec", "template", "spec"),) and v2.pod_specs == (("spec",),)
    assert rules.lookup("example.com/v3", "Widget") is None


def test_missing_rule_dir_is_an_error(tmp_path: pathlib.Path) -> None:
    with pytest.raises(RuleError):
        load_kind_rules([tmp_path / "nope"])


# --- precedence and caching -----------------------------------------------------------------------


def test_later_dirs_override_same_group_and_kind(tmp_path: pathlib.Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    write(first, "job.yaml", GOOD_RULE.replace("example.com", "batch").replace("Widget", "Job"))
    write(
        second,
        "job.yaml",
        GOOD_RULE.replace("example.com", "batch")
        .replace("Widget", "Job")
        .replace("spec.template.spec", "x.y"),
    )
    # One override replaces every built-in MPIJob rule, whatever their versions.
    write(second, "mpi.yaml", GOOD_RULE.replace("example.com", "kubeflow.org").replace("Widget", "MPIJob"))

    rules = load_kind_rules([first, second])
    job = rules.lookup("batch/v1", "Job")
    assert job is not None and job.pod_specs == (("x", "y"),) and "second" in job.source
    assert rules.lookup("batch.volcano.sh/v1alpha1", "Job") is not None  # other groups untouched
    mpi = [r for r in rules.all() if (r.group, r.kind) == ("kubeflow.org", "MPIJob")]
    assert len(mpi) == 1 and "second" in mpi[0].source
    assert rules.lookup("kubeflow.org/v2beta1", "MPIJob") is mpi[0]

    rules_rev = load_kind_rules([second, first])
    job_rev = rules_rev.lookup("batch/v1", "Job")
    assert job_rev is not None and "first" in job_rev.source
    # Built-ins stay when no extra dir is given.
    builtin = load_kind_rules().lookup("batch/v1", "Job")
    assert builtin is not None and "rules/kinds/core.yaml" in builtin.source


def test_cache_sees_edited_files(tmp_path: pathlib.Path) -> None:
    p = write(tmp_path / "rules", "w.yaml", GOOD_RULE)
    first = load_kind_rules([tmp_path / "rules"])
    assert load_kind_rules([tmp_path / "rules"]) is first
    p.write_text(GOOD_RULE.replace("spec.template.spec", "spec.other"), encoding="utf-8")
    st = p.stat()
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    second = load_kind_rules([tmp_path / "rules"])
    rule = second.lookup("example.com/v1", "Widget")
    assert rule is not None and rule.pod_specs == (("spec", "other"),)


def test_empty_ruleset() -> None:
    empty = KindRuleSet()
    assert empty.lookup("v1", "Pod") is None and empty.all() == [] and empty.non_workloads() == []


# --- the real corpus ------------------------------------------------------------------------------

GPU_RESOURCE = re.compile(r"^nvidia\.com/(gpu|mig-\S+)$")


def has_gpu_resource(node: object) -> bool:
    """Any map key that is a device-plugin resource name (not a label such as nvidia.com/gpu.product)."""
    if isinstance(node, dict):
        return any(
            (isinstance(k, str) and GPU_RESOURCE.match(k)) or has_gpu_resource(v) for k, v in node.items()
        )
    if isinstance(node, list):
        return any(has_gpu_resource(v) for v in node)
    return False


def corpus_documents() -> list[tuple[str, int, dict[str, object]]]:
    if not CORPUS.is_dir():
        pytest.skip(f"shared corpus not found at {CORPUS} (expected ../shared beside the project)")
    docs = []
    for f in sorted(CORPUS.iterdir()):
        if f.suffix not in (".yaml", ".yml"):
            continue
        try:
            loaded = list(yaml.safe_load_all(f.read_text(encoding="utf-8")))
        except (yaml.YAMLError, UnicodeDecodeError):
            continue  # templates and broken YAML are in the corpus on purpose
        docs += [(f.name, i, d) for i, d in enumerate(loaded) if isinstance(d, dict) and "kind" in d]
    return docs


def test_corpus_covered_kinds_resolve_and_reach_their_gpu_requests() -> None:
    rules = load_kind_rules()
    checked = 0
    for name, i, doc in corpus_documents():
        api_version, kind = str(doc.get("apiVersion", "")), str(doc["kind"])
        rule = rules.lookup(api_version, kind)
        if rule is not None:
            paths = [*rule.pod_specs, *rule.containers, *(g.path for g in rule.gpu_fields)]
            found = [v for p in paths for _, v in resolve(doc, p)]
            assert found, f"{name} doc {i}: no path of {rule.source} resolves in {api_version} {kind}"
            if has_gpu_resource(doc):
                assert any(has_gpu_resource({"x": v}) for v in found), (
                    f"{name} doc {i}: {kind} requests GPUs outside every path of {rule.source}"
                )
            checked += 1
            continue
        nw = rules.lookup_non_workload(api_version, kind)
        if nw is not None:
            assert any(resolve(doc, g.path) for g in nw.gpu_fields), f"{name} doc {i}: no gpuField resolves"
            checked += 1
            continue
        assert not has_gpu_resource(doc), f"{name} doc {i}: {api_version} {kind} holds GPU requests, no rule"
    assert checked >= 40


def test_corpus_crds_with_pod_templates_are_covered() -> None:
    # Every non-core kind in the corpus that embeds a pod template (a `containers` list somewhere) has a rule.
    rules = load_kind_rules()
    core_groups = {"", "apps", "batch", "policy", "rbac.authorization.k8s.io", "resource.k8s.io"}

    def has_containers(node: object) -> bool:
        if isinstance(node, dict):
            return isinstance(node.get("containers"), list) or any(has_containers(v) for v in node.values())
        if isinstance(node, list):
            return any(has_containers(v) for v in node)
        return False

    missing = set()
    for _, _, doc in corpus_documents():
        group, _ = kinds.split_api_version(str(doc.get("apiVersion", "")))
        if (
            group not in core_groups
            and has_containers(doc)
            and rules.lookup(str(doc["apiVersion"]), str(doc["kind"])) is None
        ):
            missing.add(f"{doc['apiVersion']} {doc['kind']}")
    assert not missing, f"kinds with pod templates but no rule: {sorted(missing)}"
