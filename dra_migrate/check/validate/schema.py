"""Validation against the official JSON schemas of a Kubernetes release.

The schemas are the OpenAPI-derived ones bundled with the `kubernetes-validate` package (one directory per
release, `-strict` variants reject unknown fields). Unlike kubernetes_validate.validate(), which re-reads
the 1.5 MB `_definitions.json` and rebuilds a validator for every object, this module loads each release's
definitions once, indexes the top-level kinds by their x-kubernetes-group-version-kind and caches one
validator per (kind, apiVersion, release, strictness). Which apiVersions a release serves is read from the
same index, so "resource.k8s.io/v1 under 1.33" is reported as not served rather than silently skipped.
"""

from __future__ import annotations

import difflib
import hashlib
import importlib.util
import json
import os
import re
from collections.abc import Iterator, Mapping
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any

from dra_migrate.check.validate.issues import NOT_SERVED, SCHEMA, SchemaIssue, join_path, path_from, split_api_version
from dra_migrate.check.validate.limits import check_object_limits
from dra_migrate.ruleset.features import normalize_version, parse_version

if TYPE_CHECKING:  # python-jsonschema (~0.15 s to import) is loaded only when an object is not found valid
    import jsonschema
    from referencing import Registry

DEFINITIONS_ID = "https://kubernetes.io/api/_definitions.json"
_MAX_MESSAGE = 240


@cache
def _schema_root() -> str | None:
    """kubernetes-validate's schema directory, found without importing the package (its __init__ imports
    python-jsonschema); None when it is not a plain directory (then its own functions read it)."""
    spec = importlib.util.find_spec("kubernetes_validate")
    for location in (spec.submodule_search_locations or []) if spec is not None else []:
        root = os.path.join(location, "kubernetes-json-schema")
        if os.path.isdir(root):
            return root
    return None


@cache
def _bundled_versions() -> frozenset[str]:
    root = _schema_root()
    if root is None:
        # lazy: start-up (kubernetes_validate.utils: ~41 ms, only _bundled_versions() needs it)
        from kubernetes_validate.utils import all_versions

        return frozenset(normalize_version(v) for v in all_versions())
    # as kubernetes_validate.utils.all_versions: every directory v<version>[-...]
    return frozenset(normalize_version(m.group(1)) for name in os.listdir(root) if (m := re.match(r"^v([^-]*)", name)))


def _release(k8s_version: str) -> str:
    release = normalize_version(k8s_version)
    if release not in _bundled_versions():
        raise ValueError(
            f"no bundled schemas for Kubernetes {release} "
            f"(kubernetes-validate has {', '.join(sorted(_bundled_versions(), key=parse_version))})"
        )
    return release


@cache
def _definitions(release: str, strict: bool) -> dict[str, Any]:
    directory = f"v{release}.0-local" + ("-strict" if strict else "")
    root = _schema_root()
    if root is None:
        # lazy: start-up (kubernetes_validate.utils: ~47 ms, only _definitions() needs it)
        from kubernetes_validate.utils import schema_contents

        defs = schema_contents(f"kubernetes-json-schema/{directory}/_definitions.json", release)
    else:
        with open(os.path.join(root, directory, "_definitions.json"), encoding="utf-8") as f:
            defs = json.load(f)
    if not isinstance(defs, dict) or defs.get("$id") != DEFINITIONS_ID or "$defs" not in defs:
        raise RuntimeError(f"unexpected layout of kubernetes-validate schemas for {release}")
    return defs


@cache
def _registry(release: str, strict: bool) -> Registry:
    # lazy: start-up (referencing: ~20 ms, only _registry() needs it)
    from referencing import Registry, Resource

    return Resource.from_contents(_definitions(release, strict)) @ Registry()


@cache
def _kind_index(release: str) -> Mapping[tuple[str, str], Mapping[str, str]]:
    """(group, kind) → {version: definition name} for every top-level kind the release serves."""
    index: dict[tuple[str, str], dict[str, str]] = {}
    for name, schema in _definitions(release, True)["$defs"].items():
        gvks = schema.get("x-kubernetes-group-version-kind", [])
        # Shared meta types (DeleteOptions, WatchEvent) list every group: they are not objects one applies.
        if len(gvks) != 1:
            continue
        gvk = gvks[0]
        index.setdefault((gvk["group"], gvk["kind"]), {})[gvk["version"]] = name
    return index


@cache
def _known_groups(release: str) -> frozenset[str]:
    return frozenset(group for group, _ in _kind_index(release))


def served_api_versions(kind: str, k8s_version: str) -> list[str]:
    """apiVersions under which `kind` is served by a release, e.g. ['resource.k8s.io/v1beta1', ...]."""
    release = _release(k8s_version)
    out: list[str] = []
    for (group, k), versions in _kind_index(release).items():
        if k == kind:
            out.extend(f"{group}/{v}" if group else v for v in versions)
    return sorted(out)


def schema_served(kind: str, api_version: str, k8s_version: str) -> bool:
    group, version = split_api_version(api_version)
    return version in _kind_index(_release(k8s_version)).get((group, kind), {})


def _memoized_ref_validator() -> type[jsonschema.Draft202012Validator]:
    """Draft 2020-12 whose `$ref` resolves each reference once per (base URI, ref) instead of on every visit.

    jsonschema re-resolves a `$ref` (a JSON-pointer walk building new resolvers) every time it meets one, about
    half of the validation time of a workload. What a lookup returns depends only on the base URI, the ref and
    the registry (one per validator class: one class per release and strictness), except for the dynamic scope
    the returned resolver carries, which only a `$dynamicRef` towards a `$dynamicAnchor` reads. The Kubernetes
    schemas have neither (tests/check/test_prewrite_cache.py checks every bundled release; scanning 1.2 MB of
    definitions at run time would cost more than the memo saves on a small run).
    """
    # lazy: start-up (jsonschema: ~38 ms, only _memoized_ref_validator() needs it)
    import jsonschema
    import referencing.exceptions

    resolved_by_ref: dict[tuple[str, str], Any] = {}

    def ref(validator: Any, ref: str, instance: Any, schema: Any) -> Iterator[jsonschema.ValidationError]:
        resolver = validator._resolver
        key = (resolver._base_uri, ref)
        resolved = resolved_by_ref.get(key)
        if resolved is None:
            try:
                resolved = resolved_by_ref[key] = resolver.lookup(ref)
            except referencing.exceptions.Unresolvable:  # jsonschema's own path reports it exactly as before
                yield from validator._validate_reference(ref=ref, instance=instance)
                return
        yield from validator.descend(instance, resolved.contents, resolver=resolved.resolver)

    return jsonschema.validators.extend(jsonschema.Draft202012Validator, {"$ref": ref})


@cache
def _validator_class(release: str, strict: bool) -> type[jsonschema.Draft202012Validator]:
    return _memoized_ref_validator()


@lru_cache(maxsize=512)
def _validator(
    kind: str, api_version: str, release: str, strict: bool
) -> jsonschema.Draft202012Validator | None:
    group, version = split_api_version(api_version)
    name = _kind_index(release).get((group, kind), {}).get(version)
    if name is None:
        return None
    root = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$ref": f"{DEFINITIONS_ID}#/$defs/{name}",
    }
    return _validator_class(release, strict)(root, registry=_registry(release, strict))


# jsonschema-rs as a pre-check: an object it finds valid has no schema issues, anything else goes through
# python-jsonschema, whose errors are the messages we report (tests/check/test_schema_fastpath.py checks that both
# agree on validity for every golden object and for invalid ones, per release and strictness).
# It is used from the first object: importing it (~20-45 ms), its registry of a release's definitions (~12 ms)
# and compiling a Deployment (~5 ms) cost less than importing python-jsonschema (~150 ms with referencing),
# which a run whose objects are all valid — a pre-commit run on one file, typically — then never imports.
# The thresholds (objects checked with python-jsonschema first, in all and per kind) stay settable for tests.
_FAST_AFTER = 0
_FAST_AFTER_TOTAL = 0
_slow_uses: dict[tuple[str, str, str, bool], int] = {}
_slow_total = 0


@cache
def _rs_registry(release: str, strict: bool) -> Any:
    # lazy: start-up (jsonschema_rs: ~10 ms, only _rs_registry() needs it)
    import jsonschema_rs

    return jsonschema_rs.Registry([(DEFINITIONS_ID, _definitions(release, strict))])


@lru_cache(maxsize=512)
def _rs_validator(kind: str, api_version: str, release: str, strict: bool) -> Any:
    """The jsonschema-rs validator of the same root schema and registry as _validator(); None when jsonschema-rs is
    unavailable (no wheel for the platform) or fails on the schema, then python-jsonschema alone decides."""
    group, version = split_api_version(api_version)
    name = _kind_index(release).get((group, kind), {}).get(version)
    if name is None:
        return None
    try:
        # lazy: optional: the fallback below runs without it
        import jsonschema_rs

        root = {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$ref": f"{DEFINITIONS_ID}#/$defs/{name}",
        }
        # python-jsonschema runs without a format checker: formats (int32, date-time, byte...) are annotations.
        return jsonschema_rs.Draft202012Validator(
            root, registry=_rs_registry(release, strict), validate_formats=False
        )
    except Exception:  # ImportError, or a schema the extension rejects: no pre-check, same results
        return None


def _fast_valid(obj: Mapping[str, Any], kind: str, api_version: str, release: str, strict: bool) -> bool:
    """True only when jsonschema-rs says `obj` is valid; False means "ask python-jsonschema", never "invalid"."""
    global _slow_total
    key = (kind, api_version, release, strict)
    uses = _slow_uses.get(key, 0)
    if uses < _FAST_AFTER or _slow_total < _FAST_AFTER_TOTAL:
        _slow_uses[key] = uses + 1
        _slow_total += 1
        return False
    validator = _rs_validator(kind, api_version, release, strict)
    if validator is None:
        return False
    try:
        return bool(validator.is_valid(obj))
    except Exception:  # a value it cannot convert (a date, bytes...): python-jsonschema reports it
        return False


def _is_builtin_group(group: str, release: str) -> bool:
    # Groups in the schemas are built in; so is anything under the reserved k8s.io / kubernetes.io domains
    # (a misspelt version or kind there is an error, not a custom resource we cannot check).
    return group in _known_groups(release) or group.endswith((".k8s.io", ".kubernetes.io")) or group == ""


def _short(text: str) -> str:
    return text if len(text) <= _MAX_MESSAGE else text[: _MAX_MESSAGE - 1] + "…"


def _schema_issues(
    validator: jsonschema.Draft202012Validator, obj: Mapping[str, Any]
) -> Iterator[SchemaIssue]:
    for err in validator.iter_errors(obj):
        base = list(err.absolute_path)
        if err.validator == "additionalProperties" and isinstance(err.instance, dict):
            allowed = list(err.schema.get("properties", {})) if isinstance(err.schema, dict) else []
            for extra in sorted(k for k in err.instance if k not in allowed):
                hint = difflib.get_close_matches(str(extra), allowed, n=1)
                suffix = f" (did you mean {hint[0]!r}?)" if hint else ""
                yield SchemaIssue(path_from([*base, extra]), f"unknown field {extra!r}{suffix}", SCHEMA)
            continue
        if err.validator == "required" and isinstance(err.instance, dict):
            # Point at the missing field itself; the semantic checks report at the same path and are dropped.
            for missing in err.validator_value:
                if missing not in err.instance:
                    yield SchemaIssue(path_from([*base, missing]), f"{missing} is required", SCHEMA)
            continue
        yield SchemaIssue(path_from(base), _short(err.message), SCHEMA)


# Results of validate_object by (SHA-256 of the canonical JSON of the object, release, strict, semantic): the same
# object (an identical claim template in every overlay, a workload validated twice) is checked once per process.
# The digest keeps the memory small whatever the size of the objects.
_RESULTS: dict[tuple[bytes, str, bool, bool], tuple[SchemaIssue, ...]] = {}
_MAX_RESULTS = 8192


def canonical_json(obj: Any) -> str | None:
    """A text equal for two objects exactly when they are equal as JSON data of the same Python types (keys
    sorted); None when the object holds anything else (a non-string key, a date...), which is then not cached.

    json.dumps alone would conflate {1: x} with {"1": x}; bool/int/float keep distinct spellings in JSON."""
    if not _plain_json(obj):
        return None
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, allow_nan=True)


def _plain_json(obj: Any) -> bool:
    if isinstance(obj, dict):
        return all(isinstance(k, str) and _plain_json(v) for k, v in obj.items())
    if isinstance(obj, list):
        return all(_plain_json(v) for v in obj)
    return obj is None or isinstance(obj, str | int | float)  # bool is an int


def validate_object(
    obj: Mapping[str, Any], k8s_version: str, strict: bool = True, semantic: bool = True
) -> list[SchemaIssue]:
    """Check one object against the schema of Kubernetes `k8s_version` (e.g. '1.34').

    strict: unknown fields are errors (the '-strict' schemas). semantic: also run the API-server rules the
    schema does not express (dra_migrate.check.validate.limits) for ResourceClaim(Template) and Pod objects.
    Objects of groups the release does not know (custom resources) yield no issues: there is no schema.
    """
    release = _release(k8s_version)
    text = canonical_json(obj)
    if text is None:
        return _validate_object(obj, release, strict, semantic)
    key = (hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest(), release, strict, semantic)
    found = _RESULTS.get(key)
    if found is None:
        found = tuple(_validate_object(obj, release, strict, semantic, fast=True))
        if len(_RESULTS) >= _MAX_RESULTS:
            _RESULTS.clear()
        _RESULTS[key] = found
    return list(found)


def clear_result_cache() -> None:
    _RESULTS.clear()


def _validate_object(
    obj: Mapping[str, Any], release: str, strict: bool, semantic: bool, fast: bool = False
) -> list[SchemaIssue]:
    """fast: try the jsonschema-rs pre-check first (only for plain JSON data, see canonical_json)."""
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if not isinstance(api_version, str) or not api_version or not isinstance(kind, str) or not kind:
        return [SchemaIssue("", "object has no apiVersion and kind", SCHEMA)]
    group, version = split_api_version(api_version)
    if version not in _kind_index(release).get((group, kind), {}):
        if not _is_builtin_group(group, release):
            return []
        served = served_api_versions(kind, release)
        where = f"it serves {kind} as {', '.join(served)}" if served else f"it has no kind {kind!r}"
        return [
            SchemaIssue(
                join_path("", "apiVersion"),
                f"{api_version} {kind} is not served by Kubernetes {release} ({where})",
                NOT_SERVED,
            )
        ]
    if fast and _fast_valid(obj, kind, api_version, release, strict):
        issues: list[SchemaIssue] = []
    else:
        validator = _validator(kind, api_version, release, strict)
        assert validator is not None  # the kind is served (checked above)
        issues = sorted(_schema_issues(validator, obj), key=lambda i: (i.path, i.message))
    if semantic:
        reported = {i.path for i in issues}
        issues.extend(i for i in check_object_limits(obj) if i.path not in reported)
    return issues
