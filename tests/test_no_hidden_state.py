"""process_source has no hidden global state: the only run-wide state is the RunContext (its namer, on
purpose). So a file gives the same result whatever was processed before it, and in any thread — what a
future `--jobs N` needs."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from dra_migrate.lower.context import Options, RunContext
from dra_migrate.pipeline import process_source

ROOT = Path(__file__).resolve().parents[1]
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


def test_namer_is_the_only_shared_state() -> None:
    pod = (ROOT / "golden/deployment-basic/input.yaml").read_bytes()
    ctx = RunContext(Options())
    first = process_source("a.yaml", pod, ctx)
    second = process_source("b.yaml", pod, ctx)  # same workload name: the run-wide namer must pick another
    assert first.output is not None and second.output is not None
    assert first.output != second.output
    assert process_source("c.yaml", pod, RunContext(Options())).output == first.output
