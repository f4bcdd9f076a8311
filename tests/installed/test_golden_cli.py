"""Every golden case through the installed console script: args.json as command-line flags, run in a copy of
the case, then every written file and the exit code compared with expected/ and expected.json (the diagnostics
text is the in-process runner's, tests/e2e/test_golden.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import GOLDEN
from tests.golden_runner import case_args, expected, tree_files
from tests.installed.conftest import Installed, assert_no_crash

CASES = sorted(p for p in GOLDEN.iterdir() if p.is_dir() and any(f.name.startswith("input") for f in p.iterdir()))

# args.json key -> how tests/golden_runner.py applies it, as the CLI spells it
VALUE_FLAGS = {"target_version": "--target-version", "feature_gates": "--feature-gates", "strategy": "--strategy",
               "sharing_strategy": "--sharing", "claims_out": "--claims-out",  # claims_out: relative to the run
               "max_file_size": "--max-file-size"}
SWITCHES = {"bridge_emit_gpu_class": "--bridge-emit-gpu-class", "move_cloud_labels": "--move-cloud-labels",
            "share_within_pod": "--share-within-pod", "strict": "--strict"}
PATH_LISTS = {"rules": "--rules", "sharing_configs": "--sharing-config"}  # relative to the case
# which inputs the run names (the others are the repository around it), and whether it finds a root
RUN_SHAPE = ("paths", "repository_root")
# keys applied to the work directory instead: "layout" places the inputs in a tree (_run), "sharing_scopes" is
# written to the work directory's .dra-migrate.yaml (it has no command-line spelling: the file is its place)
TREE_KEYS = {"layout", "sharing_scopes"}
CONFIGURATION = ".dra-migrate.yaml"


def cli_flags(case: Path) -> list[str]:
    args = case_args(case)
    flags: list[str] = []
    for key, value in args.items():
        if key in VALUE_FLAGS:
            flags += [VALUE_FLAGS[key], str(value)]
        elif key in SWITCHES:
            flags += [SWITCHES[key]] if value else []
        elif key in PATH_LISTS:
            for rel in value:
                flags += [PATH_LISTS[key], str((case / rel).resolve())]
        elif key not in RUN_SHAPE and key not in TREE_KEYS:
            pytest.fail(f"{case.name}/args.json: {key!r} has no command-line spelling here; add it to this map")
    return flags


@dataclass(frozen=True)
class CliRun:
    proc: subprocess.CompletedProcess[str]
    files: dict[str, bytes]


def _run(installed: Installed, case: Path, workdir: Path) -> CliRun:
    workdir.mkdir()
    for f in case.iterdir():
        if f.name.startswith("input"):
            if f.is_dir():  # a tree (kustomize bases and overlays)
                shutil.copytree(f, workdir / f.name, symlinks=True)
            else:
                shutil.copy2(f, workdir / f.name)
    args = case_args(case)
    layout = {str(k): str(v) for k, v in dict(args.get("layout") or {}).items()}  # type: ignore[call-overload]
    for name, rel in layout.items():
        (workdir / rel).parent.mkdir(parents=True, exist_ok=True)
        (workdir / name).replace(workdir / rel)
    top = sorted({Path(rel).parts[0] for rel in layout.values()}
                 | {p.name for p in workdir.iterdir() if p.name not in layout})
    inputs = [str(p) for p in args.get("paths", top)]  # type: ignore[attr-defined]
    if args.get("sharing_scopes"):  # (found walking up from the first path, to the repository root)
        (workdir / CONFIGURATION).write_text(json.dumps({"sharing-scopes": args["sharing_scopes"]}))
    cwd = workdir
    if args.get("repository_root", True) is False:  # no git, no config file, and the paths outside the cwd
        cwd = workdir.with_name(workdir.name + "-elsewhere")
        cwd.mkdir()
        inputs = [str(workdir / name) for name in inputs]
    else:  # the case's directory is the repository (tests/golden_runner.py gives it as the context root)
        subprocess.run(["git", "init", "-q", str(workdir)], check=True)
    proc = installed.run(["migrate", *inputs, *cli_flags(case), "--no-progress"], cwd=cwd)
    shutil.rmtree(workdir / ".git", ignore_errors=True)
    (workdir / CONFIGURATION).unlink(missing_ok=True)
    for name, rel in layout.items():
        (workdir / rel).replace(workdir / name)
    return CliRun(proc, tree_files(workdir))


@pytest.fixture(scope="module")
def runs(installed: Installed, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
         ) -> dict[str, CliRun]:
    """The selected cases, run side by side (one process each, as many at once as there are CPUs)."""
    wanted = [item.callspec.params["case"] for item in request.session.items
              if getattr(item, "originalname", "") == "test_golden_case_through_the_console_script"]
    base = tmp_path_factory.mktemp("golden-cli")
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        done = dict(zip((c.name for c in wanted), pool.map(lambda c: _run(installed, c, base / c.name), wanted),
                        strict=True))
    return done


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_golden_case_through_the_console_script(case: Path, runs: dict[str, CliRun]) -> None:
    run = runs[case.name]
    assert_no_crash(run.proc)
    exp_files, _diagnostics, exp_code = expected(case)
    assert sorted(run.files) == sorted(exp_files), run.proc.stderr
    for name, data in exp_files.items():
        assert run.files[name] == data, f"{name} differs from {case.name}/expected/{name}\n{run.proc.stderr}"
    assert run.proc.returncode == exp_code, run.proc.stderr


SIMULATE_CASES = sorted(p for p in (GOLDEN / "simulate").iterdir() if p.is_dir())


@pytest.mark.parametrize("case", SIMULATE_CASES, ids=[c.name for c in SIMULATE_CASES])
def test_simulate_golden_case_through_the_console_script(case: Path, installed: Installed, tmp_path: Path) -> None:
    """`simulate` reads the bundled device shapes (rules/simulate, its schema): the reports of
    golden/simulate/ from the installed copy, in a copy of the case (paths in the report are relative)."""
    work = tmp_path / case.name
    shutil.copytree(case, work)
    args = ["simulate", *sorted(p.name for p in work.glob("manifests*.yaml"))]
    if (work / "inventory.yaml").exists():
        args += ["--inventory", "inventory.yaml"]
    if (work / "nodes.yaml").exists():
        args += ["--inventory-from-nodes", "nodes.yaml"]
    if (work / "args.json").exists():
        args += json.loads((work / "args.json").read_text(encoding="utf-8"))
    for fmt, expected_file in (("text", "report.txt"), ("json", "report.json")):
        proc = installed.run([*args, "--format", fmt], cwd=work)
        assert_no_crash(proc)
        want = (case / expected_file).read_text(encoding="utf-8")
        assert (proc.stdout if fmt == "text" else json.loads(proc.stdout)) == (
            want if fmt == "text" else json.loads(want)), proc.stderr
        assert proc.returncode == int((case / "exit_code").read_text(encoding="utf-8"))
