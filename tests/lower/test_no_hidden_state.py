"""process_source has no hidden global state: the only run-wide state is the RunContext (the pre-pass's names
in its options, the shared claim groups of its namer, on purpose). So a file gives the same result whatever was
processed before it, and in any thread — what a future `--jobs N` needs."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from dra_migrate.config import Options
from dra_migrate.lower.context import RepoFacts, RunContext
from dra_migrate.pipeline import process_source

ROOT = Path(__file__).resolve().parents[2]
INPUTS = sorted([*ROOT.glob("golden/*/input.*"), *ROOT.glob("tests/hostile/*.yaml")])


def _one(path: Path) -> tuple[bytes | None, list[str]]:
    fr = process_source(str(path.relative_to(ROOT)), path.read_bytes(), RunContext(Options()))
    return fr.output, [d.render() for d in fr.diagnostics]


def test_results_do_not_depend_on_order_or_thread() -> None:
    assert len(INPUTS) > 20
    serial = {p: _one(p) for p in INPUTS}
    backwards = {p: _one(p) for p in reversed(INPUTS)}
    with ThreadPoolExecutor(4) as pool:
        threaded = dict(zip(INPUTS, pool.map(_one, INPUTS), strict=True))
    assert backwards == serial
    assert threaded == serial


def test_names_come_from_the_pre_pass_not_from_earlier_files() -> None:
    from dra_migrate.lower.names import NameTable

    pod = (ROOT / "golden/deployment-basic/input.yaml").read_bytes()
    ctx = RunContext(Options())
    first = process_source("a.yaml", pod, ctx)
    second = process_source("b.yaml", pod, ctx)  # the same workload in another file: the same names
    assert first.output is not None and b"name: triton-gpu" in first.output
    assert second.output == first.output
    table = NameTable(files={"b.yaml": {(0, 3, ("spec", "template", "spec")): ("triton-deployment-gpu", "why")}})
    ctx.use(RepoFacts(names=table))  # what the run's pre-pass found applied with b.yaml
    third = process_source("b.yaml", pod, ctx)
    assert third.output is not None and b"name: triton-deployment-gpu" in third.output
    assert any(d.code == "DRA240" and "why" in d.message for d in third.diagnostics)
    assert process_source("a.yaml", pod, ctx).output == first.output
