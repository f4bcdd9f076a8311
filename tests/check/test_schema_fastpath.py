"""The jsonschema-rs pre-check of dra_migrate.check.validate.schema agrees with python-jsonschema on validity.

An object jsonschema-rs finds valid skips python-jsonschema entirely, so any object the Rust validator accepts
and python-jsonschema rejects would silently lose its schema issues. These tests compare both validators on every
golden input and expected output, and on deliberately invalid objects, for every supported release and both
strictness modes; and check that validate_object returns exactly what the python-jsonschema path alone returns.
"""

from __future__ import annotations

import copy
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from dra_migrate.check.validate import schema
from dra_migrate.ruleset.features import SUPPORTED_VERSIONS

jsonschema_rs = pytest.importorskip("jsonschema_rs")

GOLDEN = Path(__file__).resolve().parents[2] / "golden"
MODES = [(release, strict) for release in SUPPORTED_VERSIONS for strict in (True, False)]
MODE_IDS = [f"{release}-{'strict' if strict else 'lax'}" for release, strict in MODES]

# Every keyword that appears in a schema position of the bundled definitions. Agreement on the goldens only
# covers what they exercise; a keyword outside this set (a `pattern` with its regex dialect, `format` with a
# checker, `minimum`...) needs its own invalid cases below before the pre-check can be trusted with it.
CHECKED_KEYWORDS = {
    "$ref",
    "additionalProperties",
    "enum",
    "format",
    "items",
    "oneOf",
    "properties",
    "required",
    "type",
}
ANNOTATIONS = {"$id", "$schema", "$defs", "description", "default", "example"}


def _golden_objects() -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = []
    for case in sorted(p for p in GOLDEN.iterdir() if p.is_dir()):
        files = sorted(case.glob("input.*")) + sorted(p for p in (case / "expected").glob("*") if p.is_file())
        for path in files:
            try:
                docs = list(yaml.safe_load_all(path.read_text(encoding="utf-8-sig")))
            except (yaml.YAMLError, UnicodeDecodeError):
                continue
            for i, doc in enumerate(docs):
                if (
                    isinstance(doc, dict)
                    and isinstance(doc.get("apiVersion"), str)
                    and isinstance(doc.get("kind"), str)
                ):
                    out.append((f"{path.relative_to(GOLDEN)}#{i}", doc))
    return out


GOLDEN_OBJECTS = _golden_objects()


def _both(
    obj: dict[str, Any], release: str, strict: bool, kind: str | None = None, api_version: str | None = None
) -> tuple[bool | None, bool] | None:
    """(jsonschema-rs says valid — None when it cannot take the data —, python-jsonschema says valid), or None
    when the release has no schema for the object. kind/apiVersion: the schema to use, by default the object's."""
    kind, api_version = kind or obj["kind"], api_version or obj["apiVersion"]
    slow = schema._validator(kind, api_version, release, strict)
    if slow is None:
        return None
    fast = schema._rs_validator(kind, api_version, release, strict)
    assert fast is not None, f"no jsonschema-rs validator for {api_version} {kind} under {release}"
    try:
        rs_valid: bool | None = bool(fast.is_valid(obj))
    except ValueError:  # e.g. a YAML timestamp parsed to a datetime: the pre-check falls back
        rs_valid = None
    return rs_valid, next(iter(slow.iter_errors(obj)), None) is None


def test_golden_objects_found() -> None:
    kinds = {o["kind"] for _, o in GOLDEN_OBJECTS}
    assert len(GOLDEN_OBJECTS) > 100
    assert {"Deployment", "ResourceClaimTemplate", "Pod"} <= kinds


@pytest.mark.parametrize(("release", "strict"), MODES, ids=MODE_IDS)
def test_golden_objects_agree(release: str, strict: bool) -> None:
    compared = valid = 0
    disagreements = []
    for where, obj in GOLDEN_OBJECTS:
        both = _both(obj, release, strict)
        if both is None:
            continue
        rs_valid, py_valid = both
        if rs_valid is None:
            continue
        compared += 1
        valid += py_valid
        if rs_valid != py_valid:
            disagreements.append(f"{where}: jsonschema-rs {rs_valid}, python-jsonschema {py_valid}")
    assert not disagreements, "\n".join(disagreements)
    # Both outcomes are exercised: inputs hold invalid objects under some release (resource.k8s.io/v1beta1 fields,
    # strict unknown fields) and outputs valid ones.
    assert compared > 100 and valid > 50


def _deployment() -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "train", "labels": {"app": "train"}, "creationTimestamp": None},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "train"}},
            "template": {
                "metadata": {"labels": {"app": "train"}},
                "spec": {
                    "containers": [
                        {
                            "name": "main",
                            "image": "nvcr.io/nvidia/pytorch:24.01-py3",
                            "ports": [{"containerPort": 8080}],
                            "resources": {"limits": {"cpu": "2", "memory": "4Gi"}},
                            "resources_placeholder": None,
                        }
                    ],
                    "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpu"}],
                },
            },
        },
    }


def _exactly(api_version: str) -> bool:
    """resource.k8s.io/v1beta2 and v1 moved the device class and selectors of a request under `exactly`."""
    return api_version.endswith(("/v1", "/v1beta2"))


def _claim_template(api_version: str) -> dict[str, Any]:
    exact = {"deviceClassName": "gpu.nvidia.com"}
    request = {"name": "gpu", "exactly": exact} if _exactly(api_version) else {"name": "gpu", **exact}
    return {
        "apiVersion": api_version,
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "gpu"},
        "spec": {"spec": {"devices": {"requests": [request]}}},
    }


def _set(obj: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    *parents, last = path.split(".")
    node: Any = out
    for key in parents:
        node = node[int(key)] if isinstance(node, list) else node[key]
    node[int(last) if isinstance(node, list) else last] = value
    return out


def _drop(obj: dict[str, Any], path: str) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    *parents, last = path.split(".")
    node: Any = out
    for key in parents:
        node = node[int(key)] if isinstance(node, list) else node[key]
    del node[last]
    return out


CONTAINER = "spec.template.spec.containers.0"


def _variants() -> Iterator[tuple[str, dict[str, Any], bool | None]]:
    """(name, object, python-jsonschema validity: True/False in both modes, None when only strict rejects it)."""
    base = _drop(_deployment(), f"{CONTAINER}.resources_placeholder")
    yield "valid", base, True
    yield "unknown field", _deployment(), None
    yield "unknown top-level field", _set(base, "extra", 1), None
    yield "misspelt nested field", _set(base, f"{CONTAINER}.imagePullPolcy", "Always"), None
    yield "string for integer", _set(base, "spec.replicas", "3"), False
    yield "bool for integer", _set(base, "spec.replicas", True), False
    yield "fractional for integer", _set(base, "spec.replicas", 2.5), False
    yield "integral float for integer", _set(base, "spec.replicas", 2.0), True
    yield "NaN for integer", _set(base, "spec.replicas", float("nan")), False
    yield "infinity for integer", _set(base, "spec.replicas", float("inf")), False
    yield "null where nullable", _set(base, "spec.replicas", None), True
    yield "huge integer (int32 is a format)", _set(base, "spec.replicas", 2**70), True
    yield "negative integer", _set(base, "spec.replicas", -1), True
    yield "object for string", _set(base, f"{CONTAINER}.image", {"a": 1}), False
    yield "list for object", _set(base, "spec.selector", ["app"]), False
    yield "integer label value", _set(base, "metadata.labels.app", 1), False
    yield "bad date-time (format not checked)", _set(base, "metadata.creationTimestamp", "yesterday"), True
    yield "missing required selector", _drop(base, "spec.selector"), False
    yield "missing required container name", _drop(base, f"{CONTAINER}.name"), False
    yield "missing required port", _drop(base, f"{CONTAINER}.ports.0.containerPort"), False
    yield "empty containers list", _set(base, "spec.template.spec.containers", []), True
    yield "container not an object", _set(base, "spec.template.spec.containers", ["main"]), False
    yield "bad enum (kind)", _set(base, "kind", "Deploymnt"), False
    yield "bad enum (apiVersion)", _set(base, "apiVersion", "apps/v2"), False
    # Quantity is oneOf [string|null, number|null]: null matches both branches, so it fails oneOf.
    yield "quantity number", _set(base, f"{CONTAINER}.resources.limits.cpu", 2), True
    yield "quantity null (oneOf both match)", _set(base, f"{CONTAINER}.resources.limits.cpu", None), False
    yield "quantity bool", _set(base, f"{CONTAINER}.resources.limits.cpu", True), False
    # IntOrString is oneOf [string|null, integer|null].
    probe = {"httpGet": {"port": 8080, "path": "/healthz"}}
    yield "int-or-string int", _set(base, f"{CONTAINER}.livenessProbe", probe), True
    yield "int-or-string name", _set(base, f"{CONTAINER}.livenessProbe", {"httpGet": {"port": "http"}}), True
    yield "int-or-string float", _set(base, f"{CONTAINER}.livenessProbe", {"httpGet": {"port": 1.5}}), False
    yield "int-or-string null", _set(base, f"{CONTAINER}.livenessProbe", {"httpGet": {"port": None}}), False
    yield "non-ASCII string", _set(base, "metadata.labels.app", "tr\u00e4in\U0001f680"), True


INVALID_VARIANTS = list(_variants())


@pytest.mark.parametrize(("release", "strict"), MODES, ids=MODE_IDS)
@pytest.mark.parametrize(("name", "obj", "expected"), INVALID_VARIANTS, ids=[v[0] for v in INVALID_VARIANTS])
def test_variants_agree(name: str, obj: dict[str, Any], expected: bool | None, release: str, strict: bool) -> None:
    # Always Deployment's schema: the enum cases (kind, apiVersion) would select no schema by themselves.
    both = _both(obj, release, strict, "Deployment", "apps/v1")
    assert both is not None
    rs_valid, py_valid = both
    assert py_valid == (not strict if expected is None else expected), "the case does not test what it says"
    assert rs_valid == py_valid


@pytest.mark.parametrize(("release", "strict"), MODES, ids=MODE_IDS)
def test_claim_template_variants_agree(release: str, strict: bool) -> None:
    checked = 0
    for api_version in schema.served_api_versions("ResourceClaimTemplate", release):
        base = _claim_template(api_version)
        request = "spec.spec.devices.requests.0"
        exact = f"{request}.exactly" if _exactly(api_version) else request
        cases = [
            (base, True),
            (_set(base, f"{request}.count", 2), None if _exactly(api_version) else True),
            (_set(base, f"{exact}.count", 2), True),
            (_set(base, f"{exact}.deviceClassName", 7), False),
            (_drop(base, f"{request}.name"), False),
            (_set(base, "spec.spec", ["devices"]), False),
            (_set(base, f"{exact}.selectors", [{"cel": {}}]), False),  # cel.expression is required
            (_set(base, f"{exact}.selectors", [{"cel": {"expression": "true"}}]), True),
            (_set(base, f"{exact}.allocationMode", "Sometimes"), True),  # not an enum in these schemas
            (_set(base, f"{request}.gpu", True), None),
        ]
        for obj, expected in cases:
            both = _both(obj, release, strict)
            assert both is not None
            rs_valid, py_valid = both
            if expected is not None or strict:
                want = expected if expected is not None else False
                assert py_valid == want, (api_version, obj)
            assert rs_valid == py_valid, (api_version, obj)
            checked += 1
    assert checked >= 10


def test_data_jsonschema_rs_cannot_take_falls_back() -> None:
    """A YAML timestamp (datetime) is not JSON: validate_object never caches it, and the pre-check, asked
    directly, must answer "ask python-jsonschema" rather than raise."""
    import datetime

    obj = _set(
        _drop(_deployment(), f"{CONTAINER}.resources_placeholder"), "metadata.labels.app", datetime.date(2024, 1, 1)
    )
    for _ in range(max(schema._FAST_AFTER, schema._FAST_AFTER_TOTAL) + 1):
        assert schema._fast_valid(obj, "Deployment", "apps/v1", "1.34", True) is False
    issues = schema.validate_object(obj, "1.34", strict=True, semantic=False)
    assert [i.path for i in issues] == ["metadata.labels.app"]


def _schema_keywords(node: Any, found: set[str]) -> None:
    """Keys in schema positions (not property names, not values of enum / required / x-kubernetes-*)."""
    if isinstance(node, list):
        for item in node:
            _schema_keywords(item, found)
    elif isinstance(node, dict):
        for key, value in node.items():
            found.add(key)
            if key.startswith("x-kubernetes-") or key in ("enum", "required"):
                continue
            if key in ("properties", "$defs"):
                for sub in value.values():
                    _schema_keywords(sub, found)
            else:
                _schema_keywords(value, found)


@pytest.mark.parametrize("release", SUPPORTED_VERSIONS)
@pytest.mark.parametrize("strict", [True, False])
def test_schemas_use_only_checked_keywords(release: str, strict: bool) -> None:
    definitions = schema._definitions(release, strict)
    found: set[str] = set()
    _schema_keywords(definitions, found)
    keywords = {k for k in found if not k.startswith("x-kubernetes-")} - ANNOTATIONS
    assert keywords <= CHECKED_KEYWORDS, keywords - CHECKED_KEYWORDS
    assert "pattern" not in found  # no regex dialect to compare (Python re vs Rust regex)
    formats = {chunk.split('"', 1)[0] for chunk in json.dumps(definitions).split('"format": "')[1:]}
    assert formats <= {"int32", "int64", "double", "byte", "date-time"}, formats


def _fresh_counts(monkeypatch: pytest.MonkeyPatch, fast_after: int, fast_after_total: int = 0) -> None:
    monkeypatch.setattr(schema, "_FAST_AFTER", fast_after)
    monkeypatch.setattr(schema, "_FAST_AFTER_TOTAL", fast_after_total)
    monkeypatch.setattr(schema, "_slow_uses", {})
    monkeypatch.setattr(schema, "_slow_total", 0)
    schema.clear_result_cache()


@pytest.mark.parametrize("strict", [True, False])
def test_validate_object_results_unchanged(monkeypatch: pytest.MonkeyPatch, strict: bool) -> None:
    """With the pre-check on from the first object, every result equals the python-jsonschema-only result."""
    _fresh_counts(monkeypatch, 0)
    objects = [o for _, o in GOLDEN_OBJECTS] + [o for _, o, _e in INVALID_VARIANTS]
    for release in ("1.32", "1.34", "1.37"):
        for obj in objects:
            for semantic in (True, False):
                got = schema.validate_object(obj, release, strict=strict, semantic=semantic)
                want = schema._validate_object(obj, release, strict, semantic)
                assert got == want, (release, obj)
    schema.clear_result_cache()


def _names_checked_by_python_jsonschema(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """metadata.name of every object python-jsonschema validates from now on, in order."""
    calls: list[str] = []
    original = schema._schema_issues

    def counting(validator: Any, obj: Any) -> Any:
        calls.append(obj["metadata"]["name"])
        return original(validator, obj)

    monkeypatch.setattr(schema, "_schema_issues", counting)
    return calls


def test_precheck_skips_python_jsonschema_only_after_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    _fresh_counts(monkeypatch, 3)
    calls = _names_checked_by_python_jsonschema(monkeypatch)
    base = _drop(_deployment(), f"{CONTAINER}.resources_placeholder")
    for n in range(5):
        obj = _set(base, "metadata.name", f"d{n}")
        assert schema.validate_object(obj, "1.34", strict=True, semantic=False) == []
    assert calls == ["d0", "d1", "d2"]  # the 4th and 5th valid objects were accepted by jsonschema-rs alone
    bad = _set(_set(base, "metadata.name", "bad"), "spec.replicas", "3")
    issues = schema.validate_object(bad, "1.34", strict=True, semantic=False)
    assert calls[-1] == "bad" and [i.path for i in issues] == ["spec.replicas"]
    schema.clear_result_cache()


def test_precheck_waits_for_process_total(monkeypatch: pytest.MonkeyPatch) -> None:
    """Objects of any kind count towards the process-wide threshold (import and registry)."""
    _fresh_counts(monkeypatch, 1, 4)
    calls = _names_checked_by_python_jsonschema(monkeypatch)
    deployment = _drop(_deployment(), f"{CONTAINER}.resources_placeholder")
    template = _claim_template("resource.k8s.io/v1")
    names = []
    for n in range(3):
        for obj in (deployment, template):
            names.append(f"{obj['kind']}{n}")
            assert schema.validate_object(_set(obj, "metadata.name", names[-1]), "1.34", semantic=False) == []
    assert calls == names[:4]
    schema.clear_result_cache()


def test_without_jsonschema_rs(monkeypatch: pytest.MonkeyPatch) -> None:
    """No wheel for the platform: python-jsonschema alone, same results."""
    _fresh_counts(monkeypatch, 0)
    monkeypatch.setitem(sys.modules, "jsonschema_rs", None)  # makes `import jsonschema_rs` raise ImportError
    schema._rs_validator.cache_clear()
    schema._rs_registry.cache_clear()
    try:
        assert schema._rs_validator("Deployment", "apps/v1", "1.34", True) is None
        base = _drop(_deployment(), f"{CONTAINER}.resources_placeholder")
        assert schema.validate_object(base, "1.34", strict=True, semantic=False) == []
        issues = schema.validate_object(_deployment(), "1.34", strict=True, semantic=False)
        assert [i.message for i in issues] == ["unknown field 'resources_placeholder' (did you mean 'resources'?)"]
    finally:
        schema._rs_validator.cache_clear()
        schema._rs_registry.cache_clear()
        schema.clear_result_cache()
