"""Report formats: JSON against its schema, SARIF against the official 2.1.0 schema, GitHub annotations."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from dra_migrate.diagnostics.model import Diagnostic, Location, Severity
from dra_migrate.reports import github, parse_report_spec, sarif
from tests.conftest import REPO
from tests.integration_helpers import GPU_DEPLOYMENT, cli

BAD = (
    "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    resources:\n"
    "      limits: {nvidia.com/gpu: 1.5}\n"
)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "sub dir").mkdir()
    (tmp_path / "sub dir" / "web.yaml").write_text(GPU_DEPLOYMENT)
    (tmp_path / "bad.yaml").write_text(BAD)
    (tmp_path / "broken.yaml").write_text("a: [nvidia.com/gpu\n")
    return tmp_path


def _schema(name: str) -> dict[str, object]:
    return json.loads((REPO / "schemas" / name).read_text())


def test_json_report_validates_against_its_schema(tree: Path) -> None:
    res = cli(["migrate", ".", "--check", "--format", "json", "-v"], tree)
    doc = json.loads(res.stdout)
    jsonschema.validate(doc, _schema("report.schema.json"))
    assert doc["schemaVersion"] == 1 and res.returncode == 2
    assert {d["code"] for d in doc["diagnostics"]} >= {"DRA201", "DRA203", "DRA101"}


def test_report_schema_rejects_a_wrong_report() -> None:
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"schemaVersion": 2}, _schema("report.schema.json"))


def test_sarif_validates_against_the_official_schema(tree: Path) -> None:
    res = cli(["migrate", ".", "--diff", "--format", "sarif", "-v"], tree)
    log = json.loads(res.stdout)  # stdout is the log and nothing else (the diff went to stderr)
    assert "--- a/bad.yaml" not in res.stdout and "+++ b/sub dir/web.yaml" in res.stderr
    schema = _schema("sarif-2.1.0.schema.json")
    jsonschema.Draft4Validator(schema, format_checker=jsonschema.FormatChecker()).validate(log)
    run = log["runs"][0]
    rule_ids = [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert "DRA201" in rule_ids and "DRA701" in rule_ids
    by_rule = {r["ruleId"]: r for r in run["results"]}
    loc = by_rule["DRA203"]["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"] == "bad.yaml"
    assert loc["region"]["startLine"] == 8 and loc["region"]["startColumn"] >= 1
    web = by_rule["DRA201"]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert web == "sub%20dir/web.yaml"  # relative, forward slashes, a valid URI reference
    assert by_rule["DRA201"]["level"] == "note" and by_rule["DRA101"]["level"] == "error"


def test_official_sarif_schema_catches_a_broken_log() -> None:
    schema = _schema("sarif-2.1.0.schema.json")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft4Validator(schema).validate({"version": "2.1.0", "runs": [{"tool": {}}]})


def test_sarif_uri_outside_the_base_is_absolute(tmp_path: Path) -> None:
    assert sarif.artifact_uri(str(tmp_path / "x.yaml"), tmp_path / "elsewhere").startswith("file:///")
    assert sarif.artifact_uri("<stdin>") is None


def test_github_annotations_escape_and_levels() -> None:
    d = Diagnostic("DRA203", Severity.ERROR, "100% bad,\nreally", Location("a,b:c.yaml", 3, 5), "Pod/p")
    assert (
        github.annotation(d)
        == "::error file=a%2Cb%3Ac.yaml,line=3,col=5,title=DRA203::[Pod/p] 100%25 bad,%0Areally"
    )
    w = Diagnostic("DRA108", Severity.WARNING, "m", Location("f.yaml"))
    assert github.annotation(w) == "::warning file=f.yaml,title=DRA108::m"
    i = Diagnostic("DRA201", Severity.INFO, "m", Location("f.yaml", 1, 0))
    assert github.annotation(i).startswith("::notice file=f.yaml,line=1,col=1,")


def test_several_reports_in_one_run(tree: Path) -> None:
    res = cli(
        [
            "migrate",
            ".",
            "--check",
            "--format",
            "github",
            "--report",
            "sarif=out.sarif",
            "--report",
            "json=out.json",
        ],
        tree,
    )
    assert res.returncode == 2
    assert "::error file=bad.yaml,line=8," in res.stdout
    assert json.loads((tree / "out.sarif").read_text())["version"] == "2.1.0"
    assert json.loads((tree / "out.json").read_text())["summary"]["exitCode"] == 2
    unwritable = cli(["migrate", ".", "--check", "--report", "json=missing/dir/out.json"], tree)
    assert unwritable.returncode == 2 and "Traceback" not in unwritable.stderr
    assert "cannot write report" in unwritable.stderr


def test_report_spec_parsing() -> None:
    assert parse_report_spec("sarif=a=b.sarif") == ("sarif", "a=b.sarif")
    for bad in ("sarif", "xml=a", "json="):
        with pytest.raises(ValueError):
            parse_report_spec(bad)


def test_bad_format_is_a_usage_error(tmp_path: Path) -> None:
    assert cli(["migrate", ".", "--format", "xml"], tmp_path).returncode == 2
    assert cli(["migrate", ".", "--report", "xml=a"], tmp_path).returncode == 2


def test_action_yml_runs_migrate_and_uploads_sarif() -> None:
    import yaml

    action = yaml.safe_load((REPO / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    assert set(action["inputs"]) >= {"paths", "args", "mode"}
    steps = action["runs"]["steps"]
    assert any("pip install" in s.get("run", "") and "GITHUB_ACTION_PATH" in s["run"] for s in steps)
    run = next(s for s in steps if s.get("id") == "run")["run"]
    assert "dra-migrate migrate" in run and '--report "sarif=' in run
    assert any(s.get("uses", "").startswith("github/codeql-action/upload-sarif@") for s in steps)
