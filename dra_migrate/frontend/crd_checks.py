"""Reporting checks for GPUs that key-based translation misses or would misread (DRA401, DRA403-DRA407).

A kind rule says where pod specs live; anything else that states GPUs (a CR's own resources field, a bare
container, a resource name given as a value, an uncovered kind, a non-workload object, device-plugin
infrastructure) is reported here with file:line and never rewritten.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from dra_migrate.diagnostics.model import Location, make
from dra_migrate.ir import DocPath, Workload
from dra_migrate.ruleset.files import rules_data
from dra_migrate.ruleset.kinds import (
    DocumentRule,
    KindRule,
    NonWorkloadRule,
    format_path,
    resolve,
    split_api_version,
)
from dra_migrate.ruleset.resources import classify
from dra_migrate.source.nodes import Node, key_line

CONTAINER_LISTS = ("containers", "initContainers")
PLACEHOLDER = re.compile(r"\$\{|\{\{|\$\(")


@dataclass(frozen=True, slots=True)
class ScanData:
    value_keys: frozenset[str]
    gpu_words: re.Pattern[str]
    infrastructure_images: tuple[str, ...]


@functools.lru_cache(maxsize=1)
def scan_data() -> ScanData:
    data = rules_data("gpu-scan.yaml")
    return ScanData(
        frozenset(data["valueKeys"]),
        re.compile(data["gpuWords"], re.IGNORECASE),
        tuple(data["infrastructureImages"]),
    )


@dataclass(slots=True)
class ObjectCheck:
    """One object being checked: where it is, its data, and the workload that collects diagnostics."""

    file: str
    root: Node | None
    obj: dict[str, Any]
    item_path: DocPath
    wl: Workload

    def loc(self, rel: Sequence[str | int]) -> Location:
        line, col = key_line(self.root, (*self.item_path, *rel))
        return Location(self.file, line, col)

    def report(self, code: str, message: str, rel: Sequence[str | int]) -> None:
        self.wl.diagnostics.append(make(code, message, self.loc(rel), self.wl.ref))


# --- walking ------------------------------------------------------------------------------------------


def _entries(value: Any, match: Callable[[str, Any], bool]) -> list[tuple[tuple[str | int, ...], Any]]:
    """(path, value) of every mapping entry below value whose key and value `match`, in document order.
    The path is built only for a match: the checks look at every key of every GPU workload."""
    out: list[tuple[tuple[str | int, ...], Any]] = []
    path: list[str | int] = []

    def visit(v: Any) -> None:
        if isinstance(v, dict):
            for k, child in v.items():
                key = str(k)
                path.append(key)
                if match(key, child):
                    out.append((tuple(path), child))
                if isinstance(child, dict | list):
                    visit(child)
                path.pop()
        elif isinstance(v, list):
            for i, child in enumerate(v):
                if isinstance(child, dict | list):
                    path.append(i)
                    visit(child)
                    path.pop()

    visit(value)
    return out


def _under(path: Sequence[str | int], prefixes: Sequence[Sequence[str | int]]) -> bool:
    return any(tuple(path[: len(p)]) == tuple(p) for p in prefixes)


def gpu_mentions(value: Any, key: str | None = None) -> list[str]:
    """Short descriptions of what in value names a GPU: resource keys with their counts, GPU words.

    A GPU-ish key with a small value is shown whole (`gpu: {"name": "nvidia.com/gpu", "quantity": 1}`) and
    not descended into."""
    words = scan_data().gpu_words
    out: list[str] = []

    def visit(k: str | None, v: Any) -> None:
        if k is not None and (classify(k) is not None or words.search(k)):
            text = json.dumps(v, separators=(", ", ": "))
            if not isinstance(v, dict | list) or len(text) <= 60:
                out.append(f"{k}: {text}")
                return
            out.append(k)
        if isinstance(v, dict):
            for ck, cv in v.items():
                visit(str(ck), cv)
        elif isinstance(v, list):
            for cv in v:
                visit(None, cv)
        elif isinstance(v, str) and (classify(v) is not None or words.search(v)):
            out.append(json.dumps(v if len(v) <= 60 else v[:57] + "..."))

    visit(key, value)
    return list(dict.fromkeys(out))


def _summary(mentions: list[str]) -> str:
    text = ", ".join(mentions[:3]) + (", …" if len(mentions) > 3 else "")
    if any(PLACEHOLDER.search(m) for m in mentions):
        text += "; the count is a template placeholder"
    return text


def _resource_keys(container: Any) -> list[tuple[tuple[str | int, ...], str, Any]]:
    """(path in container, resource name, count) of every GPU-ish key in its resources.limits/requests."""
    out: list[tuple[tuple[str | int, ...], str, Any]] = []
    res = container.get("resources") if isinstance(container, dict) else None
    if not isinstance(res, dict):
        return out
    for section in ("limits", "requests"):
        values = res.get(section)
        if isinstance(values, dict):
            for k, v in values.items():
                if isinstance(k, str) and classify(k) is not None:
                    out.append((("resources", section, k), k, v))
    return out


# --- covered kinds ------------------------------------------------------------------------------------


def covered(chk: ObjectCheck, rule: KindRule, embedded: Sequence[tuple[str | int, ...]] = ()) -> None:
    """gpuFields, bare containers, GPU keys outside every path the rule names, infrastructure DaemonSets.
    `embedded`: paths of whole objects inside this one, checked as objects of their own."""
    reported: list[tuple[str | int, ...]] = []
    for gf in rule.gpu_fields:
        for concrete, value in resolve(chk.obj, gf.path):
            last = concrete[-1] if concrete and isinstance(concrete[-1], str) else None
            if value in (None, "", {}, []):
                continue
            mentions = gpu_mentions(value, last)
            if not mentions:
                continue
            chk.report("DRA403", f"{format_path(concrete)} ({_summary(mentions)}): {gf.note}", concrete)
            reported.append(concrete)
    for cpath in rule.containers:
        for concrete, container in resolve(chk.obj, cpath):
            seen: set[str] = set()
            for rel, name, count in _resource_keys(container):
                if name in seen:  # limits and requests of the same resource: one report
                    continue
                seen.add(name)
                placeholder = isinstance(count, str) and PLACEHOLDER.search(count)
                what = "a template placeholder, " if placeholder else ""
                chk.report(
                    "DRA404",
                    f"bare container {format_path(concrete)} requests {name}: {json.dumps(count)} ({what}not "
                    f"rewritten): {chk.wl.kind} has no pod spec here to hold resourceClaims; move the GPU "
                    "request into a pod template the controller copies, or keep the device plugin for this "
                    "workload. "
                    f"Controller: {rule.claims_note}",
                    (*concrete, *rel),
                )
            reported.append(concrete)
    spec_prefixes = [c for p in rule.pod_specs for c, _v in resolve(chk.obj, p)]
    reported.extend(embedded)
    value_keys = scan_data().value_keys
    # one walk for both checks: GPU resource keys (DRA403 here) and GPU-naming values (DRA405 below)
    found = _entries(chk.obj, lambda key, value: classify(key) is not None
                     or (key in value_keys and isinstance(value, str)))
    for path, _v in found:
        if classify(str(path[-1])) is None or _under(path, reported + spec_prefixes):
            continue
        chk.report(
            "DRA403",
            f"{format_path(path)}: GPU resource key outside every pod spec the {chk.wl.kind} rule names "
            f"({rule.source}); the controller may turn it into a GPU request: not rewritten",
            path,
        )
        reported.append(path)
    value_names(chk, reported, found)
    if chk.wl.kind == "DaemonSet" and not chk.wl.needs_gpus:
        infrastructure(chk, spec_prefixes)


def value_names(
    chk: ObjectCheck, skip: Sequence[Sequence[str | int]],
    candidates: Sequence[tuple[tuple[str | int, ...], Any]] | None = None,
) -> None:
    """DRA405: `name: nvidia.com/gpu`, `gpuType: nvidia.com/gpu` and the like, outside reported fields.
    `candidates`: entries of a walk the caller already made (a superset of the value-key entries)."""
    keys = scan_data().value_keys
    if candidates is None:
        candidates = _entries(chk.obj, lambda key, value: key in keys and isinstance(value, str))
    for path, v in candidates:
        if path[-1] not in keys or not isinstance(v, str) or _under(path, skip):
            continue
        rc = classify(v.strip())
        if rc is None or "containers" in path or "initContainers" in path:
            continue
        chk.report(
            "DRA405",
            f"{format_path(path)} = {json.dumps(v)} names the extended resource that the controller requests "
            "for the pods it builds; with DRA it must request a claim instead: not rewritten",
            path,
        )


def infrastructure(chk: ObjectCheck, spec_prefixes: Sequence[tuple[str | int, ...]]) -> None:
    images = scan_data().infrastructure_images
    for spec_path in spec_prefixes:
        spec = chk.obj
        for seg in spec_path:
            spec = spec[seg]  # type: ignore[index]
        for i, c in enumerate(spec.get("containers") or [] if isinstance(spec, dict) else []):
            image = str(c.get("image", "")) if isinstance(c, dict) else ""
            if any(m in image for m in images):
                chk.report(
                    "DRA407",
                    f"DaemonSet runs {image}: GPU infrastructure (device plugin / GPU Feature Discovery), "
                    "not a GPU workload; replace it by the NVIDIA DRA driver on the nodes the driver serves "
                    "instead of "
                    "migrating it",
                    (*spec_path, "containers", i, "image"),
                )
                return


# --- non-workloads ------------------------------------------------------------------------------------


def non_workload(chk: ObjectCheck, rule: NonWorkloadRule, handled_by_effect: bool) -> None:
    reported: list[tuple[str | int, ...]] = []
    for gf in rule.gpu_fields:
        for concrete, value in resolve(chk.obj, gf.path):
            # the field's own name (limits, nodeLabels) says nothing about GPUs here
            mentions = gpu_mentions(value)
            if not mentions:
                continue
            reported.append(concrete)
            if handled_by_effect:
                continue
            chk.report(
                "DRA406",
                f"{rule.note} {format_path(concrete)} ({_summary(mentions)}): {gf.note}",
                concrete,
            )
    value_names(chk, reported)


# --- documents that are not Kubernetes objects ---------------------------------------------------------


def document(file: str, root: Node | None, data: dict[str, Any], rule: DocumentRule, diags: list[Any]) -> None:
    """DRA416 for each GPU field of a known non-Kubernetes document (a compiled Kubeflow pipeline)."""
    for gf in rule.gpu_fields:
        for concrete, value in resolve(data, gf.path):
            mentions = gpu_mentions(value)
            if not mentions:
                continue
            line, col = key_line(root, concrete)
            diags.append(make("DRA416", f"{rule.name}: {format_path(concrete)} ({_summary(mentions)}): {gf.note} "
                              f"{rule.note}", Location(file, line, col)))


# --- uncovered kinds ----------------------------------------------------------------------------------


def _generalize(path: Sequence[str | int]) -> str:
    return format_path(["*" if isinstance(s, int) else s for s in path])


def uncovered(chk: ObjectCheck, keys: Sequence[DocPath]) -> None:
    """DRA401 once per pod spec (or container-less field) holding GPU keys, with a ready-to-paste rule."""
    spots: dict[tuple[str, tuple[str | int, ...]], DocPath] = {}
    for key in keys:
        rel = key[len(chk.item_path) :]
        lists = [i for i, s in enumerate(rel[:-1]) if s in CONTAINER_LISTS and isinstance(rel[i + 1], int)]
        idx = lists[-1] if lists else -1
        if idx > 0:
            spots.setdefault(("podSpecs", tuple(rel[:idx])), rel)
        else:
            res = max((i for i, s in enumerate(rel) if s == "resources"), default=-1)
            spots.setdefault(("gpuFields", tuple(rel[: res + 1] if res >= 0 else rel[:-1])), rel)
    group, version = split_api_version(chk.wl.api_version)
    pod_specs = sorted({_generalize(p) for (k, p) in spots if k == "podSpecs"})
    fields = sorted({_generalize(p) for (k, p) in spots if k == "gpuFields" and p})
    rule: dict[str, Any] = {"group": group, "kind": chk.wl.kind, "versions": [version]}
    if pod_specs:
        rule["podSpecs"] = pod_specs
    if fields:
        note = "GPU count the controller copies into its pods"
        rule["gpuFields"] = [{"path": f, "note": note} for f in fields]
    rule["claimsSupport"] = {"minVersion": "unknown", "note": "check the controller copies resourceClaims"}
    flow = yaml.safe_dump({"kinds": [rule]}, default_flow_style=True, width=10_000, sort_keys=False)
    snippet = flow.strip()
    for (what, spot), key in spots.items():
        shown = format_path(spot) or "(top)"
        where = f"pod spec {shown}" if what == "podSpecs" else f"field {shown}"
        chk.report(
            "DRA401",
            f"{chk.wl.kind} ({chk.wl.api_version}): {where} holds {key[-1]} but no kind rule covers this "
            f"kind, so it is not rewritten; to migrate it, check and save this rule in "
            f"DIR/{chk.wl.kind.lower()}.yaml and pass --rules DIR: {snippet}",
            key,
        )

