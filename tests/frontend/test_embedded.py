"""Objects embedded whole in other objects (frontend.embedded): dispatch by their own kind, namespaces,
where the claim template goes, and edits inside Argo manifest strings checked against what kubectl reads."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from dra_migrate.config import Options
from dra_migrate.frontend import embedded
from dra_migrate.lower.context import RunContext
from dra_migrate.pipeline import FileResult, process_source
from dra_migrate.ruleset.kinds import RuleError, load_kind_rules

JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: train
spec:
  template:
    spec:
      containers:
      - name: trainer
        image: busybox
        resources:
          limits:
            nvidia.com/gpu: 2  # tensor parallel
      restartPolicy: Never
"""


def _migrate(text: str, path: str = "in.yaml") -> FileResult:
    return process_source(path, text.encode(), RunContext(Options()), rules=load_kind_rules())


def _docs(result: FileResult) -> list[Any]:
    assert result.output is not None, [d.render() for d in result.diagnostics]
    return [d for d in yaml.safe_load_all(result.output.decode()) if d is not None]


def _codes(result: FileResult) -> list[str]:
    return [d.code for d in result.diagnostics]


def _indent(text: str, n: int) -> str:
    return "".join((" " * n + line) if line.strip() else line for line in text.splitlines(keepends=True))


def _workflow(manifest: str, *, header: str = "|", action: str = "create", tail: str = "") -> str:
    return (
        "apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata:\n  name: wf\n  namespace: pipelines\n"
        "spec:\n  entrypoint: run\n  templates:\n  - name: run\n    resource:\n"
        f"      action: {action}\n      manifest: {header}\n{_indent(manifest, 8)}{tail}"
    )


def _standalone_job(namespace: str) -> dict[str, Any]:
    """The Job as a file of its own migrates to (the embedded one must become exactly this)."""
    job = yaml.safe_load(JOB)
    job["metadata"]["namespace"] = namespace
    [migrated, _template] = _docs(_migrate(yaml.safe_dump(job)))
    del migrated["metadata"]["namespace"]
    return migrated


# --- objects embedded as objects ---------------------------------------------------------------------


KATIB = """\
apiVersion: kubeflow.org/v1beta1
kind: Experiment
metadata:
  name: tune
  namespace: ml
spec:
  trialTemplate:
    primaryContainerName: trainer
    trialSpec:
{job}"""


def test_katib_trial_job_is_migrated_in_place_as_a_job() -> None:
    result = _migrate(KATIB.format(job=_indent(JOB, 6)))
    experiment, template = _docs(result)
    assert experiment["spec"]["trialTemplate"]["trialSpec"] == _standalone_job("ml") | {}
    # the template lives where Katib creates the trials: the Experiment's namespace
    assert template["kind"] == "ResourceClaimTemplate" and template["metadata"]["namespace"] == "ml"
    codes = _codes(result)
    assert codes.count("DRA408") == 1 and "DRA417" in codes  # Katib's controller; batch Jobs need none
    [note] = [d for d in result.diagnostics if d.code == "DRA417"]
    assert note.object == "Experiment/ml/tune > Job/ml/train" and "namespace 'ml'" in note.message


def test_katib_overrides_the_trial_namespace() -> None:
    job = JOB.replace("  name: train\n", "  name: train\n  namespace: elsewhere\n")
    _experiment, template = _docs(_migrate(KATIB.format(job=_indent(job, 6))))
    assert template["metadata"]["namespace"] == "ml"  # generator.go SetNamespace(trialNamespace)


def test_argo_manifest_keeps_its_own_namespace() -> None:
    job = JOB.replace("  name: train\n", "  name: train\n  namespace: jobs\n")
    _wf, template = _docs(_migrate(_workflow(job)))
    assert template["metadata"]["namespace"] == "jobs"  # kubectl -f honours the manifest's namespace


def test_nested_embedding_reports_every_controller_on_the_way() -> None:
    pytorch = """\
apiVersion: kubeflow.org/v1
kind: PyTorchJob
spec:
  pytorchReplicaSpecs:
    Worker:
      replicas: 2
      template:
        spec:
          containers:
          - name: pytorch
            resources: {limits: {nvidia.com/gpu: 1}}
"""
    text = (
        "apiVersion: workload.codeflare.dev/v1beta2\nkind: AppWrapper\nmetadata: {name: wrap, namespace: team}\n"
        "spec:\n  components:\n  - template:\n"
        + _indent(KATIB.format(job=_indent(pytorch, 6)).replace("  namespace: ml\n", ""), 6)
    )
    result = _migrate(text)
    wrapper, template = _docs(result)
    spec = wrapper["spec"]["components"][0]["template"]["spec"]["trialTemplate"]["trialSpec"]["spec"]
    assert spec["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["resourceClaims"]
    assert template["metadata"]["namespace"] == "team"
    warnings = [d.message.split(" ")[0] for d in result.diagnostics if d.code == "DRA408"]
    assert sorted(warnings) == ["AppWrapper", "Experiment", "PyTorchJob"]
    assert "DRA414" in _codes(result)  # the AppWrapper's Autopilot side effect reaches what it wraps


def test_embedded_object_in_a_list_gets_its_template_as_a_list_item() -> None:
    experiment = yaml.safe_load(KATIB.format(job=_indent(JOB, 6)))
    text = yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [experiment]}, sort_keys=False)
    [lst] = _docs(_migrate(text))
    assert [i["kind"] for i in lst["items"]] == ["Experiment", "ResourceClaimTemplate"]


def test_outer_checks_leave_embedded_objects_to_their_own_rule() -> None:
    result = _migrate(KATIB.format(job=_indent(JOB, 6)))
    assert "DRA403" not in _codes(result)  # the trialSpec's GPU key is the Job's, not an Experiment field


def test_depth_limit_is_a_named_refusal() -> None:
    text = JOB
    for i in range(embedded.MAX_DEPTH + 1):
        text = KATIB.format(job=_indent(text, 6)).replace("name: tune", f"name: tune{i}")
    result = _migrate(text)
    assert result.output is None or result.output == result.original
    assert any(d.code == "DRA415" and "deep" in d.message for d in result.diagnostics)


# --- objects embedded in manifest strings --------------------------------------------------------------


def test_argo_manifest_string_holds_exactly_the_migrated_job() -> None:
    result = _migrate(_workflow(JOB, tail="    outputs: {}\n"))
    wf, template = _docs(result)
    manifest = wf["spec"]["templates"][0]["resource"]["manifest"]
    assert yaml.safe_load(manifest) == _standalone_job("pipelines")
    assert wf["spec"]["templates"][0]["outputs"] == {}
    assert template["metadata"]["namespace"] == "pipelines"
    # every line before the first edit, the block's included, is byte-identical
    out = result.output.decode() if result.output else ""
    assert out.startswith(_workflow(JOB).split("          limits:")[0])


@pytest.mark.parametrize(
    "header,tail",
    [
        ("|", ""),  # the block ends the file
        ("|-", "    outputs: {}\n"),  # no final line break in the value
        ("| # the job", "    outputs: {}\n"),  # a comment after the indicator
        ("|", "\n\n    outputs: {}\n"),  # blank lines after the block
    ],
)
def test_block_shapes(header: str, tail: str) -> None:
    wf, _template = _docs(_migrate(_workflow(JOB, header=header, tail=tail)))
    value = wf["spec"]["templates"][0]["resource"]["manifest"]
    assert yaml.safe_load(value) == _standalone_job("pipelines")
    assert value.endswith("\n") is (header != "|-")


def test_crlf_file() -> None:
    text = _workflow(JOB, tail="    outputs: {}\n").replace("\n", "\r\n")
    result = _migrate(text)
    wf, _template = _docs(result)
    assert yaml.safe_load(wf["spec"]["templates"][0]["resource"]["manifest"]) == _standalone_job("pipelines")
    assert result.output is not None and b"\n" not in result.output.replace(b"\r\n", b"")


def test_second_run_changes_nothing() -> None:
    first = _migrate(_workflow(JOB, tail="    outputs: {}\n"))
    assert first.output is not None
    again = _migrate(first.output.decode())
    assert again.output is None or again.output == first.output


def test_argo_placeholders_in_quotes_are_kept() -> None:
    job = JOB.replace("name: train\n", 'name: "{{workflow.name}}-train"\n', 1)
    wf, template = _docs(_migrate(_workflow(job)))
    manifest = yaml.safe_load(wf["spec"]["templates"][0]["resource"]["manifest"])
    assert manifest["metadata"]["name"] == "{{workflow.name}}-train"
    assert "{" not in template["metadata"]["name"]


def test_a_wrong_splice_is_caught_by_the_check_not_written(monkeypatch: pytest.MonkeyPatch) -> None:
    # shift every edit one character off: the string the outer parser reads is no longer the migrated Job
    monkeypatch.setattr(embedded.StringHost, "shift", lambda self, offset: offset - self.pad + self.region_start + 1)
    result = _migrate(_workflow(JOB, tail="    outputs: {}\n"))
    assert result.failed and result.output is None
    assert {"DRA216", "DRA901"} & set(_codes(result))


def test_patch_action_and_json_strings_are_reported_not_rewritten() -> None:
    result = _migrate(_workflow(JOB, action="patch"))
    assert result.output is None and _codes(result) == ["DRA415"]
    wf = yaml.safe_load(_workflow(JOB))
    wf["spec"]["templates"][0]["resource"]["manifest"] = JOB  # JSON: a quoted string with \n escapes
    result = _migrate(json.dumps(wf, indent=2), "wf.json")
    assert result.output is None and _codes(result) == ["DRA415"]
    assert "double-quoted" in result.diagnostics[0].message


KUBECTL = shutil.which("kubectl")


def _kustomize(directory: Path, files: dict[str, str]) -> list[dict[str, Any]]:
    directory.mkdir()
    for name, text in files.items():
        (directory / name).write_text(text)
    (directory / "kustomization.yaml").write_text("resources:\n" + "".join(f"- {n}\n" for n in files))
    out = subprocess.run([KUBECTL or "kubectl", "kustomize", str(directory)], capture_output=True, text=True,
                         check=True, timeout=60)
    return [d for d in yaml.safe_load_all(out.stdout) if d]


@pytest.mark.skipif(KUBECTL is None, reason="kubectl (with kustomize) not installed")
def test_kubectl_reads_the_migrated_job_from_the_manifest(tmp_path: Path) -> None:
    """What kubectl applies: kubectl's own YAML reading (kustomize) of the migrated Workflow gives a manifest
    string; kubectl reading that string gives the same Job as kubectl reading the Job migrated on its own."""
    result = _migrate(_workflow(JOB, tail="    outputs: {}\n"))
    assert result.output is not None
    built = _kustomize(tmp_path / "outer", {"wf.yaml": result.output.decode()})
    [wf] = [d for d in built if d["kind"] == "Workflow"]
    manifest = wf["spec"]["templates"][0]["resource"]["manifest"]
    [job_from_string] = _kustomize(tmp_path / "inner", {"job.yaml": manifest})
    [job_alone] = _kustomize(tmp_path / "alone", {"job.yaml": yaml.safe_dump(_standalone_job("pipelines"))})
    assert job_from_string == job_alone
    assert job_from_string["spec"]["template"]["spec"]["resourceClaims"][0]["resourceClaimTemplateName"] == (
        [d for d in built if d["kind"] == "ResourceClaimTemplate"][0]["metadata"]["name"]
    )


# --- rules ------------------------------------------------------------------------------------------------


def _pack(tmp_path: Path, body: str) -> Path:
    d = tmp_path / "pack"
    d.mkdir()
    (d / "x.yaml").write_text(body)
    return d


def test_user_rule_pack_can_name_embedded_objects(tmp_path: Path) -> None:
    pack = _pack(tmp_path, (
        "kinds:\n  - group: example.com\n    kind: Launcher\n    embedded:\n"
        "      - {path: spec.job, namespace: outer, note: 'creates spec.job in its namespace'}\n"
        "    claimsSupport: {minVersion: v1.0.0, note: 'example/launcher crd.yaml@v1.0.0'}\n"
    ))
    rules = load_kind_rules([pack])
    [entry] = rules.lookup("example.com/v1", "Launcher").embedded  # type: ignore[union-attr]
    assert entry.path == ("spec", "job") and entry.namespace == "outer" and not entry.in_string
    text = "apiVersion: example.com/v1\nkind: Launcher\nmetadata: {name: l, namespace: n}\nspec:\n  job:\n"
    result = process_source("in.yaml", (text + _indent(JOB, 4)).encode(), RunContext(Options()), rules=rules)
    _launcher, template = _docs(result)
    assert template["metadata"]["namespace"] == "n" and "DRA417" in _codes(result)


@pytest.mark.parametrize(
    "entry,needle",
    [
        ("{path: spec.job, note: x}", "namespace"),
        ("{path: spec.job, namespace: inner, note: x}", "inner"),
        ("{path: spec.job, namespace: outer, format: json, note: x}", "json"),
        ("{path: 'spec..job', namespace: outer, note: x}", "spec..job"),
    ],
)
def test_bad_embedded_entries_are_rule_errors(tmp_path: Path, entry: str, needle: str) -> None:
    pack = _pack(tmp_path, (
        "kinds:\n  - group: example.com\n    kind: Launcher\n    embedded:\n"
        f"      - {entry}\n    claimsSupport: {{minVersion: unknown, note: x}}\n"
    ))
    with pytest.raises(RuleError) as info:
        load_kind_rules([pack])
    assert needle in info.value.message and info.value.line == 5


def test_document_rules_are_loaded_and_later_packs_replace_them(tmp_path: Path) -> None:
    builtin = load_kind_rules()
    ir = {"pipelineInfo": {}, "deploymentSpec": {}, "root": {}}
    assert builtin.lookup_document(ir) is not None and builtin.lookup_document({"root": {}}) is None
    pack = _pack(tmp_path, (
        "documents:\n  - name: kubeflow-pipelines-ir\n    keys: [pipelineInfo]\n"
        "    gpuFields: [{path: x, note: y}]\n    note: z\n"
    ))
    replaced = load_kind_rules([pack]).lookup_document({"pipelineInfo": {}})
    assert replaced is not None and replaced.note == "z"


def test_kfp_ir_accelerator_is_reported_and_a_tpu_is_not() -> None:
    ir = (
        "deploymentSpec:\n  executors:\n    exec-a:\n      container:\n        image: x\n        resources:\n"
        "          accelerator: {count: '1', type: nvidia.com/gpu}\n    exec-b:\n      container:\n"
        "        image: x\n        resources:\n          accelerator: {resourceCount: '4', resourceType: tpu-v3}\n"
        "pipelineInfo: {name: p}\nroot: {dag: {tasks: {}}}\nschemaVersion: 2.1.0\n"
    )
    result = _migrate(ir)
    assert _codes(result) == ["DRA416"] and result.diagnostics[0].location.line == 7
    assert result.output is None


def test_simulate_reads_the_job_inside_a_migrated_manifest() -> None:
    from dra_migrate.simulate.manifests import Manifests, read_source

    result = _migrate(_workflow(JOB, tail="    outputs: {}\n"))
    assert result.output is not None
    out = Manifests()
    read_source("wf.yaml", result.output, load_kind_rules(), out)
    [pod] = out.workloads
    assert pod.pod_spec["resourceClaims"][0]["resourceClaimTemplateName"] in {name for _ns, name in out.templates}


def test_argo_namespace_placeholders() -> None:
    job = JOB.replace("  name: train\n", '  name: train\n  namespace: "{{workflow.namespace}}"\n')
    _wf, template = _docs(_migrate(_workflow(job)))
    assert template["metadata"]["namespace"] == "pipelines"  # the workflow's own namespace
    job = JOB.replace("  name: train\n", '  name: train\n  namespace: "{{inputs.parameters.ns}}"\n')
    result = _migrate(_workflow(job))
    assert result.output is None and _codes(result) == ["DRA415"]
    assert "only known when the workflow runs" in result.diagnostics[0].message
