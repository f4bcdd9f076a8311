"""Everyday comforts: config file and environment defaults, the skip annotation, progress and summary."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dra_migrate.cli.config import ConfigError, find_config, resolve
from dra_migrate.config import Options
from dra_migrate.run.driver import RunConfig, run_migration
from tests.integration_helpers import GPU_DEPLOYMENT, cli

SKIPPED = GPU_DEPLOYMENT.replace(
    "  namespace: ml\n", '  namespace: ml\n  annotations:\n    dra-migrate.io/skip: "vendor chart, PLAT-12"\n'
)


def test_config_file_env_and_cli_precedence(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".dra-migrate.yaml").write_text("target-version: '1.32'\nexclude: [a, b]\ncheck: true\n")
    (tmp_path / "apps").mkdir()
    apps = str(tmp_path / "apps")
    r = resolve("migrate", [apps], {}, {})
    assert (r.values["target-version"], r.values["exclude"], r.values["check"]) == ("1.32", ["a", "b"], True)
    assert r.where("target-version") == f"{tmp_path / '.dra-migrate.yaml'}: target-version"
    env = {"DRA_MIGRATE_TARGET_VERSION": "1.33", "DRA_MIGRATE_CHECK": "0", "DRA_MIGRATE_EXCLUDE": "x y"}
    r = resolve("migrate", [apps], {}, env)
    assert (r.values["target-version"], r.values["exclude"], r.values["check"]) == ("1.33", ["x", "y"], False)
    r = resolve("migrate", [apps], {"target-version": "1.35"}, env)
    assert r.values["target-version"] == "1.35" and r.where("target-version") == "--target-version"
    for command in ("plan", "pr", "explain"):  # one model: every command that takes the option reads it
        assert resolve(command, [apps], {}, {}).values["target-version"] == "1.32", command


def test_pyproject_section_and_bad_keys(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text('[tool.dra-migrate]\ntarget_version = "1.35"\n')
    found = find_config(str(tmp_path))
    assert found is not None and found[1] == {"target_version": "1.35"}
    assert resolve("migrate", [str(tmp_path)], {}, {}).values["target-version"] == "1.35"
    (tmp_path / ".dra-migrate.yaml").write_text("no-such-flag: 1\n")
    with pytest.raises(ConfigError, match="unknown option"):
        resolve("migrate", [str(tmp_path)], {}, {})


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("jobs: 0\n", "jobs: must be at least 1, not 0"),
        ("jobs: many\n", "jobs: expected a whole number"),
        ("target-version: 1.33\n", "target-version: write the version as a string"),
        ("target-version: '1.99'\n", "target-version: must be one of 1.32"),
        ("format: xml\n", "format: must be one of text, json, sarif, github, not 'xml'"),
        ("exclude: {a: b}\n", "exclude: expected a list"),
        ("check: maybe\n", "check: expected true or false"),
        ("select: [DRA999]\n", "select: no diagnostic code starts with 'DRA999'"),
        ("ignore: [E501]\n", "ignore: 'E501' is not a code or a prefix of codes"),
        ("- a\n", "the configuration must be a mapping"),
        ("a: [\n", "cannot read the configuration"),
    ],
)
def test_a_bad_setting_names_the_file_and_key_and_exits_2(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "d.yaml").write_text(GPU_DEPLOYMENT)
    (tmp_path / ".dra-migrate.yaml").write_text(text)
    for command in (["migrate", "d.yaml"], ["plan", "d.yaml"], ["explain", "d.yaml"]):
        res = cli(command, tmp_path)
        assert res.returncode == 2, (command, res.stderr)
        lines = res.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in res.stderr, res.stderr
        if "format" not in text or command[0] == "migrate":
            assert message in lines[0] and ".dra-migrate.yaml" in lines[0], (command, lines)
    assert (tmp_path / "d.yaml").read_text() == GPU_DEPLOYMENT


def test_a_format_only_migrate_writes_does_not_stop_plan(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "d.yaml").write_text(GPU_DEPLOYMENT)
    (tmp_path / ".dra-migrate.yaml").write_text("format: sarif\ntarget-version: '1.33'\n")
    res = cli(["plan", "d.yaml"], tmp_path)
    assert res.returncode == 0 and res.stdout.startswith("Plan for Kubernetes 1.33"), res.stderr
    assert '"version": "2.1.0"' in cli(["migrate", "--check", "d.yaml"], tmp_path).stdout


def test_config_end_to_end_through_the_cli(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "d.yaml").write_text(GPU_DEPLOYMENT)
    (tmp_path / ".dra-migrate.yaml").write_text("target-version: '1.32'\ncheck: true\n")
    res = cli(["migrate", "d.yaml", "--format", "json"], tmp_path)
    assert res.returncode == 1 and '"kubernetes": "1.32"' in res.stdout  # config: check mode, 1.32
    assert (tmp_path / "d.yaml").read_text() == GPU_DEPLOYMENT
    res = cli(["migrate", "d.yaml", "--format", "json"], tmp_path, {"DRA_MIGRATE_TARGET_VERSION": "1.33"})
    assert '"kubernetes": "1.33"' in res.stdout  # env beats the file
    res = cli(
        ["migrate", "d.yaml", "--format", "json", "--target-version", "1.35"],
        tmp_path,
        {"DRA_MIGRATE_TARGET_VERSION": "1.33"},
    )
    assert '"kubernetes": "1.35"' in res.stdout  # the command line beats both
    (tmp_path / ".dra-migrate.yaml").write_text("bogus: 1\n")
    res = cli(["migrate", "d.yaml"], tmp_path)
    assert res.returncode == 2 and "unknown option 'bogus'" in res.stderr


def test_skip_annotation_leaves_the_workload_untouched(tmp_path: Path) -> None:
    f = tmp_path / "d.yaml"
    f.write_text(SKIPPED)
    result = run_migration(RunConfig([str(f)]))
    assert f.read_text() == SKIPPED and result.exit_code == 0
    diag = next(d for d in result.all_diagnostics if d.code == "DRA706")
    assert "'vendor chart, PLAT-12'" in diag.message and diag.object == "Deployment/ml/web"


def test_strict_turns_a_skip_into_an_error(tmp_path: Path) -> None:
    f = tmp_path / "d.yaml"
    f.write_text(SKIPPED)
    result = run_migration(RunConfig([str(f)], options=Options(strict=True)))
    assert f.read_text() == SKIPPED and result.exit_code == 2
    assert [d.code for d in result.all_diagnostics] == ["DRA707"]
    assert cli(["migrate", "--strict", "d.yaml"], tmp_path).returncode == 2


def test_no_progress_or_table_when_not_a_tty(tmp_path: Path) -> None:
    for i in range(25):
        (tmp_path / f"f{i}.yaml").write_text(GPU_DEPLOYMENT.replace("name: web", f"name: web{i}"))
    res = cli(["migrate", ".", "--check"], tmp_path)
    assert res.returncode == 1
    assert (
        res.stderr.strip()
        .splitlines()[-1]
        .startswith("25 file(s) scanned, 25 with GPU keys, 25 would change")
    )
    assert "\x1b[" not in res.stderr


def test_progress_callback_and_summary_table(tmp_path: Path) -> None:
    from dra_migrate.cli.progress import ProgressBar, summary_table

    (tmp_path / "d.yaml").write_text(GPU_DEPLOYMENT)
    seen: list[tuple[int, int, str]] = []
    result = run_migration(RunConfig([str(tmp_path)], mode="check", progress=lambda *a: seen.append(a)))
    assert seen == [(0, 1, str(tmp_path / "d.yaml"))]
    table = summary_table(result, "check")
    assert "files would change" in table and "workloads migrated" in table
    bar = ProgressBar(enabled=False)
    bar(0, 100, "x")
    bar.close()
    assert bar._progress is None


def test_version_and_completion_are_available(tmp_path: Path) -> None:
    assert cli(["--version"], tmp_path).stdout.startswith("dra-migrate ")
    assert "--install-completion" in cli(["--help"], tmp_path).stdout


def test_a_run_without_a_bar_streams_its_walk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a progress bar (no TTY) the first file is read before the walk is over: worker processes
    start on a large repository while the walk goes on, instead of after it."""
    from dra_migrate.cli.migrate_cmd import execute
    from dra_migrate.cli.settings import Settings
    from dra_migrate.perf import parallel
    from dra_migrate.run import driver as run

    for i in range(5):
        (tmp_path / f"f{i}.yaml").write_text(GPU_DEPLOYMENT.replace("name: web", f"name: web{i}"))
    events: list[str] = []
    walk, read = run.discover, run.scan

    def discover(*args: Any, **kwargs: Any) -> Any:
        for found in walk(*args, **kwargs):
            events.append("found")
            yield found
        events.append("walk over")

    def scan(*args: Any) -> Any:
        events.append("read")
        return read(*args)

    monkeypatch.setattr(run, "discover", discover)
    monkeypatch.setattr(run, "scan", scan)
    monkeypatch.setattr(parallel, "LARGE_WALK", 2)  # the run looks at this many files before its first read
    assert execute(Settings.defaults("migrate", [str(tmp_path)], check=True, quiet=True)) == 1
    assert events.index("read") < events.index("walk over")
    assert events.count("read") == 5


def test_simulate_reads_its_settings_like_every_command(tmp_path: Path) -> None:
    import json
    import shutil

    from tests.conftest import REPO

    case = REPO / "golden" / "simulate" / "gfd-nodes"
    work = tmp_path / "w"
    shutil.copytree(case, work / "case")
    (work / ".git").mkdir()
    # a path in the config file is relative to the file; the environment picks the format
    (work / ".dra-migrate.yaml").write_text("inventory-from-nodes: case/nodes.yaml\n")
    res = cli(["simulate", "manifests.yaml"], work / "case", {"DRA_MIGRATE_FORMAT": "json"})
    assert res.returncode == int((case / "exit_code").read_text()), res.stderr
    assert json.loads(res.stdout) == json.loads((case / "report.json").read_text())
    (work / ".dra-migrate.yaml").write_text("replicas: -1\n")
    bad = cli(["simulate", "manifests.yaml"], work / "case")
    assert bad.returncode == 2 and "replicas: must be at least 0" in bad.stderr
