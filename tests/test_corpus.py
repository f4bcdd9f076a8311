"""Every real manifest in ../shared/corpus/visible is handled without a crash and with a sensible result."""

from __future__ import annotations

from pathlib import Path

import pytest

from dra_migrate.diagnostics import Severity
from dra_migrate.lower.context import Options, RunContext
from dra_migrate.pipeline import process_source
from dra_migrate.source.reader import parse_source
from tests.conftest import CORPUS, require_shared
from tests.oracle import documents, schema_errors

FILES = sorted(p for p in CORPUS.glob("*") if p.suffix in (".yaml", ".yml", ".json")) if CORPUS.is_dir() else []
INTERNAL = {"DRA901", "DRA902", "DRA903"}


def _index() -> dict[str, str]:
    rows = (CORPUS / "INDEX.tsv").read_text().splitlines()[1:]
    return {r.split("\t")[0]: r.split("\t")[-1] for r in rows if r}


def test_corpus_present() -> None:
    require_shared()
    assert FILES


@pytest.mark.parametrize("path", FILES, ids=[p.name[:80] for p in FILES])
def test_corpus_file(path: Path) -> None:
    require_shared()
    raw = path.read_bytes()
    result = process_source(path.name, raw, RunContext(Options()))
    codes = {d.code for d in result.diagnostics}
    assert not codes & INTERNAL, [d.render() for d in result.diagnostics]
    features = _index().get(path.name, "")
    if "yaml-unparseable" in features:
        assert result.failed and result.output is None
        assert codes & {"DRA101", "DRA102"}
        return
    if not result.changed:
        return
    assert result.output is not None
    out = result.output
    # the output parses, a second run is a no-op, and every emitted/changed object validates
    parse_source(path.name, out)
    again = process_source(path.name, out, RunContext(Options()))
    assert not again.changed
    before = documents(raw, path.name)
    for obj in documents(out, path.name):
        if obj in before:
            continue
        err = schema_errors(obj, "1.34")
        assert err is None, err


def test_corpus_results_are_sensible() -> None:
    """A few real files whose expected outcome is known exactly."""
    require_shared()
    expectations = {
        "NVIDIA__k8s-device-plugin__testdata__job-1.yaml": "changed",
        "kubernetes__examples__AI__vllm-deployment__vllm-deployment.yaml": "changed",
        "triton-inference-server__server__deploy__k8s-onprem__templates__deployment.yaml": "DRA102",
        "GoogleCloudPlatform__kubernetes-engine-samples__autoscaling__custom-compute-classes__reservations"
        "__deployment-gpu.yaml": "DRA203",
        "Project-HAMi__HAMi__examples__nvidia__use_memory_fraction.yaml": "unchanged",
    }
    for name, want in expectations.items():
        path = CORPUS / name
        result = process_source(name, path.read_bytes(), RunContext(Options()))
        codes = {d.code for d in result.diagnostics}
        if want == "changed":
            assert result.changed, name
            assert not any(d.severity is Severity.ERROR for d in result.diagnostics), name
        elif want == "unchanged":
            assert not result.changed, name
        else:
            assert want in codes, (name, codes)
            assert not result.changed
