"""--jobs N gives exactly the outcome of --jobs 1: files, diffs, diagnostics (in order), JSON report.

The tree is built to stress what is run-wide: the same workload names in the same namespace in many files
(template names must stay unique across the run), existing ResourceClaimTemplates that reserve names, a
time-slicing config governing one team's directory (shared ResourceClaims whose names workers in other
chunks may take too), invalid files, and files without GPU keys."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

import pytest

from dra_migrate.config import Options
from dra_migrate.lower.context import RepoFacts
from dra_migrate.perf import parallel
from dra_migrate.reports.json import render as report_json
from dra_migrate.run.driver import RunConfig, RunResult, run_migration
from dra_migrate.run.sharing_configs import inventory_from
from tests.integration_helpers import time_slicing_config

WORKLOAD = """apiVersion: apps/v1
kind: {kind}
metadata:
  name: {name}
  namespace: {ns}
spec:
  replicas: {replicas}
  template:
    spec:
      containers:
        - name: main
          image: example.com/train:1
          resources:
            limits:
              {resource}: {count}
"""
EXISTING_RCT = """---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: {name}
  namespace: {ns}
spec:
  spec:
    devices:
      requests:
        - name: gpu
          exactly:
            deviceClassName: gpu.nvidia.com
"""
PLAIN = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c{n}\n  namespace: {ns}\ndata:\n  a: b\n"
TIME_SLICING = time_slicing_config(4)
INVALID = "apiVersion: v1\nkind: Pod\nmetadata: {{name: broken{n}\nspec:\n  nvidia.com/gpu: 1\n"


def make_tree(root: Path, files: int = 300, seed: int = 7, sharing: bool = True) -> None:
    """`sharing`: with the time-slicing config (a repo-wide setting: then nothing is translated during the read)."""
    rnd = random.Random(seed)
    if sharing:
        (root / "team0").mkdir(parents=True)
        (root / "team0" / "time-slicing.yaml").write_text(TIME_SLICING)  # governs team0/** (shared claims there)
    for n in range(files):
        d = root / f"team{n % 7}" / f"app{n % 13}"
        d.mkdir(parents=True, exist_ok=True)
        ns = f"ns{n % 4}"
        roll = rnd.random()
        if roll < 0.25:
            text = PLAIN.format(n=n, ns=ns)
        elif roll < 0.30:
            text = INVALID.format(n=n)
        else:
            name = rnd.choice(["trainer", "trainer", "infer", f"job-{n}", f"svc-{n}"])
            rnd.random()  # (the draw that once chose a renamed .shared resource: the tree stays the same)
            text = WORKLOAD.format(
                kind=rnd.choice(["Deployment", "StatefulSet"]), name=name, ns=ns, replicas=rnd.randint(1, 3),
                resource="nvidia.com/gpu", count=rnd.randint(1, 2),
            )
            if rnd.random() < 0.1:  # a name that later files' templates must avoid
                text += EXISTING_RCT.format(name=rnd.choice(["trainer-gpu", "infer-gpu", "shared-gpu"]), ns=ns)
        (d / f"m{n:03d}.yaml").write_text(text)


def run(tree: Path, jobs: int | None, mode: str, out: Path | None) -> tuple[RunResult, str]:
    cfg = RunConfig([str(tree)], mode=mode, output_dir=out, options=Options(), jobs=jobs)
    result = run_migration(cfg)
    return result, report_json(cfg, result)


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def used(monkeypatch: pytest.MonkeyPatch) -> list[tuple[bool, int]]:
    """(workers were used, files translated again in the parent) for every run."""
    seen: list[tuple[bool, int]] = []
    close = parallel.Processor.close

    def spy(self: parallel.Processor) -> None:
        seen.append((self.executor is not None, self.conflicts))
        close(self)

    monkeypatch.setattr(parallel.Processor, "close", spy)
    return seen


@pytest.fixture(params=["--jobs 2", "auto, large walk", "early window"])
def par_jobs(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> int | None:
    """The --jobs of the parallel run, and how its workers start: at once (--jobs 2); with the first chunk
    because the walk is large (no --jobs, two CPUs); or with files past the first few started only after
    the read (the bound on early results that a huge repository hits)."""
    if request.param == "auto, large walk":
        monkeypatch.setattr(parallel, "default_jobs", lambda: 2)
        monkeypatch.setattr(parallel, "LARGE_WALK", 0)
        return None
    if request.param == "early window":
        monkeypatch.setattr(parallel, "EARLY_FILES", 60)
    return 2


@pytest.mark.parametrize("mode", ["write", "diff"])
def test_jobs_2_is_byte_identical_to_serial(
    tmp_path: Path, mode: str, used: list[tuple[bool, int]], par_jobs: int | None
) -> None:
    tree = tmp_path / "repo"
    make_tree(tree)
    outs: dict[int, tuple[RunResult, str, dict[str, bytes]]] = {}
    for n, jobs in enumerate((1, par_jobs)):
        out = tmp_path / f"out{n}" if mode == "write" else None
        result, report = run(tree, jobs, mode, out)
        outs[n] = (result, report, snapshot(out) if out else {})
    (serial, serial_report, serial_files), (par, par_report, par_files) = outs[0], outs[1]
    # --jobs 1 ran the serial executor (run.executor: no Processor to close), --jobs 2 in workers
    assert len(used) == 1 and used[0][0] is True
    # names taken in other chunks and shared groups spanning chunks send some files back to the parent (this
    # tree is built for it); the others are the workers' results
    assert 0 < used[0][1] < len(serial.files) - 16
    assert par_files == serial_files
    assert par.diffs == serial.diffs
    assert [d.render() for d in par.all_diagnostics] == [d.render() for d in serial.all_diagnostics]
    assert par_report == serial_report
    assert par.exit_code == serial.exit_code == 2  # changed files and invalid ones
    doc: dict[str, Any] = json.loads(serial_report)
    codes = {d["code"] for d in doc["diagnostics"]}
    assert {"DRA101", "DRA502", "DRA201"} <= codes  # invalid files, shared claims, templates all present
    if mode == "write":
        assert len(serial_files) == 301
        texts = b"\n".join(serial_files.values())
        assert b"name: trainer-statefulset-gpu" in texts or b"name: trainer-gpu-2" in texts  # collisions renamed


def test_template_names_unique_per_namespace_under_jobs_2(tmp_path: Path) -> None:
    tree = tmp_path / "repo"
    make_tree(tree)
    run(tree, 2, "write", tmp_path / "out")
    import yaml

    seen: set[tuple[str, str, str]] = set()
    for p in sorted((tmp_path / "out").rglob("*.yaml")):
        try:
            docs = list(yaml.safe_load_all(p.read_text()))
        except yaml.YAMLError:
            continue  # the invalid inputs, copied as they were
        for d in docs:
            if isinstance(d, dict) and d.get("kind") == "ResourceClaimTemplate" and "m" in p.name:
                # unique among the objects applied together (a directory here: lower.names), per namespace
                key = (str(p.parent), d["metadata"]["namespace"], d["metadata"]["name"])
                if key in seen:
                    # only the pre-existing templates of the input may repeat a name (they were there before)
                    assert key[2] in ("trainer-gpu", "infer-gpu", "shared-gpu")
                seen.add(key)
    assert seen


def test_dropping_the_ir_keeps_the_report(
    tmp_path: Path, used: list[tuple[bool, int]], par_jobs: int | None
) -> None:
    # `migrate` lets each file's IR go once settled (workers do not even send it): counts and diagnostics
    # in the report stay those of a run that keeps it
    tree = tmp_path / "repo"
    make_tree(tree)
    reports = []
    for jobs, keep in ((1, True), (par_jobs, False), (1, False)):
        cfg = RunConfig([str(tree)], mode="check", options=Options(), jobs=jobs, keep_ir=keep)
        result = run_migration(cfg)
        assert all(not f.lowered for f in result.files) is not keep
        reports.append(report_json(cfg, result))
    assert used[0][0] is True
    assert reports[0] == reports[1] == reports[2]
    assert json.loads(reports[0])["summary"]["workloadsMigrated"] > 0


SHARING_CONFIG = time_slicing_config(4, name="device-plugin-config", namespace="nvidia")
KUSTOMIZATION = "resources:\n- m000.yaml\npatches:\n- path: gpu-patch.yaml\n- path: gpu-overrides.yaml\n"


@pytest.mark.parametrize("late_setting", [False, True])
def test_translation_started_during_the_read_gives_the_serial_outcome(
    tmp_path: Path, late_setting: bool, used: list[tuple[bool, int]], monkeypatch: pytest.MonkeyPatch,
    par_jobs: int | None,
) -> None:
    # --jobs 2 starts translating while it still reads. A kustomize patch met early is skipped once the layout
    # is known; a sharing config met late (after translation started) sends everything back to the start.
    tree = tmp_path / "repo"
    make_tree(tree, sharing=False)
    patch_dir = tree / "kust"
    patch_dir.mkdir()
    (patch_dir / "m000.yaml").write_text(WORKLOAD.format(
        kind="Deployment", name="base", ns="ns0", replicas=1, resource="nvidia.com/gpu", count=1))
    (patch_dir / "kustomization.yaml").write_text(KUSTOMIZATION)
    # held back by its file name / started (its object's name is like no other's there), then skipped
    for name, workload in (("gpu-patch.yaml", "base"), ("gpu-overrides.yaml", "overrides")):
        (patch_dir / name).write_text(WORKLOAD.format(
            kind="Deployment", name=workload, ns="ns0", replicas=1, resource="nvidia.com/gpu", count=1))
    # named like a patch but listed by no kustomization: held back, then translated in the parent in its turn
    (tree / "team1" / "app1" / "cuda-patch-job.yaml").write_text(WORKLOAD.format(
        kind="Deployment", name="trainer", ns="ns1", replicas=1, resource="nvidia.com/gpu", count=2))
    if late_setting:
        (tree / "zz-late").mkdir()
        (tree / "zz-late" / "device-plugin.yaml").write_text(SHARING_CONFIG)
    calls: list[str] = []
    for name in ("reset", "skip"):
        original = getattr(parallel.Processor, name)
        monkeypatch.setattr(parallel.Processor, name,
                            lambda self, *a, _o=original, _n=name: (calls.append(_n), _o(self, *a))[1])
    outs = []
    for n, jobs in enumerate((1, par_jobs)):
        out = tmp_path / f"out{n}"
        result, report = run(tree, jobs, "write", out)
        outs.append((snapshot(out), [d.render() for d in result.all_diagnostics], report))
    assert used[0][0] is True
    assert outs[0] == outs[1]
    codes = {c for d in outs[0][1] for c in re.findall(r"\bDRA\d{3}\b", d)}
    assert "DRA715" in codes  # the patch was carried over with its base, not translated
    assert any("cuda-patch-job.yaml" in f and b"resourceClaim" in data for f, data in outs[1][0].items())
    assert ("reset" in calls) is late_setting
    assert ("skip" in calls) is not late_setting  # after a reset the patch is never submitted
    if late_setting:
        assert "DRA501" in codes  # the late config was seen by the pre-pass


def test_a_worker_keeps_its_claim_names_across_chunks_in_file_order(monkeypatch: pytest.MonkeyPatch) -> None:
    """The shared claim names a worker's earlier chunk took stay taken for its later chunks (the parent
    replays them first), but not for a chunk from earlier in the file order."""
    from dra_migrate.run.driver import load_rules

    rules, _problem = load_rules([])
    # the config beside the files governs them (its directory and below)
    sharing = inventory_from([("time-slicing.yaml", TIME_SLICING.encode()), ("f5.yaml", b"")])
    monkeypatch.setattr(parallel, "_WORKER", dict(options=Options(), facts=RepoFacts(sharing=sharing), rules=rules,
                                                  claims_elsewhere=False, keep_ir=False, namer=None))

    def claims(position: int, kind: str) -> list[Any]:
        # two pods at once either way (a Deployment's one replica and its rolling-update surge pod)
        text = WORKLOAD.format(kind=kind, name="web", ns="a", replicas=1 if kind == "Deployment" else 2,
                               resource="nvidia.com/gpu", count=1).encode()
        [(fr, trace)], _learned = parallel._translate_chunk([(f"f{position}.yaml", text, False, position, None)])
        assert fr.changed
        return sorted({returned for op, _args, returned in trace if op == "claim_name"})

    # another workload of the same name: its claim gets the kind once the first one's name is taken
    first, later, earlier = claims(5, "Deployment"), claims(9, "StatefulSet"), claims(2, "StatefulSet")
    assert first == ["web-shared-gpu"] and later == ["web-statefulset-shared-gpu"] and earlier == first


def test_flush_sends_the_leftovers_in_chunks_for_every_worker() -> None:
    """Once everything is submitted, files short of a chunk go out at once, split so both workers get some
    (waiting for their results to be asked for would leave them to one worker at the end of the run)."""
    from dra_migrate.run.driver import load_rules

    rules, _problem = load_rules([])
    assert rules is not None
    cfg = RunConfig(["."], options=Options(), jobs=2)
    pool = parallel.Processor(cfg, rules, parallel.RunContext(cfg.options))
    text = WORKLOAD.format(kind="Deployment", name="web", ns="a", replicas=1, resource="nvidia.com/gpu",
                           count=1).encode()
    tickets = [pool.submit(f"f{n}.yaml", text, False, n) for n in range(11)]
    assert not pool.chunks  # fewer than a chunk: nothing sent yet
    pool.flush()
    try:
        # one file is translated here before the fork (the warm-up); the other 10 go out in chunks of 3
        assert sorted(len(t) for t in pool.chunks.values()) == [1, 3, 3, 3]
        assert all(pool.result(t, f"f{n}.yaml", text, False).changed for n, t in enumerate(tickets))
    finally:
        pool.close()
