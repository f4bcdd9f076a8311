"""Checks on what the migration produced, before anything is written: the official schema of the target
version (and the API server's semantic limits) for every new or changed object, and every CEL selector
compiled and evaluated against the NVIDIA driver's device shapes."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from dra_migrate.check.claim_requests import selectors
from dra_migrate.diagnostics.model import Diagnostic, Location, make
from dra_migrate.ruleset.features import Target, feature_problem
from dra_migrate.ruleset.kinds import KindRuleSet, resolve
from dra_migrate.ruleset.nvidia_cluster import default_device_classes
from dra_migrate.source.plain import as_map

if TYPE_CHECKING:
    from dra_migrate.cel.compiler import CelDevice


def _ref(obj: dict[str, Any]) -> str:
    meta = as_map(obj.get("metadata"))
    ns = f"{meta.get('namespace')}/" if meta.get("namespace") else ""
    return f"{obj.get('kind')}/{ns}{meta.get('name') or meta.get('generateName', '')}"


def validate_new_object(obj: dict[str, Any], target: str, location: Location) -> list[Diagnostic]:
    # lazy: start-up (check.validate: ~3 ms, only validate_new_object() needs it)
    from dra_migrate.check.validate import validate_object

    return [
        make(issue.code if issue.code in ("DRA601", "DRA602", "DRA603") else "DRA602",
             f"emitted object is invalid for Kubernetes {target}: {issue.path}: {issue.message}", location, _ref(obj))
        for issue in validate_object(obj, target, strict=True, semantic=True)
    ]


def validate_changed_object(
    before: dict[str, Any], after: dict[str, Any], target: str, location: Location, rules: KindRuleSet
) -> list[Diagnostic]:
    """Schema problems the migration introduced (problems the user's object already had are not ours)."""
    # lazy: start-up (check.validate: ~3 ms, only validate_changed_object() needs it)
    from dra_migrate.check.validate import check_pod_spec_claims, validate_object

    issues = validate_object(after, target, strict=False, semantic=False)
    if issues:  # the object before is validated only to tell its own problems apart (most objects are valid)
        old = {(i.path, i.message) for i in validate_object(before, target, strict=False, semantic=False)}
        issues = [i for i in issues if (i.path, i.message) not in old]
    rule = rules.lookup(str(after.get("apiVersion", "")), str(after.get("kind", "")))
    if rule is not None:
        for spec_path in rule.pod_specs:
            for concrete, spec in resolve(after, spec_path):
                if isinstance(spec, dict):
                    issues.extend(check_pod_spec_claims(spec, ".".join(map(str, concrete))))
    return [
        make("DRA602" if i.code not in ("DRA601", "DRA603") else i.code,
             f"migrated object would be invalid for Kubernetes {target}: {i.path}: {i.message}", location, _ref(after))
        for i in issues
    ]


def selectors_of(obj: dict[str, Any]) -> list[tuple[str, str]]:
    """(device class, CEL expression) for every selector of a claim or claim template ("" for a DeviceClass's own);
    one reader of the request shapes (v1beta1 flat, exactly, firstAvailable) for the checks and the lints."""
    return selectors(obj)


@functools.cache
def _class_members(device_class: str) -> tuple[tuple[CelDevice, str | None], ...] | None:
    """The fixture devices `device_class` selects, in fixture order, each with the message of the class's own
    selector failing on it (None when it selects the device); None for a class we do not know the devices of.

    The class selectors are the same for every claim selector of the class: evaluated once per device per
    process, not once per claim selector."""
    # lazy: start-up (cel.{CelEvalError, compile_selector}: ~51 ms, only _class_members() needs it)
    from dra_migrate.cel import CelEvalError, compile_selector
    from dra_migrate.cel.devices import nvidia_cel_devices

    if not device_class:  # "" = a DeviceClass's own selector, evaluated on every device
        return tuple((device, None) for device in nvidia_cel_devices())
    known = default_device_classes().get(device_class)
    if known is None:
        return None
    class_selectors = [compile_selector(e) for e in known.selectors]
    members: list[tuple[CelDevice, str | None]] = []
    for device in nvidia_cel_devices():
        try:
            if all(c.evaluate(device) for c in class_selectors):
                members.append((device, None))
        except CelEvalError as exc:
            members.append((device, exc.message))
    return tuple(members)


@functools.lru_cache(maxsize=4096)
def check_selector(device_class: str, expression: str) -> tuple[str, str] | None:
    """(code, message) when the expression does not compile, errors on a device of its class, or matches none.

    As in the allocator, a request's selectors are evaluated only on devices its device class selects.
    Verdicts are remembered across runs (dra_migrate.cel.verdicts: keyed by everything they depend on)."""
    # lazy: start-up (cel.verdicts: ~3 ms, only check_selector() needs it)
    from dra_migrate.cel import verdicts

    known = verdicts.lookup(device_class, expression)
    if known is not verdicts.MISSING:
        return known
    verdict = _check_selector(device_class, expression)
    verdicts.record(device_class, expression, verdict)
    return verdict


def _check_selector(device_class: str, expression: str) -> tuple[str, str] | None:
    # lazy: start-up (cel.{CelCompileError, CelEvalError, compile_selector}: ~49 ms, only _check_selector() needs it)
    from dra_migrate.cel import CelCompileError, CelEvalError, compile_selector
    from dra_migrate.cel.projection import device_key

    try:
        selector = compile_selector(expression)
    except CelCompileError as exc:
        return "DRA312", f"CEL selector does not compile: {exc.message}: {expression}"
    members = _class_members(device_class)
    if members is None:
        return None  # a class we do not know the devices of: compiled is all we can say
    # Devices that agree on every part of `device` the selector reads give it the same outcome: only the first
    # of them is evaluated (an error would have been reported on that first one, as on the full list).
    seen: set[tuple[Any, ...]] = set()
    matched = 0
    for device, class_error in members:
        message = class_error
        if message is None:
            key = device_key(device.view, selector.device_paths)
            if key in seen:
                continue
            seen.add(key)
            try:
                matched += selector.evaluate(device)
            except CelEvalError as exc:
                message = exc.message
        if message is not None:
            return "DRA313", f"CEL selector fails on device {device.name}: {message}: {expression}"
    if matched == 0:
        return "DRA801", f"no known NVIDIA device shape of class {device_class} matches this selector: {expression}"
    return None


# --- what the target accepts ------------------------------------------------------------------------------
# Every emitted object goes through `check_target_features`, whatever pass or mode built it: a field the target
# lacks (or has behind an off gate) and a CEL function it does not offer are errors, never silent output.

# Fields of one exact request (v1beta1 request, `exactly`, or a subrequest) that belong to a gated feature.
_REQUEST_FEATURES = (("tolerations", "deviceTolerations"), ("adminAccess", "adminAccess"),
                     ("capacity", "consumableCapacity"))


def _claim_spec(obj: dict[str, Any]) -> dict[str, Any] | None:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return None
    if obj.get("kind") == "ResourceClaimTemplate":
        spec = spec.get("spec")
    return spec if isinstance(spec, dict) else None


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _set(value: Any) -> bool:
    return value is not None and value is not False and value != [] and value != {}


def features_used(obj: dict[str, Any]) -> list[tuple[str, str]]:
    """(feature name from rules/features.yaml, path) for every gated field an object uses."""
    kind = obj.get("kind")
    out: list[tuple[str, str]] = []
    if kind == "DeviceTaintRule":
        out.append(("deviceTaintRules", "kind"))
    if kind == "DeviceClass":
        class_spec = _dict(obj.get("spec"))
        if _set(class_spec.get("extendedResourceName")):
            out.append(("extendedResourceName", "spec.extendedResourceName"))
    if kind not in ("ResourceClaim", "ResourceClaimTemplate"):
        return out
    spec = _claim_spec(obj)
    base = "spec.spec.devices" if kind == "ResourceClaimTemplate" else "spec.devices"
    devices = (spec or {}).get("devices")
    if not isinstance(devices, dict):
        return out
    for i, req in enumerate(devices.get("requests") or []):
        if not isinstance(req, dict):
            continue
        path = f"{base}.requests[{i}]"
        parts: list[tuple[str, Any]] = [(path, req)]
        if isinstance(req.get("exactly"), dict):
            parts.append((f"{path}.exactly", req["exactly"]))
        if _set(req.get("firstAvailable")):
            out.append(("firstAvailable", f"{path}.firstAvailable"))
            parts.extend((f"{path}.firstAvailable[{j}]", s) for j, s in enumerate(req["firstAvailable"])
                         if isinstance(s, dict))
        for where, part in parts:
            out.extend((feature, f"{where}.{key}") for key, feature in _REQUEST_FEATURES if _set(part.get(key)))
    for i, con in enumerate(devices.get("constraints") or []):
        if isinstance(con, dict) and _set(con.get("distinctAttribute")):
            out.append(("consumableCapacity", f"{base}.constraints[{i}].distinctAttribute"))
    return out


def cel_expressions(obj: dict[str, Any]) -> list[str]:
    """Every CEL selector expression of a claim, claim template or DeviceClass."""
    return [expr for _class, expr in selectors_of(obj)]


def check_target_features(
    obj: dict[str, Any], target: str, gates: Mapping[str, bool], location: Location
) -> list[Diagnostic]:
    """Errors for every feature or CEL function of `obj` the target (with `gates`) does not accept."""
    out: list[Diagnostic] = []
    seen: set[str] = set()
    for feature, path in features_used(obj):
        if feature in seen:
            continue
        seen.add(feature)
        problem = feature_problem(target, feature, gates)
        if problem:
            out.append(make(problem[0], f"{path}: {problem[1]}", location, _ref(obj)))
    t = Target(target)
    for expr in cel_expressions(obj):
        missing = t.cel_functions_unavailable(expr, gates)
        if missing:
            out.append(make("DRA607", f"CEL function(s) {', '.join(missing)} not available to new expressions in "
                            f"Kubernetes {target}: {expr}", location, _ref(obj)))
    return out
