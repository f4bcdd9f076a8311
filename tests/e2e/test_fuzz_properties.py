"""Property tests over generated manifests (tests/fuzz_render.py renders them; the tool never does).

Invariants: no crash and no failed self-check, the output parses, documents without GPU requests are
byte-identical, a second run is a no-op, and nothing changes outside the intended paths (computed here
independently: strip the GPU keys, emptied limits/requests, claims, resourceClaims, the GPU toleration and
ResourceClaimTemplates from both sides and compare). `HYPOTHESIS_PROFILE=long` runs many more examples.
"""

from __future__ import annotations

import os
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings

from dra_migrate.config import Options
from dra_migrate.lower.context import RunContext
from dra_migrate.pipeline import process_source
from tests.fuzz_render import GPU, Layout, layouts, manifest, render_docs

settings.register_profile("default", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("long", max_examples=5000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

TOLERATION = {"key": GPU, "operator": "Exists", "effect": "NoSchedule"}


def _strip(v: Any) -> Any:
    if isinstance(v, list):
        items = [_strip(x) for x in v if not (isinstance(x, dict) and x.get("kind") == "ResourceClaimTemplate")]
        return [x for x in items if x != TOLERATION]
    if not isinstance(v, dict):
        return v
    out: dict[Any, Any] = {}
    for k, x in v.items():
        if k in (GPU, "resourceClaims") or (k == "claims" and isinstance(x, list)):
            continue
        x = _strip(x)
        if k in ("limits", "requests") and x == {}:
            continue
        if k == "tolerations" and x == []:
            continue
        out[k] = x
    return out


def normalize(text: bytes) -> list[Any]:
    docs = list(yaml.safe_load_all(text.decode("utf-8-sig")))
    return [_strip(d) for d in docs if not (isinstance(d, dict) and d.get("kind") == "ResourceClaimTemplate")]


def _has_gpu(v: Any) -> bool:
    if isinstance(v, dict):
        return GPU in v or any(_has_gpu(x) for x in v.values())
    return isinstance(v, list) and any(_has_gpu(x) for x in v)


def _run(raw: bytes) -> Any:
    return process_source("fuzz.yaml", raw, RunContext(Options()))


@given(manifest(), layouts)
def test_migration_properties(docs: list[dict[str, Any]], lay: Layout) -> None:
    raw = render_docs(docs, lay)
    assert yaml.safe_load_all(raw.decode("utf-8-sig")) is not None
    fr = _run(raw)
    codes = {d.code for d in fr.diagnostics}
    assert not codes & {"DRA901", "DRA902", "DRA903"}, [d.render() for d in fr.diagnostics]
    if fr.output is None:
        assert not fr.failed or codes & {"DRA202", "DRA203"}
        return
    out = fr.output
    assert normalize(out) == normalize(raw)
    for d in docs:  # documents without GPU requests are untouched, byte for byte
        if not _has_gpu(d) and len(docs) > 1:
            text = render_docs([d], Layout(**{**lay.__dict__, "bom": False, "trailing_newline": False}))
            assert text.decode() in out.decode("utf-8-sig")
    again = _run(out)
    assert again.output is None or again.output == out, "the second run must be a no-op"
    assert out.startswith(b"\xef\xbb\xbf") == lay.bom
    if lay.crlf:
        assert b"\n" not in out.replace(b"\r\n", b"")
