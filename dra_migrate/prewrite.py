"""Checks on what the migration produced, before anything is written: the official schema of the target
version (and the API server's semantic limits) for every new or changed object, and every CEL selector
compiled and evaluated against the NVIDIA driver's device shapes."""

from __future__ import annotations

import functools
from typing import Any

from dra_migrate.diagnostics import Diagnostic, Location, make
from dra_migrate.kinds import KindRuleSet, resolve


def _ref(obj: dict[str, Any]) -> str:
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    ns = f"{meta.get('namespace')}/" if meta.get("namespace") else ""
    return f"{obj.get('kind')}/{ns}{meta.get('name') or meta.get('generateName', '')}"


def validate_new_object(obj: dict[str, Any], target: str, location: Location) -> list[Diagnostic]:
    from dra_migrate.validate import validate_object

    return [
        make(issue.code if issue.code in ("DRA601", "DRA602", "DRA603") else "DRA602",
             f"emitted object is invalid for Kubernetes {target}: {issue.path}: {issue.message}", location, _ref(obj))
        for issue in validate_object(obj, target, strict=True, semantic=True)
    ]


def validate_changed_object(
    before: dict[str, Any], after: dict[str, Any], target: str, location: Location, rules: KindRuleSet
) -> list[Diagnostic]:
    """Schema problems the migration introduced (problems the user's object already had are not ours)."""
    from dra_migrate.validate import check_pod_spec_claims, validate_object

    old = {(i.path, i.message) for i in validate_object(before, target, strict=False, semantic=False)}
    issues = [i for i in validate_object(after, target, strict=False, semantic=False) if (i.path, i.message) not in old]
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
    """(device class, CEL expression) for every request selector of a claim or claim template."""
    out: list[tuple[str, str]] = []
    devices = (((obj.get("spec") or {}).get("spec") or obj.get("spec") or {}).get("devices")) or {}
    for req in devices.get("requests") or []:
        for part in [req, req.get("exactly") or {}, *(req.get("firstAvailable") or [])]:
            device_class = str(part.get("deviceClassName", ""))
            for sel in part.get("selectors") or []:
                expr = (sel.get("cel") or {}).get("expression")
                if isinstance(expr, str):
                    out.append((device_class, expr))
    return out


@functools.lru_cache(maxsize=4096)
def check_selector(device_class: str, expression: str) -> tuple[str, str] | None:
    """(code, message) when the expression does not compile, errors on a device of its class, or matches none.

    As in the allocator, a request's selectors are evaluated only on devices its device class selects."""
    from dra_migrate.cel import CelCompileError, CelEvalError, compile_selector
    from dra_migrate.cel.devices import load_nvidia_devices
    from dra_migrate.simulate.inventory import default_device_classes

    try:
        selector = compile_selector(expression)
    except CelCompileError as exc:
        return "DRA312", f"CEL selector does not compile: {exc.message}: {expression}"
    known = default_device_classes().get(device_class)
    if known is None:
        return None  # a class we do not know the devices of: compiled is all we can say
    class_selectors = [compile_selector(e) for e in known.selectors]
    matched = 0
    for device in load_nvidia_devices():
        try:
            if not all(c.evaluate(device) for c in class_selectors):
                continue
            matched += selector.evaluate(device)
        except CelEvalError as exc:
            return "DRA313", f"CEL selector fails on device {device.name}: {exc.message}: {expression}"
    if matched == 0:
        return "DRA801", f"no known NVIDIA device shape of class {device_class} matches this selector: {expression}"
    return None
