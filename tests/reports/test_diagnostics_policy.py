"""Diagnostics a team can tune: --select / --ignore / --fail-on (also in the config file), repeats grouped in
the text report, and --strict failing while a GPU request is left unmigrated (the registry's `unmigrated`)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from dra_migrate.diagnostics.codes import CODES
from dra_migrate.diagnostics.model import Location, make
from dra_migrate.reports.policy import Policy
from dra_migrate.reports.text import GROUP_SHOW, diagnostic_lines
from tests.cli.test_output_contract import GPU_POD, run
from tests.conftest import REPO

ZERO = GPU_POD.replace("nvidia.com/gpu: 2", "nvidia.com/gpu: 0")  # DRA212, a warning, and nothing to migrate
UNCOVERED = (REPO / "golden" / "uncovered-kind" / "input.yaml").read_text()
CLUSTER_SCOPED = (REPO / "golden" / "cluster-scoped-templates" / "input-kserve.yaml").read_text()
VALUES = "resources:\n  limits:\n    nvidia.com/gpu: 1\n"
CHART = "apiVersion: v2\nname: c\nversion: 0.1.0\n"
TEMPLATE = (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  template:\n"
    "    spec:\n      containers:\n        - name: a\n          resources:\n            limits:\n"
    "              nvidia.com/gpu: {{ .Values.gpus }}\n"
)


def test_select_ignore_and_fail_on(tmp_path: Path) -> None:
    (tmp_path / ".dra-migrate.yaml").write_text("{}\n")  # a repository root: no DRA120 warning to tolerate
    (tmp_path / "zero.yaml").write_text(ZERO)
    (tmp_path / "pod.yaml").write_text(GPU_POD)
    base = run(tmp_path, "migrate", ".", "--check", "--format", "json")
    codes = {d["code"] for d in json.loads(base.stdout)["diagnostics"]}
    assert {"DRA212", "DRA201"} <= codes and base.returncode == 1
    only = json.loads(run(tmp_path, "migrate", ".", "--check", "--format", "json", "--select", "DRA2").stdout)
    assert {d["code"][:4] for d in only["diagnostics"]} == {"DRA2"}
    ignored = json.loads(run(tmp_path, "migrate", ".", "--check", "--format", "json", "--ignore=DRA212,DRA208").stdout)
    assert not {"DRA212", "DRA208"} & {d["code"] for d in ignored["diagnostics"]}
    strict = run(tmp_path, "migrate", ".", "--check", "--fail-on", "warning")
    assert strict.returncode == 2 and "warning DRA212" in strict.stderr  # a warning fails the run
    tolerated = run(tmp_path, "migrate", ".", "--check", "--fail-on", "warning", "--ignore", "DRA212")
    assert tolerated.returncode == 1
    (tmp_path / ".dra-migrate.yaml").write_text("fail-on: warning\nignore: [DRA212]\n")
    assert run(tmp_path, "migrate", ".", "--check").returncode == 1  # the same from the config file
    assert run(tmp_path, "migrate", ".", "--check", "--ignore", "DRA5").returncode == 2  # the command line wins


def test_an_ignored_error_fails_nothing_and_the_file_stays_untouched(tmp_path: Path) -> None:
    broken = "a: [nvidia.com/gpu\n"
    (tmp_path / "broken.yaml").write_text(broken)
    assert run(tmp_path, "migrate", ".").returncode == 2
    res = run(tmp_path, "migrate", ".", "--ignore", "DRA101")
    assert res.returncode == 0 and "DRA101" not in res.stderr
    assert "1 left untouched because of errors" in res.stderr and (tmp_path / "broken.yaml").read_text() == broken


def test_repeats_are_grouped_and_verbose_shows_every_one(tmp_path: Path) -> None:
    n = 12
    for i in range(n):
        (tmp_path / f"z{i:02}.yaml").write_text(ZERO.replace("name: trainer", f"name: t{i}"))
    res = run(tmp_path, "migrate", ".", "--check")
    lines = [line for line in res.stderr.splitlines() if "DRA212" in line]
    assert lines[0].startswith(f"warning DRA212 (zero-gpu-request): {n} times")
    assert len(lines) == 1 + GROUP_SHOW + 1 and lines[-1].strip() == f"… and {n - GROUP_SHOW} more DRA212"
    every = run(tmp_path, "migrate", ".", "--check", "-v")
    assert sum("warning DRA212" in line for line in every.stderr.splitlines()) == n


def test_grouping_keeps_order_and_few_repeats_alone() -> None:
    d = [make("DRA212", f"m{i}", Location(f"f{i}.yaml", 1)) for i in range(7)]
    other = make("DRA205", "x", Location("g.yaml", 2))
    lines = diagnostic_lines([d[0], other, *d[1:]])
    assert lines[0].startswith("warning DRA212") and lines[1].startswith("  f0.yaml:1:1")
    assert lines[GROUP_SHOW + 2] == other.render()  # the whole group where the code first occurs, then the rest
    assert diagnostic_lines(d[:5]) == [x.render() for x in d[:5]]


def test_strict_is_read_from_the_registry() -> None:
    marked = [c for c in CODES.values() if c.unmigrated]
    assert {"DRA140", "DRA401", "DRA701", "DRA702", "DRA704", "DRA705", "DRA716", "DRA717"} <= {c.code for c in marked}
    assert all(c.severity.value != "error" for c in marked)  # an error fails the run anyway
    for c in marked:
        d = make(c.code, "m", Location("f.yaml", 1))
        assert Policy(strict=True).adjust(d).severity.value == "error"  # type: ignore[union-attr]
        assert Policy().adjust(d) == d
    info = make("DRA201", "m", Location("f.yaml", 1))
    assert Policy(strict=True).adjust(info) == info


@pytest.mark.parametrize(
    ("files", "code"),
    [
        ({"thing.yaml": UNCOVERED}, "DRA401"),
        ({"runtime.yaml": CLUSTER_SCOPED}, "DRA140"),
        ({"chart/Chart.yaml": CHART, "chart/values.yaml": VALUES}, "DRA705"),
        ({"chart/Chart.yaml": CHART, "chart/templates/deploy.yaml": TEMPLATE}, "DRA704"),
        ({"base/kustomization.yaml": "resources: [deploy.yaml]\n", "base/deploy.yaml": "kind: ConfigMap\n",
          "kustomization.yaml": "resources: [base]\npatches:\n  - path: patch.yaml\n", "patch.yaml": GPU_POD},
         "DRA701"),
    ],
)
def test_check_strict_fails_while_a_gpu_request_is_left(tmp_path: Path, files: dict[str, str], code: str) -> None:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    lenient = run(tmp_path, "migrate", ".", "--check")
    assert lenient.returncode == 0 and f"warning {code}" in lenient.stderr, lenient.stderr
    strict = run(tmp_path, "migrate", ".", "--check", "--strict")
    assert strict.returncode == 2 and f"error {code}" in strict.stderr
    assert run(tmp_path, "migrate", ".", "--check", "--strict", "--ignore", code).returncode == 0


def test_the_check_hook_is_strict() -> None:
    hooks = {h["id"]: h for h in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())}
    assert "--strict" in hooks["dra-migrate-check"]["entry"].split()


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_rules_marks_the_unmigrated_codes(tmp_path: Path) -> None:
    res = subprocess.run([str(Path(sys.executable).with_name("dra-migrate")), "rules"], capture_output=True,
                         text=True, cwd=tmp_path)
    marked = {line.split()[0] for line in res.stdout.splitlines() if line.endswith("[unmigrated]")}
    assert marked == {c.code for c in CODES.values() if c.unmigrated}
