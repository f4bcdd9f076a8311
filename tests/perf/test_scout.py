"""The scout (dra_migrate.perf.scout): a run that takes its walk and read from a forked scout has exactly the
outcome of a run that walks and reads itself, also when the scout stops early; a scout nobody can use is
stopped and reaped."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from dra_migrate.config import Options
from dra_migrate.perf import scout
from dra_migrate.reports.json import render as report_json
from dra_migrate.run.driver import RunConfig, RunResult, run_migration
from dra_migrate.source.filescan import DEFAULT_MAX_BYTES
from tests.perf.test_parallel import make_tree, snapshot

ROOT = Path(__file__).resolve().parents[2]
KUSTOMIZATION = "resources:\n  - m000.yaml\npatches:\n  - path: patch-gpu.yaml\n"
PATCH = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: trainer\nspec:\n  template:\n" \
        "    spec:\n      containers:\n        - name: main\n          resources:\n            limits:\n" \
        "              nvidia.com/gpu: 1\n"


def build(root: Path) -> None:
    """make_tree's run-wide stress plus what only the walk and read decide: links (diagnostics of the
    walk), a file over the size limit, an unreadable file (a socket), a kustomization with a patch, ignored files."""
    make_tree(root, files=260)
    (root / "team0" / "kustomization.yaml").write_text(KUSTOMIZATION)
    (root / "team0" / "patch-gpu.yaml").write_text(PATCH)
    (root / "team1" / "big.yaml").write_text("# nvidia.com/gpu\n" + "x: y\n" * 400)
    (root / "team1" / "big-plain.yaml").write_text("a: b\n" * 400)
    (root / "team2" / "link.yaml").symlink_to(root / "team0" / "app0" / "m000.yaml")
    (root / "team2" / "away.yaml").symlink_to("/etc/hostname")
    (root / ".gitignore").write_text("ignored/\n")
    (root / "ignored").mkdir()
    (root / "ignored" / "gpu.yaml").write_text(PATCH)
    # a socket: walked as a file, and opening it fails (ENXIO), even for root
    here = os.getcwd()
    os.chdir(root / "team3")
    try:
        with socket.socket(socket.AF_UNIX) as s:
            s.bind("socket.yaml")
    finally:
        os.chdir(here)


def run(tree: Path, use_scout: bool) -> tuple[RunResult, str, dict[str, bytes]]:
    cfg = RunConfig([str(tree)], options=Options(), jobs=2, max_file_size=1000)
    if use_scout:
        scout.start(cfg.paths, cfg.excludes, cfg.gitignore, cfg.max_file_size)
        assert scout._pending is not None
    result = run_migration(cfg)
    assert scout._pending is None  # taken by the run
    return result, report_json(cfg, result), snapshot(tree)


def same_outcome(a: tuple[RunResult, str, dict[str, bytes]], b: tuple[RunResult, str, dict[str, bytes]],
                 pa: Path, pb: Path) -> None:
    ra, ja, ta = a
    rb, jb, tb = b
    assert ra.scanned == rb.scanned
    assert [str(d) for d in ra.all_diagnostics] == [str(d).replace(str(pb), str(pa)) for d in rb.all_diagnostics]
    assert ja == jb.replace(str(pb), str(pa))
    assert ta == tb


@pytest.fixture
def trees(tmp_path: Path) -> tuple[Path, Path]:
    a, b = tmp_path / "a" / "repo", tmp_path / "b" / "repo"
    build(a)
    build(b)
    return a, b


@pytest.fixture
def cpus(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scout, "usable_cpus", lambda: 2)


@pytest.fixture
def fell_back(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of files received before each fallback to the run's own walk."""
    calls: list[int] = []
    walk_rest = scout._walk_rest

    def spy(params: scout.Params, files: int, diagnosed: int, diagnostics: list[Any]) -> Any:
        calls.append(files)
        return walk_rest(params, files, diagnosed, diagnostics)

    monkeypatch.setattr(scout, "_walk_rest", spy)
    return calls


def test_a_scouted_run_is_the_run_that_reads_itself(
    trees: tuple[Path, Path], cpus: None, fell_back: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = trees
    mine = run(a, use_scout=False)
    lite: list[str] = []
    reads = scout.Scout.reads

    def spy(self: scout.Scout, diagnostics: list[Any]) -> Any:
        for f, scanned in reads(self, diagnostics):
            if isinstance(f, str):
                lite.append(f)
            yield f, scanned

    monkeypatch.setattr(scout.Scout, "reads", spy)
    scouted = run(b, use_scout=True)
    assert len(lite) > 50 and not fell_back  # the plain files came as paths only, and the scout finished
    codes = {d.code for d in scouted[0].all_diagnostics}
    assert {"DRA105", "DRA106", "DRA110", "DRA115"} <= codes  # the walk's and the read's own diagnostics
    assert scouted[0].scanned > 260
    same_outcome(mine, scouted, a, b)


def test_a_scout_that_stops_early_costs_nothing_but_time(
    trees: tuple[Path, Path], cpus: None, monkeypatch: pytest.MonkeyPatch, fell_back: list[int]
) -> None:
    # The child inherits the patched sender: it sends two small frames and dies without the last one.
    monkeypatch.setattr(scout, "_FRAME_FILES", 7)
    sends = [0]
    send = scout._Sender.send

    def dying_send(self: scout._Sender, records: list[object] | None) -> None:
        sends[0] += 1
        if sends[0] > 2:
            self.flush()
            os._exit(9)
        send(self, records)

    monkeypatch.setattr(scout._Sender, "send", dying_send)
    a, b = trees
    same_outcome(run(a, use_scout=False), run(b, use_scout=True), a, b)
    assert fell_back == [14]


def test_a_scout_for_another_walk_is_stopped_and_reaped(tmp_path: Path, cpus: None) -> None:
    make_tree(tmp_path, files=20)
    scout.start([str(tmp_path)], (), True, DEFAULT_MAX_BYTES)
    started = scout._pending
    assert started is not None
    assert scout.take([str(tmp_path)], ("*.json",), True, DEFAULT_MAX_BYTES) is None
    assert scout._pending is None
    with pytest.raises(ChildProcessError):
        os.waitpid(started.pid, os.WNOHANG)  # reaped: no zombie left behind


def test_a_finished_scout_is_reaped_when_its_last_frame_is_read(tmp_path: Path, cpus: None) -> None:
    make_tree(tmp_path, files=20)
    scout.start([str(tmp_path)], (), True, DEFAULT_MAX_BYTES)
    taken = scout.take([str(tmp_path)], (), True, DEFAULT_MAX_BYTES)
    assert taken is not None
    diagnostics: list[object] = []
    files = list(taken.reads(diagnostics))  # type: ignore[arg-type]
    assert len(files) == 21  # the 20 manifests and the time-slicing config
    assert sum(isinstance(f, str) for f, _scan in files) >= 1  # the ConfigMaps: only their path comes back
    with pytest.raises(ChildProcessError):
        os.waitpid(taken.pid, os.WNOHANG)


def test_no_scout_without_a_directory_or_a_second_cpu(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = tmp_path / "a.yaml"
    f.write_text(PATCH)
    monkeypatch.setattr(scout, "usable_cpus", lambda: 2)
    scout.start([str(f)], (), True, DEFAULT_MAX_BYTES)
    assert scout._pending is None
    monkeypatch.setattr(scout, "usable_cpus", lambda: 1)
    scout.start([str(tmp_path)], (), True, DEFAULT_MAX_BYTES)
    assert scout._pending is None


# The command line as `dra-migrate` runs it, recording whether a scout was started, whether the run took its
# records and whether it had to walk again itself (written by an exit handler: the CLI leaves through
# os._exit after running them).
CLI = """
import atexit, sys
from dra_migrate.perf import scout
events = []
init, reads, rest = scout.Scout.__init__, scout.Scout.reads, scout._walk_rest
def spy_init(self, *args):
    events.append("scout")
    init(self, *args)
def spy_reads(self, *args):
    events.append("taken")
    return reads(self, *args)
def spy_rest(*args):
    events.append("walked again")
    return rest(*args)
scout.Scout.__init__, scout.Scout.reads, scout._walk_rest = spy_init, spy_reads, spy_rest
atexit.register(lambda path=sys.argv[1]: open(path, "w").write(" ".join(events)))
from dra_migrate.entry import main
sys.argv = ["dra-migrate", *sys.argv[2:]]
main()
"""


def test_the_cli_scouts_a_directory_and_gives_the_serial_outcome(tmp_path: Path) -> None:
    """The command line starts the scout (two CPUs or more) and the parallel run gives --jobs 1's files and
    messages. Enough files that the run goes parallel on its own (parallel.LARGE_WALK)."""
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("one CPU: no scout, no workers")  # pragma: no cover
    outs = []
    for name, extra, scouted in (("serial", ["--jobs", "1"], ""), ("auto", [], "scout taken")):
        tree = tmp_path / name / "repo"
        make_tree(tree, files=1100)
        events = tmp_path / f"{name}.events"
        env = {k: v for k, v in os.environ.items() if not k.startswith("DRA_MIGRATE")}
        env["PYTHONPATH"] = str(ROOT)
        p = subprocess.run([sys.executable, "-c", CLI, str(events), "migrate", str(tree), *extra],
                           capture_output=True, text=True, env=env, cwd=tree.parent, timeout=300)
        assert p.returncode in (1, 2), p.stderr[-2000:]
        assert events.read_text() == scouted
        outs.append((p.returncode, p.stderr.replace(str(tree), "REPO"), snapshot(tree)))
    assert outs[0] == outs[1]


def test_a_run_that_stops_early_stops_and_reaps_its_scout(
    tmp_path: Path, cpus: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An interrupted run (it stops between files) kills the scout it took and reaps it."""
    import dra_migrate.run.driver as run_module
    from dra_migrate.perf import parallel

    make_tree(tmp_path, files=300)
    calls = [0]

    def interrupted_at_the_50th_file(*_args: Any) -> bool:
        calls[0] += 1
        return calls[0] > 50

    monkeypatch.setattr(run_module, "_interrupted", interrupted_at_the_50th_file)
    monkeypatch.setattr(scout, "_FRAME_FILES", 5)
    monkeypatch.setattr(parallel, "LARGE_WALK", 10)  # the run reads 10 files ahead, not the whole walk
    cfg = RunConfig([str(tmp_path)], mode="check", options=Options(), jobs=2)
    scout.start(cfg.paths, cfg.excludes, cfg.gitignore, cfg.max_file_size)
    started = scout._pending
    assert started is not None
    result = run_migration(cfg)
    assert result.scanned == 50
    with pytest.raises(ChildProcessError):
        os.waitpid(started.pid, os.WNOHANG)
    assert not started._ended  # the run stopped before the scout's last frame


CONFIG_FILE = 'target-version: "1.35"\nsharing: exclusive\n'


@pytest.mark.parametrize(("extra", "scouted"), [
    (["--target-version", "1.35"], True),
    (["--check", "--format", "json"], True),
    (["--report", "json=report.json", "--feature-gates", "DRAConsumableCapacity=true"], True),
    (["--output-dir", "out"], True),  # the scout sends every file's bytes: the plain ones are copied too
    (["--exclude", "team1/*", "--no-gitignore", "--max-file-size", "2000"], True),  # the walk's own settings
    (["--config-file"], True),  # (a .dra-migrate.yaml in the tree, not an option)
    (["--strategy", "extended-resource"], False),  # the bridge walks on its own
    (["--rules", "rules"], False),  # a pack's prefilter strings are not the scout's
], ids=["target-version", "check-format-json", "report-gates", "output-dir", "walk-settings", "config-file",
        "bridge", "rules"])
def test_every_command_line_that_walks_is_scouted_with_the_serial_outcome(
    tmp_path: Path, extra: list[str], scouted: bool
) -> None:
    """The command lines users type take the scout (and the workers) as the bare one does, with the outcome
    of the serial reference executor: same exit code, output, messages, files, report and output tree."""
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("one CPU: no scout, no workers")  # pragma: no cover
    outs = []
    for name, env_extra in (("serial", {"DRA_MIGRATE_EXECUTOR": "serial"}), ("default", {})):
        work = tmp_path / name
        tree = work / "repo"
        make_tree(tree, files=300)
        args = list(extra)
        if args == ["--config-file"]:
            (tree / ".dra-migrate.yaml").write_text(CONFIG_FILE)
            args = []
        if "--rules" in args:
            (work / "rules").mkdir()
        events = work / "events"
        env = {k: v for k, v in os.environ.items() if not k.startswith("DRA_MIGRATE")}
        env.update(PYTHONPATH=str(ROOT), **env_extra)
        p = subprocess.run([sys.executable, "-c", CLI, str(events), "migrate", "repo", "--no-progress", *args],
                           capture_output=True, text=True, env=env, cwd=work, timeout=300)
        assert p.returncode in (0, 1, 2), p.stderr[-2000:]
        if name == "default":
            assert events.read_text() == ("scout taken" if scouted else ""), p.stderr[-2000:]
        report = work / "report.json"
        outs.append((p.returncode, p.stdout, p.stderr, snapshot(tree),
                     snapshot(work / "out") if (work / "out").exists() else None,
                     report.read_text() if report.exists() else None))
    assert outs[0] == outs[1]
    assert outs[1][3] or outs[1][4]
