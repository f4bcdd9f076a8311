"""Repo-wide pre-pass: find device plugin sharing configs and what points at them.

Cheap by design: a file is parsed only if its raw bytes contain one of PREFILTER; everything else is
skipped without decoding. Files that fail to parse are ignored here (the main pass reports them).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import yaml

from dra_migrate.diagnostics.model import Diagnostic, Location, make
from dra_migrate.frontend.mig import MIG_STRATEGY_LABEL
from dra_migrate.lower.sharing.model import (
    CONFIG_LABEL,
    MPS,
    NONE,
    TIME_SLICING,
    ConfigPointer,
    SharedResource,
    SharingConfig,
    SharingInventory,
)
from dra_migrate.lower.sharing.scope import ScopeMapping, absolute, mapped_scope
from dra_migrate.ruleset.prefilters import SHARING as SHARING_PREFILTER
from dra_migrate.run.integrations.kustomize_reach import kustomize_builds, tree_scope
from dra_migrate.source.discover import discover
from dra_migrate.source.nodes import key_line
from dra_migrate.source.plain import to_plain
from dra_migrate.source.reader import SourceError, parse_source

PREFILTER = SHARING_PREFILTER  # see dra_migrate.ruleset.prefilters (it names CONFIG_LABEL too)
MAX_BYTES = 8 * 1024 * 1024


def scan_sharing_configs(paths: Sequence[str], excludes: Sequence[str] = ()) -> SharingInventory:
    return inventory_from(read_files(paths, excludes))


def inventory_from(
    files: Iterable[tuple[str, bytes]],
    elsewhere: Iterable[tuple[str, bytes]] = (),
    kustomizations: Sequence[tuple[str, Path]] = (),
    mappings: Sequence[ScopeMapping] = (),
) -> SharingInventory:
    """The inventory of (display path, bytes) pairs; a run passes the files its own walk already read.

    `elsewhere`: the --sharing-config files, which apply to every path. `kustomizations` (display, path) and
    `mappings` (sharing-scopes) decide which workloads each of the other configs governs (sharing.scope)."""
    inv = SharingInventory()
    seen: set[str] = set()
    workload_files: list[str] = []
    for display, raw in files:
        seen.add(absolute(display))
        if holds_gpu_workload(raw):
            workload_files.append(display)
        if might_hold_sharing(raw):
            scan_bytes(display, raw, inv)
    everywhere: set[str] = set()
    for display, raw in elsewhere:
        everywhere.add(absolute(display))
        if absolute(display) not in seen and might_hold_sharing(raw):
            scan_bytes(display, raw, inv)
    _attach_nodes(inv)
    _assign_scopes(inv, workload_files, everywhere, kustomizations, mappings)
    return inv


def might_hold_sharing(raw: bytes) -> bool:
    return any(p in raw for p in PREFILTER)


def holds_gpu_workload(raw: bytes) -> bool:
    """May hold a pod template with an NVIDIA resource (a config alone names nvidia.com/gpu too)."""
    return b"nvidia.com/" in raw and (b"containers" in raw)


def _assign_scopes(inv: SharingInventory, workload_files: list[str], everywhere: set[str],
                   kustomizations: Sequence[tuple[str, Path]], mappings: Sequence[ScopeMapping]) -> None:
    """Each config's and pointer's scope (sharing.scope); configs from `everywhere` keep the global one."""
    sources = [x.source for x in inv.configs] + [p.source for p in inv.pointers]
    local = [src for src in sources if absolute(src) not in everywhere]
    if not local:
        return
    builds = kustomize_builds(kustomizations)
    for p in inv.pointers:
        if absolute(p.source) not in everywhere:
            p.scope = mapped_scope(p.source, mappings) or tree_scope([p.source], builds)
    for c in inv.configs:
        if absolute(c.source) in everywhere:
            continue
        mapped = mapped_scope(c.source, mappings)
        if mapped is not None:
            c.scope = mapped
            continue
        sources = [c.source, *(p.source for p in inv.pointers if p.source != c.source and _binds(p, c, inv))]
        c.scope = tree_scope(sources, builds)
    for c in inv.configs:
        c.reaches_workloads = any(c.scope.contains(f) for f in workload_files)


def _binds(p: ConfigPointer, c: SharingConfig, inv: SharingInventory) -> bool:
    """A ClusterPolicy / values pointer naming c's ConfigMap carries c to the pointer's own tree and builds,
    when c's file is the nearest of the files holding a ConfigMap of that name (the most leading directories
    in common with the pointer's); a tie binds none: which cluster's ConfigMap it means is not known."""
    if p.config_map is None or c.config_map != p.config_map:
        return False
    here = os.path.dirname(absolute(p.source))
    sources = {x.source for x in inv.configs if x.config_map == p.config_map}
    depth = {src: len(os.path.commonpath([here, os.path.dirname(absolute(src))])) for src in sources}
    best = max(depth.values())
    nearest = [src for src, d in depth.items() if d == best]
    return nearest == [c.source]


def read_files(paths: Sequence[str], excludes: Sequence[str] = ()) -> Iterator[tuple[str, bytes]]:
    """(display path, bytes) of every file under `paths` (files over MAX_BYTES and unreadable ones skipped)."""
    for found in discover(paths, excludes):
        try:
            if found.path.stat().st_size > MAX_BYTES:
                continue
            yield found.display, found.path.read_bytes()
        except OSError:
            continue


def scan_bytes(path: str, raw: bytes, inv: SharingInventory) -> None:
    try:
        src = parse_source(path, raw)
        docs = src.documents
    except (SourceError, Exception):  # noqa: BLE001 - the main pass reports unreadable files
        return
    for doc in docs:
        try:
            data = to_plain(doc.root)
        except Exception:  # noqa: BLE001
            continue
        objs: Iterable[tuple[tuple[str | int, ...], Any]] = [((), data)]
        if isinstance(data, dict) and data.get("kind") == "List" and isinstance(data.get("items"), list):
            objs = [(("items", i), o) for i, o in enumerate(data["items"])]
        for base, obj in objs:
            if isinstance(obj, dict):
                _object(path, doc.root, base, obj, inv)


def _line(root: Any, path: tuple[str | int, ...]) -> int:
    try:
        return key_line(root, path)[0]
    except Exception:  # noqa: BLE001
        return 0


def _object(path: str, root: Any, base: tuple[str | int, ...], obj: dict[str, Any], inv: SharingInventory) -> None:
    kind = obj.get("kind")
    meta = _map(obj.get("metadata"))
    name = meta.get("name") if isinstance(meta.get("name"), str) else None
    namespace = meta.get("namespace") if isinstance(meta.get("namespace"), str) else None
    if kind == "ConfigMap" and isinstance(obj.get("data"), dict):
        for key, value in obj["data"].items():
            cfg = parse_config(value)
            if cfg is not None:
                inv.configs.append(_config(cfg, path, _line(root, (*base, "data", key)), "ConfigMap", name, namespace,
                                           str(key)))
    elif kind == "ClusterPolicy":
        spec = _map(obj.get("spec"))
        dp = _map(spec.get("devicePlugin"))
        config = _map(dp.get("config"))
        if config.get("name") or config.get("default"):
            inv.pointers.append(ConfigPointer(path, _line(root, (*base, "spec", "devicePlugin", "config")),
                                              "ClusterPolicy", _str(config.get("name")), _str(config.get("default"))))
        mig = _map(spec.get("mig"))
        # the GPU Operator's default MIG strategy is single when the ClusterPolicy does not say
        inv.mig_strategies.append((f"ClusterPolicy {name} ({path})", str(mig.get("strategy") or "single")))
    elif kind == "Node":
        labels = _map(meta.get("labels"))
        if CONFIG_LABEL in labels and name:
            inv.node_config_labels[name] = str(labels[CONFIG_LABEL])
        if MIG_STRATEGY_LABEL in labels:
            inv.mig_strategies.append((f"Node {name} ({path})", str(labels[MIG_STRATEGY_LABEL])))
    elif kind is None and "apiVersion" not in obj:
        _values(path, root, base, obj, inv)


def _values(path: str, root: Any, base: tuple[str | int, ...], obj: dict[str, Any], inv: SharingInventory) -> None:
    """Helm values of the gpu-operator chart (devicePlugin.config) or the device plugin chart (config), or a
    bare device plugin config file."""
    bare = parse_config(obj)
    if bare is not None and "sharing" in obj:
        inv.configs.append(_config(bare, path, _line(root, (*base, "sharing")), "ConfigFile", None, None, None))
        return
    dp = obj.get("devicePlugin")
    if isinstance(dp, dict) and isinstance(dp.get("config"), dict):
        _chart_config(path, root, (*base, "devicePlugin", "config"), dp["config"], "data", inv)
        mig = obj.get("mig")
        if isinstance(mig, dict) and mig.get("strategy"):
            inv.mig_strategies.append((f"gpu-operator values ({path})", str(mig["strategy"])))
        elif "operator" in obj or "driver" in obj:  # looks like the gpu-operator chart: its default is single
            inv.mig_strategies.append((f"gpu-operator values ({path})", "single"))
    elif isinstance(obj.get("config"), dict) and ({"map", "name", "default"} & set(obj["config"])):
        _chart_config(path, root, (*base, "config"), obj["config"], "map", inv)
        mig = obj.get("migStrategy")
        if isinstance(mig, str):
            inv.mig_strategies.append((f"device plugin values ({path})", mig))


def _chart_config(path: str, root: Any, at: tuple[str | int, ...], config: dict[str, Any], data_key: str,
                  inv: SharingInventory) -> None:
    name, default = _str(config.get("name")), _str(config.get("default"))
    data = config.get(data_key)
    if isinstance(data, dict):
        for key, value in data.items():
            cfg = parse_config(value)
            if cfg is not None:
                inv.configs.append(_config(cfg, path, _line(root, (*at, data_key, key)), "HelmValues", name, None,
                                           str(key)))
    if name or default:
        inv.pointers.append(ConfigPointer(path, _line(root, at), "HelmValues", name, default))


def _map(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def _str(v: Any) -> str | None:
    return str(v) if isinstance(v, (str, int)) and str(v) else None


def parse_config(value: Any) -> dict[str, Any] | None:
    """A device plugin config (`version: v1` with flags/sharing) from a ConfigMap value or a mapping."""
    if isinstance(value, str):
        if "sharing" not in value and "version" not in value:
            return None
        try:
            value = yaml.safe_load(value)
        except yaml.YAMLError:
            return None
    if not isinstance(value, dict):
        return None
    if str(value.get("version", "v1")) != "v1":
        return None
    # the config's sections are mappings (a `sharing: consumable` in .dra-migrate.yaml is not a config)
    sections = [value[k] for k in ("sharing", "flags") if k in value]
    if not sections or not all(isinstance(v, dict) for v in sections):
        return None
    return value


def _config(cfg: dict[str, Any], path: str, line: int, origin: str, cm: str | None, ns: str | None,
            key: str | None) -> SharingConfig:
    out = SharingConfig(path, line, origin, cm, ns, key)
    flags = _map(cfg.get("flags"))
    if isinstance(flags.get("migStrategy"), str):
        out.mig_strategy = flags["migStrategy"]
    sharing = _map(cfg.get("sharing"))
    for field_name, strategy in (("timeSlicing", TIME_SLICING), ("mps", MPS)):
        block = sharing.get(field_name)
        if not isinstance(block, dict):
            continue
        resources = [
            SharedResource(str(r["name"]), int(r["replicas"]))
            for r in block.get("resources") or []
            if isinstance(r, dict) and isinstance(r.get("name"), str) and _int(r.get("replicas")) > 1
        ]
        if not resources:
            continue
        out.strategy = strategy
        out.resources = resources
        out.rename_by_default = block.get("renameByDefault") is True
        fail = block.get("failRequestsGreaterThanOne")
        # the device plugin defaults this to true for MPS and false for time-slicing
        out.fail_requests_greater_than_one = fail is True or (fail is None and strategy == MPS)
        break
    policy = _map(flags.get("plugin")).get("sharedDevicesAllocationPolicy")
    if isinstance(policy, str):
        out.allocation_policy = policy
    if out.strategy == NONE:
        out.resources = []
    return out


def _int(v: Any) -> int:
    try:
        return int(v)
    except (TypeError, ValueError):
        return 0


def _attach_nodes(inv: SharingInventory) -> None:
    for node, key in sorted(inv.node_config_labels.items()):
        for c in inv.configs:
            if c.key == key:
                c.nodes.append(node)
    for c in inv.configs:
        if c.mig_strategy:
            inv.mig_strategies.append((f"device plugin config {c.label}", c.mig_strategy))


def obsolete_config_diagnostics(inv: SharingInventory) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    for c in inv.configs:
        if c.strategy == NONE:
            what = "no sharing"
        else:
            shares = ", ".join(f"{c.advertised(r.name)} replicas={r.replicas}" for r in c.resources)
            what = f"{c.strategy} {shares}"
        nodes = f"; selected on node(s) {', '.join(c.nodes)}" if c.nodes else ""
        ref = _ref(c)
        out.append(make("DRA501", f"device plugin config {c.label} ({what}{nodes}; applies to "
                        f"{c.scope.describe()}) left unchanged: under DRA sharing is set per claim (GpuConfig), so "
                        "it becomes obsolete once the device plugin is removed", Location(c.source, c.line, 1), ref))
    return out


def _ref(c: SharingConfig) -> str:
    return f"ConfigMap/{c.namespace + '/' if c.namespace else ''}{c.config_map}" if c.origin == "ConfigMap" else ""


def scope_diagnostics(inv: SharingInventory, mappings: Sequence[ScopeMapping]) -> list[Diagnostic]:
    """DRA523: a sharing config whose scope holds no GPU workload, a sharing-scopes entry naming no config."""
    out: list[Diagnostic] = []
    for c in inv.configs:
        if c.strategy == NONE or c.reaches_workloads:
            continue
        shares = ", ".join(f"{c.advertised(r.name)} replicas={r.replicas}" for r in c.resources)
        out.append(make("DRA523", f"device plugin config {c.label} ({c.strategy} {shares}) applies to "
                        f"{c.scope.describe()}, which holds no GPU workload: it is applied to none; if it serves "
                        "workloads elsewhere, map it in .dra-migrate.yaml (sharing-scopes: [{config: "
                        f"{c.source}, paths: [...]}}]) or pass it with --sharing-config",
                        Location(c.source, c.line, 1), _ref(c)))
    for m in mappings:
        sources = [x.source for x in inv.configs] + [p.source for p in inv.pointers]
        if not any(m.matches_config(src) for src in sources):
            out.append(make("DRA523", f"sharing-scopes entry config: {m.config} matches no device plugin config "
                            "of this run; the entry is ignored", Location(m.where)))
    return out
