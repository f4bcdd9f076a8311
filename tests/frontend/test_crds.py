"""Rule-driven kinds end to end: rule packs, rule errors, side effects, GPU reports, coverage invariants."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import typer
import yaml
from typer.testing import CliRunner

from dra_migrate.cli import migrate_cmd, rules_cmd
from dra_migrate.config import Options
from dra_migrate.diagnostics.model import Diagnostic, Severity
from dra_migrate.lower.context import RunContext
from dra_migrate.pipeline import FileResult, process_source
from dra_migrate.ruleset.kinds import RuleError, load_kind_rules, resolve
from dra_migrate.ruleset.resources import classify
from dra_migrate.run.driver import RunConfig, run_migration
from dra_migrate.run.model import EXIT_ERROR
from tests.conftest import CORPUS, GOLDEN
from tests.golden_runner import case_args
from tests.oracle import documents

runner = CliRunner(mix_stderr=False) if "mix_stderr" in CliRunner.__init__.__code__.co_varnames else CliRunner()
app = typer.Typer()
migrate_cmd.register(app)
rules_cmd.register(app)


def _migrate(text: str, rule_dirs: list[Path] | None = None, **options: Any) -> FileResult:
    rules = load_kind_rules(tuple(rule_dirs or ()))
    return process_source("in.yaml", text.encode(), RunContext(Options(**options)), rules=rules)


def _codes(result: FileResult) -> list[str]:
    return [d.code for d in result.diagnostics]


# --- rule packs and rule errors -----------------------------------------------------------------------


def _bad_pack(tmp_path: Path) -> Path:
    d = tmp_path / "pack"
    d.mkdir()
    (d / "bad.yaml").write_text(
        "kinds:\n  - group: example.com\n    kind: Foo\n    podSpecs: [spec]\n    bogus: 1\n"
        "    claimsSupport: {minVersion: unknown, note: x}\n"
    )
    return d


def test_rule_schema_error_is_a_diagnostic_with_file_line(tmp_path: Path) -> None:
    pack = _bad_pack(tmp_path)
    manifest = tmp_path / "m.yaml"
    manifest.write_text(
        "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: a\n    resources:\n"
        "      limits: {nvidia.com/gpu: 1}\n"
    )
    result = run_migration(RunConfig([str(manifest)], mode="check", rule_dirs=[pack]))
    [d] = result.all_diagnostics
    assert (d.code, d.location.file, d.location.line) == ("DRA402", str(pack / "bad.yaml"), 5)
    assert "bogus" in d.message
    assert result.exit_code == EXIT_ERROR
    assert not result.files  # nothing is migrated until the rules load


@pytest.mark.parametrize("argv", [["rules", "--kinds"], ["migrate", "--check"]])
def test_cli_rule_error_exit_2_without_traceback(tmp_path: Path, argv: list[str]) -> None:
    pack = _bad_pack(tmp_path)
    (tmp_path / "m.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    args = [*argv, "--rules", str(pack)] + ([str(tmp_path / "m.yaml")] if argv[0] == "migrate" else [])
    res = runner.invoke(app, args)
    assert res.exit_code == 2, res.output
    output = res.output + (res.stderr if res.stderr_bytes is not None else "")
    assert f"{pack / 'bad.yaml'}:5:1: error DRA402" in output
    assert "Traceback" not in output and res.exception is None or isinstance(res.exception, SystemExit)


def test_unknown_side_effect_is_rejected(tmp_path: Path) -> None:
    d = tmp_path / "pack"
    d.mkdir()
    (d / "x.yaml").write_text(
        "kinds:\n  - group: example.com\n    kind: Foo\n    podSpecs: [spec]\n"
        "    claimsSupport: {minVersion: unknown, note: x}\n    sideEffects: [no-such-thing]\n"
    )
    result = run_migration(RunConfig([str(tmp_path)], mode="check", rule_dirs=[d]))
    [diag] = result.all_diagnostics
    assert diag.code == "DRA402" and "no-such-thing" in diag.message and diag.location.line == 2


def test_rules_kinds_lists_every_covered_kind_with_versions_and_min_version() -> None:
    res = runner.invoke(app, ["rules", "--kinds"])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    for rule in load_kind_rules().all():
        row = next(
            (
                line
                for line in lines
                if line.split()[0] == f"{rule.group or 'core'}/{rule.kind}"
                and line.split()[1] == (",".join(rule.versions) or "*")
            ),
            None,
        )
        assert row is not None, rule
        assert row.split()[2] == rule.claims_min_version
    assert any(line.startswith("ray.io/RayCluster") and "ray-num-gpus" in line for line in lines)


# --- uncovered kinds: one DRA401 per GPU pod template, and its snippet works as a rule pack --------------

UNCOVERED = """\
apiVersion: example.com/v1beta1
kind: TwoPools
metadata: {name: pools, namespace: ns}
spec:
  pools:
    - name: a
      template:
        spec:
          containers:
            - name: a
              resources: {limits: {nvidia.com/gpu: 1}}
    - name: b
      template:
        spec:
          containers:
            - name: b
              image: x
  leader:
    spec:
      containers:
        - name: lead
          resources: {limits: {nvidia.com/gpu: 2}}
"""


def test_every_uncovered_gpu_pod_template_gets_dra401_with_a_working_rule(tmp_path: Path) -> None:
    result = _migrate(UNCOVERED)
    d401 = [d for d in result.diagnostics if d.code == "DRA401"]
    assert sorted(d.location.line for d in d401) == [11, 22]  # the two GPU pod templates, at their keys
    assert not result.changed
    snippet = d401[0].message.split("pass --rules DIR: ", 1)[1]
    rule = yaml.safe_load(snippet)["kinds"][0]
    assert rule["podSpecs"] == ["spec.leader.spec", "spec.pools.*.template.spec"]
    pack = tmp_path / "pack"
    pack.mkdir()
    (pack / "twopools.yaml").write_text(snippet + "\n")
    migrated = _migrate(UNCOVERED, [pack])
    assert migrated.changed and "DRA401" not in _codes(migrated)
    assert migrated.output is not None and b"nvidia.com/gpu: " not in migrated.output


def test_gpu_resource_name_as_value_is_reported() -> None:
    text = (
        "apiVersion: example.com/v1\nkind: Serving\nmetadata: {name: s}\nspec:\n  accel:\n    gpuType: nvidia.com/gpu\n"
    )
    [d] = [d for d in _migrate(text).diagnostics if d.code == "DRA405"]
    assert d.location.line == 6 and "spec.accel.gpuType" in d.message


# --- side effects ---------------------------------------------------------------------------------------

RAY = """\
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: rc}
spec:
  headGroupSpec:
    template:
      spec:
        containers:
          - name: head
            image: rayproject/ray
  workerGroupSpecs:
    - groupName: gpu
      rayStartParams:
        block: "true"
      template:
        spec:
          containers:
            - name: worker
              resources: {limits: {nvidia.com/gpu: 4}}
    - groupName: set
      rayStartParams:
        num-gpus: "2"
      template:
        spec:
          containers:
            - name: worker
              resources: {limits: {nvidia.com/gpu: 2}}
    - groupName: grouped
      resources: {nvidia.com/gpu: "1"}
      template:
        spec:
          containers:
            - name: worker
              resources: {limits: {nvidia.com/gpu: 1}}
    - groupName: fresh
      template:
        spec:
          containers:
            - name: worker
              resources: {limits: {nvidia.com/gpu: 8}}
"""


def test_ray_num_gpus_set_per_group_unless_already_given() -> None:
    result = _migrate(RAY)
    assert result.output is not None
    groups = yaml.safe_load(result.output.decode().split("\n---\n")[0])["spec"]["workerGroupSpecs"]
    params = {g["groupName"]: g.get("rayStartParams") for g in groups}
    assert params == {
        "gpu": {"block": "true", "num-gpus": "4"},
        "set": {"num-gpus": "2"},
        "grouped": None,
        "fresh": {"num-gpus": "8"},
    }
    assert _codes(result).count("DRA409") == 2


QUOTA = """\
apiVersion: v1
kind: ResourceQuota
metadata: {name: q, namespace: t}
spec:
  hard:
    limits.nvidia.com/gpu: "6"
    requests.nvidia.com/gpu: "4"
"""


def test_resource_quota_gets_the_device_class_key_and_is_quiet_afterwards() -> None:
    result = _migrate(QUOTA)
    assert result.output is not None
    hard = yaml.safe_load(result.output)["spec"]["hard"]
    assert hard["gpu.nvidia.com.deviceclass.resource.k8s.io/devices"] == "4"  # the tightest entry
    assert hard["requests.nvidia.com/gpu"] == "4"  # the old key stays
    again = _migrate(result.output.decode())
    assert not again.changed and not again.diagnostics


def test_resource_quota_report_only_with_no_dra_quota() -> None:
    result = _migrate(QUOTA, dra_quota=False)
    assert not result.changed
    assert _codes(result) == ["DRA411", "DRA411"]


def test_controller_warning_once_per_migrated_crd_not_for_core() -> None:
    crd = _migrate(RAY)
    assert _codes(crd).count("DRA408") == 1
    core = _migrate(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: a\n"
        "    resources:\n      limits: {nvidia.com/gpu: 1}\n"
    )
    assert core.changed and "DRA408" not in _codes(core)


# --- invariants over golden outputs and the corpus -------------------------------------------------------


def _remaining_gpu_requests(obj: dict[str, Any], rules: Any) -> list[tuple[str | int, ...]]:
    rule = rules.lookup(str(obj.get("apiVersion", "")), str(obj.get("kind", "")))
    found: list[tuple[str | int, ...]] = []
    for entry in rule.embedded if rule else ():  # objects the controller creates whole: by their own rule
        for concrete, inner in resolve(obj, entry.path):
            if entry.in_string and isinstance(inner, str):
                try:
                    inner = yaml.safe_load(inner)
                except yaml.YAMLError:
                    continue
            if isinstance(inner, dict):
                found.extend((*concrete, *p) for p in _remaining_gpu_requests(inner, rules))
    for spec_path in rule.pod_specs if rule else ():
        for concrete, spec in resolve(obj, spec_path):
            for lst in ("containers", "initContainers"):
                for i, c in enumerate(spec.get(lst) or [] if isinstance(spec, dict) else []):
                    res = c.get("resources") if isinstance(c, dict) else None
                    for section in ("limits", "requests"):
                        for key in (res or {}).get(section) or {} if isinstance(res, dict) else {}:
                            rc = classify(str(key))
                            if rc is not None and rc.scheme == "gpu":
                                found.append((*concrete, lst, i, "resources", section, key))
    return found


def _explained(obj: dict[str, Any], diags: list[Diagnostic]) -> bool:
    """A GPU request may stay only when the run said why (an error, or a warning on that object)."""
    name = (obj.get("metadata") or {}).get("name", "")
    return any(d.severity is not Severity.INFO and (not d.object or d.object.endswith(f"/{name}")) for d in diags)


GOLDEN_CASES = sorted(p for p in GOLDEN.iterdir() if (p / "expected").is_dir())


@pytest.mark.parametrize("case", GOLDEN_CASES, ids=[c.name for c in GOLDEN_CASES])
def test_no_gpu_request_remains_in_covered_pod_templates_golden(case: Path) -> None:
    try:
        rules = load_kind_rules(tuple(case / str(d) for d in case_args(case).get("rules", [])))  # type: ignore[attr-defined]
    except RuleError:  # a broken rule pack: the run stops with DRA402 and migrates nothing
        assert "error DRA402" in (case / "diagnostics.txt").read_text(), case.name
        return
    diags_text = (case / "diagnostics.txt").read_text()
    named = case_args(case).get("paths")  # a run on some files: the others are the repository around it
    for f in sorted((case / "expected").iterdir()):
        if isinstance(named, list) and f.name.startswith("input") and f.name not in named:
            continue
        try:
            objs = documents(f.read_bytes(), f.name)
        except Exception:  # noqa: BLE001 - invalid-input cases are left untouched by design
            continue
        for obj in objs:
            left = _remaining_gpu_requests(obj, rules)
            if left:
                name = (obj.get("metadata") or {}).get("name", "")
                # left on purpose (bridge mode, already DRA-backed) or explained by a warning/error (naming the
                # object, or an object embedded in it: "[Outer/name > Kind/inner]")
                explained = (rf"((error|warning) DRA\d+|info DRA61[04]) \[[^\]]*{re.escape(str(name))}"
                             r"(\]| > [^\]]*\])")
                assert re.search(explained, diags_text) or "error" in diags_text, (case.name, left)


CORPUS_FILES = sorted(p for p in CORPUS.glob("*.y*ml")) if CORPUS.is_dir() else []


@pytest.mark.parametrize("path", CORPUS_FILES, ids=[p.name[:60] for p in CORPUS_FILES])
def test_no_gpu_request_remains_in_covered_pod_templates_corpus(path: Path) -> None:
    rules = load_kind_rules()
    result = process_source(path.name, path.read_bytes(), RunContext(Options()), rules=rules)
    if result.failed:
        assert any(d.severity is Severity.ERROR for d in result.diagnostics)
        return
    out = result.output if result.output is not None else result.original
    for obj in documents(out, path.name):
        if _remaining_gpu_requests(obj, rules):
            assert _explained(obj, result.diagnostics), (path.name, _remaining_gpu_requests(obj, rules))


@pytest.mark.parametrize("path", CORPUS_FILES, ids=[p.name[:60] for p in CORPUS_FILES])
def test_every_gpu_key_in_an_uncovered_kind_is_reported(path: Path) -> None:
    """Any GPU resource key in an object no rule covers gets a diagnostic on that object."""
    rules = load_kind_rules()
    result = process_source(path.name, path.read_bytes(), RunContext(Options()), rules=rules)
    if result.failed:
        return
    from dra_migrate.frontend.parsed import gpu_keys_in

    for obj in documents(path.read_bytes(), path.name):
        av, kind = str(obj.get("apiVersion", "")), str(obj.get("kind", ""))
        if not gpu_keys_in(obj) or rules.lookup(av, kind) or av.startswith("resource.k8s.io"):
            continue
        if not av or not kind:  # a values file or fragment: reported once for the file
            assert "DRA108" in _codes(result), path.name
            continue
        name = (obj.get("metadata") or {}).get("name", "")
        assert any(d.object.startswith(f"{kind}/") and d.object.endswith(f"/{name}") for d in result.diagnostics), (
            path.name,
            kind,
        )


def test_readme_rule_pack_snippet_is_a_valid_rule_pack(tmp_path: Path) -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    block = readme.split("### Rule packs", 1)[1].split("```yaml\n", 1)[1].split("```", 1)[0]
    (tmp_path / "gpubatch.yaml").write_text(block)
    rules = load_kind_rules((tmp_path,))
    rule = rules.lookup("batch.example.com/v1", "GpuBatch")
    assert rule is not None and rule.claims_min_version == "v2.0.0"
