"""Bridge mode (`--strategy extended-resource`, KEP-5004 "DRA extended resource", gate DRAExtendedResource).

Workloads keep `resources.limits["nvidia.com/..."]` untouched; DeviceClasses with `spec.extendedResourceName`
tell the scheduler to allocate those resources through DRA. This module decides, per workload, whether that
serves it faithfully, and emits the classes the repository needs into one cluster-scoped file.

It also hosts the pre-pass both strategies share: the DeviceClasses with `extendedResourceName` that the scanned
repository already defines (a resource they map is already DRA-backed).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from dra_migrate.check import prewrite
from dra_migrate.diagnostics.model import Diagnostic, Location, Severity, make
from dra_migrate.frontend.workloads import build
from dra_migrate.ir import ContainerRole, Workload
from dra_migrate.pipeline import FileResult, might_need_migration
from dra_migrate.ruleset.features import Target, feature_problem, parse_version
from dra_migrate.ruleset.kinds import load_kind_rules
from dra_migrate.ruleset.labels import load_label_rules
from dra_migrate.ruleset.prefilters import CLASS as CLASS_PREFILTER
from dra_migrate.ruleset.resources import classify
from dra_migrate.run.writes import settle_new_objects
from dra_migrate.source.discover import discover
from dra_migrate.source.reader import SourceError, parse_source

if TYPE_CHECKING:
    from dra_migrate.lower.context import RepoFacts
    from dra_migrate.run.model import RunConfig, RunResult

GPU_RESOURCE = "nvidia.com/gpu"
DRIVER = "gpu.nvidia.com"
CHART_GPU_CLASS = "gpu.nvidia.com"  # the chart sets extendedResourceName: nvidia.com/gpu on it (v1 API)
STANDALONE_GPU_CLASS = "gpu-extended.nvidia.com"
CLASSES_FILE = "dra-deviceclasses.yaml"
PREFILTER = CLASS_PREFILTER  # see dra_migrate.ruleset.prefilters
_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# Device-plugin configuration labels that mean the GPUs were shared (time-slicing / MPS).
_SHARING_LABELS = (
    "nvidia.com/device-plugin.config",
    "nvidia.com/gpu.replicas",
    "nvidia.com/gpu.sharing-strategy",
    "nvidia.com/mps.capable",
)


# --- pre-pass: classes already in the repository -----------------------------------------------------------


def extended_resource_classes(docs: Iterable[Any]) -> dict[str, str]:
    """extendedResourceName → DeviceClass name, for the DeviceClass objects among `docs` (Lists included)."""
    out: dict[str, str] = {}
    for doc in docs:
        items = doc.get("items") if isinstance(doc, dict) and doc.get("kind") == "List" else [doc]
        for obj in items if isinstance(items, list) else []:
            if not isinstance(obj, dict) or obj.get("kind") != "DeviceClass":
                continue
            if not str(obj.get("apiVersion", "")).startswith("resource.k8s.io/"):
                continue
            spec = obj["spec"] if isinstance(obj.get("spec"), dict) else {}
            name = spec.get("extendedResourceName")
            meta = obj["metadata"] if isinstance(obj.get("metadata"), dict) else {}
            if isinstance(name, str) and name and name not in out:
                out[name] = str(meta.get("name") or "?")
    return out


def scan_raw(raw: bytes) -> dict[str, str]:
    if PREFILTER not in raw:  # cheap: almost no file mentions it
        return {}
    try:
        return extended_resource_classes(yaml.load_all(raw, Loader=_LOADER))  # noqa: S506 (safe loader)
    except (yaml.YAMLError, UnicodeDecodeError, ValueError):
        return {}  # the main pass reports unreadable files


def scan_paths(paths: Iterable[str], excludes: Iterable[str] = ()) -> dict[str, str]:
    def read() -> Iterator[bytes]:
        for found in discover(list(paths), list(excludes)):
            try:
                yield found.path.read_bytes()
            except OSError:
                continue

    return classes_from(read())


def classes_from(files: Iterable[bytes]) -> dict[str, str]:
    """Extended resource → DeviceClass over files' bytes (the first mapping of a resource wins)."""
    out: dict[str, str] = {}
    for raw in files:
        for name, cls in scan_raw(raw).items():
            out.setdefault(name, cls)
    return out


# --- per-workload verdict ------------------------------------------------------------------------------------


@dataclass(slots=True)
class BridgeVerdict:
    """What bridge mode does for one workload."""

    workload: Workload
    resources: list[str]  # extended resources the workload requests (sorted)
    served: bool  # bridge mode serves it as it is
    reasons: list[str] = field(default_factory=list)  # why a rewrite is still needed
    backed_by: dict[str, str] = field(default_factory=dict)  # resource → class already in the repo


def mig_profile(resource: str) -> str | None:
    """'nvidia.com/mig-1g.10gb' → '1g.10gb'; 'nvidia.com/mig-1g.10gb.me' → '1g.10gb+me' (the device plugin
    writes the '+' of a profile as '.'); None for anything else, including the shared '.shared' names."""
    rc = classify(resource)
    if rc is None or rc.scheme != "mig" or rc.group("shared"):
        return None
    profile = rc.group("profile") or ""
    if profile.endswith(".shared"):  # the pattern's optional suffix group can swallow '.shared'
        return None
    return re.sub(r"^(\d+g\.\d+gb)\.(.+)$", r"\1+\2", profile)


def _label_keys(wl: Workload) -> list[tuple[str, str]]:
    """(key, value-or-'') of every node label the workload's GPU pod templates select on."""
    out: list[tuple[str, str]] = []
    for pt in wl.pod_templates:
        if not pt.gpu_containers:
            continue
        out.extend(pt.node_selector.items())
        na = (pt.affinity or {}).get("nodeAffinity") if isinstance(pt.affinity, dict) else None
        if not isinstance(na, dict):
            continue
        req = na.get("requiredDuringSchedulingIgnoredDuringExecution") or {}
        terms = list(req.get("nodeSelectorTerms") or []) if isinstance(req, dict) else []
        for pref in na.get("preferredDuringSchedulingIgnoredDuringExecution") or []:
            if isinstance(pref, dict) and isinstance(pref.get("preference"), dict):
                terms.append(pref["preference"])
        for term in terms:
            for expr in (term.get("matchExpressions") or []) if isinstance(term, dict) else []:
                if isinstance(expr, dict) and isinstance(expr.get("key"), str):
                    values = expr.get("values") or []
                    out.append(
                        (expr["key"], " ".join(str(v) for v in values) if isinstance(values, list) else "")
                    )
    return out


# The first release whose scheduler reuses the devices of DRA-backed extended resources across non-sidecar init
# containers, as the device plugin's kubelet did (kubernetes#134880, fixed by #134882).
INIT_REUSE_RELEASE = (1, 35)


def analyze(wl: Workload, repo_classes: Mapping[str, str], target: str | None = None) -> BridgeVerdict:
    resources = sorted({d.resource for pt in wl.pod_templates for c in pt.gpu_containers for d in c.demands})
    verdict = BridgeVerdict(wl, resources, True)
    verdict.backed_by = {r: repo_classes[r] for r in resources if r in repo_classes}
    for r in resources:
        rc = classify(r)
        scheme = rc.scheme if rc else "?"
        if r in verdict.backed_by:
            continue
        if scheme == "gpu" or (scheme == "mig" and mig_profile(r)):
            continue
        if scheme in ("shared", "mig"):
            verdict.reasons.append(
                f"{r} is a shared GPU (time-slicing/MPS replica): a DeviceClass allocates whole "
                "devices; sharing needs a claim with GpuConfig"
            )
        else:
            verdict.reasons.append(f"{r} ({scheme}) has no DRA device class equivalent")
    rules = load_label_rules()
    selecting: list[str] = []
    for key, value in _label_keys(wl):
        rule = rules.lookup(key)
        if key == "nvidia.com/mig.strategy" and "single" in value:
            verdict.reasons.append(
                "MIG single strategy (nvidia.com/mig.strategy=single): nvidia.com/gpu meant a MIG "
                "slice, but the gpu.nvidia.com class allocates full GPUs only"
            )
        elif key in _SHARING_LABELS:
            verdict.reasons.append(
                f"device-plugin sharing configuration ({key}): bridge mode gives exclusive GPUs"
            )
        elif rule is not None and rule.kind in ("attribute", "capacity") and key not in selecting:
            if "-MIG-" in value.upper() and GPU_RESOURCE in resources:
                verdict.reasons.append(
                    f"{key}={value} names a MIG slice (single strategy): the gpu.nvidia.com "
                    "class allocates full GPUs only"
                )
            selecting.append(key)
    if selecting:
        verdict.reasons.append(
            f"GPU selection via node labels ({', '.join(selecting)}): an extended-resource request carries no "
            "device selector; it keeps working only while GPU Feature Discovery labels the DRA nodes, and then "
            "selects the node, not the device"
        )
    preset = sorted({pt.node_name for pt in wl.pod_templates if pt.gpu_containers and pt.node_name})
    if preset:
        # the scheduler's DynamicResources plugin creates and allocates the claim behind a DRA-backed extended
        # resource (KEP-5004); a pod with nodeName skips it, and the node no longer advertises nvidia.com/gpu
        verdict.reasons.append(
            f"spec.nodeName {preset[0]!r} is preset: the pod bypasses the scheduler, which allocates the devices "
            "behind an extended resource in bridge mode; set nodeSelector {kubernetes.io/hostname: ...} instead"
        )
    if target is not None and _release(target) < INIT_REUSE_RELEASE:
        inits = sorted({c.name for pt in wl.pod_templates for c in pt.gpu_containers
                        if c.role is ContainerRole.INIT and any(d.count for d in c.demands)})
        if inits:
            verdict.reasons.append(
                f"init container(s) {', '.join(repr(n) for n in inits)} request GPUs: before Kubernetes 1.35 the "
                "scheduler gives each init container devices of its own for a DRA-backed extended resource "
                "(kubernetes#134880), where the device plugin reused them for the next containers, so the pod "
                f"would need more devices on {target}"
            )
    verdict.served = not verdict.reasons
    return verdict


def _release(target: str) -> tuple[int, int]:
    try:
        return parse_version(target)
    except ValueError:  # (the CLI checked it; a library caller's odd string gets no init-container reason)
        return INIT_REUSE_RELEASE


# --- the classes ---------------------------------------------------------------------------------------------


def _class(name: str, expression: str, extended_resource: str, api_version: str) -> dict[str, Any]:
    return {
        "apiVersion": api_version,
        "kind": "DeviceClass",
        "metadata": {"name": name},
        "spec": {
            "selectors": [{"cel": {"expression": expression}}],
            "extendedResourceName": extended_resource,
        },
    }


def mig_class_name(profile: str) -> str:
    """'1g.10gb' → 'mig-1g-10gb.gpu.nvidia.com' (the demo's naming; '+me' → '-me')."""
    return "mig-" + re.sub(r"[^a-z0-9]+", "-", profile.lower()).strip("-") + "." + DRIVER


def mig_class(resource: str, api_version: str) -> dict[str, Any]:
    profile = mig_profile(resource)
    assert profile is not None
    expr = (
        f"device.driver == '{DRIVER}' && device.attributes['{DRIVER}'].type == 'mig' && "
        f"device.attributes['{DRIVER}'].profile == '{profile}'"
    )
    return _class(mig_class_name(profile), expr, resource, api_version)


def gpu_class(api_version: str) -> dict[str, Any]:
    expr = f"device.driver == '{DRIVER}' && device.attributes['{DRIVER}'].type == 'gpu'"
    return _class(STANDALONE_GPU_CLASS, expr, GPU_RESOURCE, api_version)


def classes_destination(cfg: RunConfig) -> Path:
    """--claims-out (a .yaml file, or a directory), else dra-deviceclasses.yaml at the root of the first path."""
    if cfg.claims_out is not None:
        return cfg.claims_out if cfg.claims_out.suffix in (".yaml", ".yml") else cfg.claims_out / CLASSES_FILE
    first = Path(cfg.paths[0]) if cfg.paths and cfg.paths[0] != "-" else Path(".")
    root = first if first.is_dir() else first.parent
    return root / CLASSES_FILE


# --- the run -------------------------------------------------------------------------------------------------


def run_bridge(cfg: RunConfig, result: RunResult, facts: RepoFacts) -> list[BridgeVerdict]:
    """Analyse every workload, emit the classes; fills `result` (workload files are never changed). `facts`:
    the pre-pass's (the DeviceClasses already mapping an extended resource)."""
    opts = cfg.options
    repo = dict(facts.extended_resource_classes)
    rules = load_kind_rules(tuple(cfg.rule_dirs))
    verdicts: list[BridgeVerdict] = []
    for display, raw in _inputs(cfg, result):
        result.scanned += 1
        if not might_need_migration(raw):
            continue
        fr = FileResult(display, raw)
        result.files.append(fr)
        try:
            src = parse_source(display, raw)
        except SourceError as exc:
            fr.diagnostics.append(make(exc.code, exc.message, Location(display, exc.line, exc.col)))
            fr.failed = True
            continue
        fe = build(src, rules)
        fr.diagnostics.extend(fe.diagnostics)
        for pd in fe.documents:
            for wl in pd.workloads:
                fr.workloads.append(wl)
                fr.diagnostics.extend(wl.diagnostics)
                if wl.blocked or not wl.needs_gpus:
                    continue
                v = analyze(wl, repo, opts.target_version)
                verdicts.append(v)
                fr.diagnostics.append(_verdict_diagnostic(v))

    api_version = Target(opts.target_version).api_version
    used = sorted({r for v in verdicts for r in v.resources})
    classes: list[dict[str, Any]] = []
    run_loc = Location("<run>")
    for r in used:
        if r in repo:
            result.diagnostics.append(
                make(
                    "DRA615",
                    f"{r} is already mapped by DeviceClass {repo[r]!r} in the "
                    "repository; no class emitted for it",
                    run_loc,
                )
            )
        elif r == GPU_RESOURCE:
            if opts.bridge_emit_gpu_class:
                classes.append(gpu_class(api_version))
                result.diagnostics.append(
                    make(
                        "DRA613",
                        f"DeviceClass {STANDALONE_GPU_CLASS!r} and the chart's {CHART_GPU_CLASS!r} both claim "
                        f"{GPU_RESOURCE}: the most recently created one serves it",
                        run_loc,
                    )
                )
            else:
                result.diagnostics.append(
                    make(
                        "DRA612",
                        f"{GPU_RESOURCE} is mapped by the NVIDIA chart's DeviceClass {CHART_GPU_CLASS!r} "
                        "when the chart renders the resource.k8s.io/v1 API (Kubernetes 1.34+); no class emitted "
                        "(--bridge-emit-gpu-class to emit one)",
                        run_loc,
                    )
                )
        elif mig_profile(r):
            classes.append(mig_class(r, api_version))

    dest = classes_destination(cfg)
    problems: list[Diagnostic] = []
    for obj in classes:
        loc = Location(str(dest))
        problems.extend(prewrite.check_target_features(obj, opts.target_version, opts.feature_gates, loc))
        if opts.validate:
            problems.extend(prewrite.validate_new_object(obj, opts.target_version, loc))
        for expr in prewrite.cel_expressions(obj):
            found = prewrite.check_selector("", expr)
            if found:
                problems.append(make(found[0], found[1], loc, f"DeviceClass/{obj['metadata']['name']}"))
    if verdicts and not classes:  # nothing emitted, but the workloads still rely on the feature
        found = feature_problem(opts.target_version, "extendedResourceName", opts.feature_gates)
        if found:
            problems.append(make(found[0], f"bridge mode: {found[1]}", run_loc))
    result.diagnostics.extend(problems)
    if classes and not any(d.severity is Severity.ERROR for d in problems):
        _emit(cfg, result, dest, classes)
    return verdicts


def _inputs(cfg: RunConfig, result: RunResult) -> Iterable[tuple[str, bytes]]:
    if list(cfg.paths) == ["-"]:
        yield "<stdin>", sys.stdin.buffer.read()
        return
    for found in discover(cfg.paths, cfg.excludes, result.diagnostics):
        try:
            if found.path.stat().st_size > cfg.max_file_size:
                continue
            yield found.display, found.path.read_bytes()
        except OSError as exc:
            result.diagnostics.append(make("DRA106", f"cannot read: {exc.strerror}", Location(found.display)))


def _verdict_diagnostic(v: BridgeVerdict) -> Diagnostic:
    wl = v.workload
    loc = Location(wl.file, wl.line, 1)
    if v.backed_by and set(v.backed_by) == set(v.resources):
        classes = ", ".join(f"{r} by DeviceClass {c!r}" for r, c in sorted(v.backed_by.items()))
        return make("DRA614", f"already served by DRA: {classes}", loc, wl.ref)
    if v.served:
        return make("DRA610", f"served by bridge mode as it is ({', '.join(v.resources)})", loc, wl.ref)
    return make("DRA611", "still needs a rewrite: " + "; ".join(v.reasons), loc, wl.ref)


def _emit(cfg: RunConfig, result: RunResult, dest: Path, classes: list[dict[str, Any]]) -> None:
    settle_new_objects(cfg, result, dest, [(str(dest), c) for c in classes], "DeviceClass")
