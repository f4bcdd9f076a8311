"""Golden simulation cases: golden/simulate/<case>/ holds the inputs (manifests*.yaml, inventory.yaml and/or
nodes.yaml, optional args.json with extra CLI arguments) and the expected report.txt, report.json and
exit_code. Regenerate with UPDATE_GOLDEN=1 and review every changed file."""

from __future__ import annotations

import json
import os
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from dra_migrate.cli.app import _register, app

ROOT = Path(__file__).resolve().parents[2]
CASES = sorted(p for p in (ROOT / "golden" / "simulate").iterdir() if p.is_dir())
SCHEMA = json.loads((ROOT / "schemas" / "simulate-report.schema.json").read_text(encoding="utf-8"))


def _args(case: Path, fmt: str) -> list[str]:
    args = ["simulate", *sorted(p.name for p in case.glob("manifests*.yaml"))]
    if (case / "inventory.yaml").exists():
        args += ["--inventory", "inventory.yaml"]
    if (case / "nodes.yaml").exists():
        args += ["--inventory-from-nodes", "nodes.yaml"]
    if (case / "args.json").exists():
        args += json.loads((case / "args.json").read_text(encoding="utf-8"))
    return [*args, "--format", fmt]


def _run(case: Path, fmt: str, monkeypatch: pytest.MonkeyPatch) -> tuple[str, int]:
    _register()
    monkeypatch.chdir(case)  # paths in the report are relative to the case
    result = CliRunner().invoke(app, _args(case, fmt))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.stdout, result.exit_code


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_simulate_golden(case: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text, code = _run(case, "text", monkeypatch)
    data, code_json = _run(case, "json", monkeypatch)
    assert code == code_json
    report = json.loads(data)
    jsonschema.validate(report, SCHEMA)
    assert report["summary"]["exitCode"] == code
    if os.environ.get("UPDATE_GOLDEN"):
        (case / "report.txt").write_text(text, encoding="utf-8")
        (case / "report.json").write_text(data, encoding="utf-8")
        (case / "exit_code").write_text(f"{code}\n", encoding="utf-8")
    assert text == (case / "report.txt").read_text(encoding="utf-8")
    assert report == json.loads((case / "report.json").read_text(encoding="utf-8"))
    assert code == int((case / "exit_code").read_text(encoding="utf-8"))


def test_cases_cover_the_issue() -> None:
    names = {c.name for c in CASES}
    assert {"rollout-downgrade", "unsatisfiable-memory", "mig-multislice", "incomplete-pool"} <= names
