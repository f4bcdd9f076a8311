"""The serial executor (run.executor) is the reference, and perf/ is optional by construction: with perf/
unimportable (as if deleted), every golden case gives byte for byte the files, the diagnostics and the exit
code of the default executor, and the console entry point works.

perf/ is hidden in a subprocess by a meta-path finder that refuses dra_migrate.perf and everything in it, as
Python does when the directory is gone. One subprocess runs all the golden cases."""

from __future__ import annotations

import json
import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dra_migrate.config import Options
from dra_migrate.lower.context import RunContext
from dra_migrate.run import executor
from dra_migrate.run.driver import RunConfig, load_rules
from dra_migrate.run.writes import DirectWrites
from tests.e2e.test_golden import CASES
from tests.golden_runner import expected, run_case

REPO = Path(__file__).resolve().parents[2]

HIDE_PERF = """
import importlib.abc, sys

class _NoPerf(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "dra_migrate.perf" or name.startswith("dra_migrate.perf."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)  # as if perf/ were deleted
        return None

sys.meta_path.insert(0, _NoPerf())
"""

GOLDENS_WITHOUT_PERF = HIDE_PERF + """
import pickle
from pathlib import Path
from tests.golden_runner import run_case
from tests.e2e.test_golden import CASES

out, work = Path(sys.argv[1]), Path(sys.argv[2])
results = {}
for case in CASES:
    workdir = work / case.name
    workdir.mkdir()
    results[case.name] = run_case(case, workdir)
loaded = sorted(m for m in sys.modules if m.startswith("dra_migrate.perf"))
out.write_bytes(pickle.dumps({"results": results, "perf_loaded": loaded}))
"""

ENTRY = """
import sys
from dra_migrate import entry
sys.argv = ["dra-migrate", *sys.argv[1:]]
entry.main()
"""


def _python(code: str, *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
            ) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, check=False, cwd=cwd or REPO,
                          env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})}, timeout=600)


def test_the_goldens_without_perf_are_those_of_the_default_executor(tmp_path: Path) -> None:
    (tmp_path / "serial").mkdir()
    done = _python(GOLDENS_WITHOUT_PERF, str(tmp_path / "out.pickle"), str(tmp_path / "serial"))
    assert done.returncode == 0, done.stderr.decode()
    serial = pickle.loads((tmp_path / "out.pickle").read_bytes())
    assert serial["perf_loaded"] == []
    assert sorted(serial["results"]) == sorted(c.name for c in CASES)
    for case in CASES:
        workdir = tmp_path / "default" / case.name
        workdir.mkdir(parents=True)
        default = run_case(case, workdir)  # this process: perf/ is there, the default executor runs
        files, diags, code = serial["results"][case.name]
        assert files == default[0], case.name
        assert diags == default[1], case.name
        assert code == default[2], case.name
        assert (files, diags, code) == expected(case), case.name


def _tree(root: Path) -> Path:
    """A small repository: a few golden inputs with GPU requests, and one file without."""
    repo = root / "repo"
    repo.mkdir()
    plain = [c for c in CASES if not (c / "args.json").exists() and expected(c)[2] == 1
             and all(f.is_file() for f in c.glob("input*"))]
    for case in plain[:4]:
        for f in sorted(case.glob("input*")):
            shutil.copy2(f, repo / f"{case.name}-{f.name}")
    (repo / "config.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n")
    assert len(list(repo.iterdir())) > 1
    return repo


@pytest.mark.parametrize("argv", [["migrate", "--diff", "repo"], ["migrate", "repo"]], ids=["diff", "in place"])
def test_the_console_entry_point_works_without_perf(tmp_path: Path, argv: list[str]) -> None:
    outcomes = []
    for n, code in enumerate((HIDE_PERF + ENTRY, ENTRY)):
        work = tmp_path / str(n)
        work.mkdir()
        repo = _tree(work)
        done = _python(code, *argv, cwd=work)
        files = {p.name: p.read_bytes() for p in sorted(repo.iterdir())}
        outcomes.append((done.returncode, done.stdout, done.stderr, files))
    without, default = outcomes
    assert without[0] == 1, without[2].decode()  # files changed (or would)
    assert without == default


def test_the_console_entry_point_runs_other_commands_without_perf() -> None:
    done = _python(HIDE_PERF + ENTRY, "rules")
    assert done.returncode == 0, done.stderr.decode()
    assert b"DRA" in done.stdout


def _select(jobs: int | None) -> tuple[object, object]:
    rules, _problem = load_rules([])
    assert rules is not None
    cfg = RunConfig(["."], options=Options(), jobs=jobs)
    pool, writes = executor.select(cfg, rules, RunContext(cfg.options))
    pool.close()
    return pool, writes


def test_the_default_executor_is_perf_s(monkeypatch: pytest.MonkeyPatch) -> None:
    from dra_migrate.perf.background import BackgroundWrites
    from dra_migrate.perf.parallel import Processor

    monkeypatch.delenv(executor.EXECUTOR_ENV, raising=False)
    pool, writes = _select(None)
    assert isinstance(pool, Processor) and isinstance(writes, BackgroundWrites)
    pool, writes = _select(1)  # --jobs 1: translated here, written in the background
    assert isinstance(pool, executor.SerialExecutor) and isinstance(writes, BackgroundWrites)


def test_the_environment_forces_the_serial_executor(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(executor.EXECUTOR_ENV, "serial")
    pool, writes = _select(None)
    assert isinstance(pool, executor.SerialExecutor) and isinstance(writes, DirectWrites)


def test_without_perf_the_run_is_serial(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(executor.EXECUTOR_ENV, raising=False)
    monkeypatch.setitem(sys.modules, "dra_migrate.perf.parallel", None)  # import raises ImportError
    pool, writes = _select(4)
    assert isinstance(pool, executor.SerialExecutor) and isinstance(writes, DirectWrites)


def test_a_forced_serial_command_line_engages_no_speed_machinery(tmp_path: Path) -> None:
    repo = _tree(tmp_path)
    probe = ("import atexit, sys; atexit.register(lambda: sys.__stderr__.write("
             "'perf=' + json.dumps(sorted(m for m in sys.modules if m.startswith('dra_migrate.perf'))) + '\\n'));"
             "import json\n" + ENTRY)
    done = _python(probe, "migrate", "--check", str(repo), env={executor.EXECUTOR_ENV: "serial"})
    assert done.returncode == 1, done.stderr.decode()
    line = next(x for x in done.stderr.decode().splitlines() if x.startswith("perf="))
    assert json.loads(line[len("perf="):]) == []


def test_each_mechanism_has_its_own_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    """DRA_MIGRATE_PERF_OFF (perf.switches) turns one mechanism off, for benchmarks/run.py --ablate."""
    from dra_migrate.perf import switches
    from dra_migrate.perf.background import BackgroundWrites
    from dra_migrate.perf.parallel import EARLY_FILES, Processor

    monkeypatch.delenv(executor.EXECUTOR_ENV, raising=False)
    monkeypatch.setenv(switches.OFF_ENV, "workers")
    pool, writes = _select(None)
    assert isinstance(pool, executor.SerialExecutor) and isinstance(writes, BackgroundWrites)
    monkeypatch.setenv(switches.OFF_ENV, "background")
    pool, writes = _select(None)
    assert isinstance(pool, Processor) and isinstance(writes, DirectWrites) and pool.early_files == EARLY_FILES
    monkeypatch.setenv(switches.OFF_ENV, " early , caches")
    pool, writes = _select(None)
    assert isinstance(pool, Processor) and isinstance(writes, BackgroundWrites) and pool.early_files == 0
    assert switches.off("caches") and not switches.off("scout")
    monkeypatch.setenv(executor.EXECUTOR_ENV, "serial")
    assert all(switches.off(m) for m in switches.MECHANISMS)


@pytest.mark.parametrize("mechanism", ["workers", "early", "scout", "background", "caches"])
def test_a_command_line_with_one_mechanism_off_gives_the_same_outcome(tmp_path: Path, mechanism: str) -> None:
    outcomes = []
    for n, off in enumerate(("", mechanism)):
        work = tmp_path / str(n)
        work.mkdir()
        repo = _tree(work)
        done = _python(ENTRY, "migrate", "--jobs", "2", "repo", cwd=work, env={"DRA_MIGRATE_PERF_OFF": off})
        files = {p.name: p.read_bytes() for p in sorted(repo.iterdir())}
        outcomes.append((done.returncode, done.stdout, done.stderr, files))
    assert outcomes[0][0] == 1, outcomes[0][2].decode()
    assert outcomes[0] == outcomes[1]


def test_files_held_for_their_names_come_out_as_in_a_serial_run(tmp_path: Path) -> None:
    """Workloads of one directory whose claim templates could be named alike wait for the names pre-pass, then
    start on the workers while the kustomize pre-pass runs (run.driver._Early.release): their names are the
    pre-pass's, byte for byte those of a serial run and of the golden."""
    case = REPO / "golden" / "names-apply-unit"
    outcomes = []
    for jobs in ("2", "1"):
        repo = tmp_path / jobs / "repo"
        repo.mkdir(parents=True)
        for f in sorted(case.glob("input*")):
            shutil.copy2(f, repo / f.name)
        done = _python(ENTRY, "migrate", "--jobs", jobs, "repo", cwd=repo.parent)
        assert done.returncode == 1, done.stderr.decode()
        outcomes.append({p.name: p.read_bytes() for p in sorted(repo.iterdir())})
    assert outcomes[0] == outcomes[1]
    for name, data in outcomes[0].items():
        assert data == (case / "expected" / name).read_bytes(), name


def _verdicts(cache: Path) -> set[str]:
    (memo,) = (cache / "dra-migrate").glob("selector-verdicts-*.json")
    return set(json.loads(memo.read_bytes())["verdicts"])


def test_a_parallel_run_remembers_the_verdicts_its_workers_gave(tmp_path: Path) -> None:
    """The workers' selector verdicts reach the run's memo (perf.verdict_memo.merge), as a serial run's do: the
    next run of the same version does not evaluate them again."""
    repo = tmp_path / "repo"
    repo.mkdir()
    products = ["NVIDIA-A100-SXM4-80GB", "NVIDIA-H100-80GB-HBM3", "Tesla-T4", "NVIDIA-L4", "NVIDIA-A10G",
                "NVIDIA-L40S", "Tesla-V100-SXM2-16GB", "NVIDIA-A100-SXM4-40GB"]
    for n in range(40):  # the first (the main process translates it before forking) checks no selector
        select = f"      nodeSelector:\n        nvidia.com/gpu.product: {products[n % len(products)]}\n" if n else ""
        (repo / f"app{n:02}.yaml").write_text(
            f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app{n}\nspec:\n  template:\n    spec:\n"
            f"{select}"
            "      containers:\n      - name: c\n        image: i\n        resources:\n          limits:\n"
            f"            nvidia.com/gpu: {1 + n % 3}\n")
    seen = []
    for jobs in ("2", "1"):
        cache = tmp_path / f"cache{jobs}"
        done = _python(ENTRY, "migrate", "--jobs", jobs, "--check", "repo", cwd=tmp_path,
                       env={"XDG_CACHE_HOME": str(cache)})
        assert done.returncode == 1, done.stderr.decode()
        seen.append(_verdicts(cache))
    assert len(seen[1]) == len(products)
    assert seen[0] == seen[1]
