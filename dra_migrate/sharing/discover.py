"""Repo-wide pre-pass: find device plugin sharing configs and what points at them.

Cheap by design: a file is parsed only if its raw bytes contain one of PREFILTER; everything else is
skipped without decoding. Files that fail to parse are ignored here (the main pass reports them).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import yaml

from dra_migrate.diagnostics import Diagnostic, Location, make
from dra_migrate.discover import discover
from dra_migrate.prefilters import SHARING as SHARING_PREFILTER
from dra_migrate.sharing.model import (
    CONFIG_LABEL,
    MIG_STRATEGY_LABEL,
    MPS,
    NONE,
    TIME_SLICING,
    ConfigPointer,
    SharedResource,
    SharingConfig,
    SharingInventory,
)
from dra_migrate.source.nodes import key_line
from dra_migrate.source.plain import to_plain
from dra_migrate.source.reader import SourceError, parse_source

PREFILTER = SHARING_PREFILTER  # see dra_migrate.prefilters (it names CONFIG_LABEL too)
MAX_BYTES = 8 * 1024 * 1024


def scan_sharing_configs(paths: Sequence[str], excludes: Sequence[str] = ()) -> SharingInventory:
    return inventory_from(read_files(paths, excludes))


def inventory_from(files: Iterable[tuple[str, bytes]]) -> SharingInventory:
    """The inventory of (display path, bytes) pairs; a run passes the files its own walk already read."""
    inv = SharingInventory()
    for display, raw in files:
        if might_hold_sharing(raw):
            scan_bytes(display, raw, inv)
    _attach_nodes(inv)
    return inv


def might_hold_sharing(raw: bytes) -> bool:
    return any(p in raw for p in PREFILTER)


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
    if not ({"sharing", "flags"} & set(value)):
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
        ref = f"ConfigMap/{c.namespace + '/' if c.namespace else ''}{c.config_map}" if c.origin == "ConfigMap" else ""
        out.append(make("DRA501", f"device plugin config {c.label} ({what}{nodes}) left unchanged: under DRA sharing "
                        "is set per claim (GpuConfig), so it becomes obsolete once the device plugin is removed",
                        Location(c.source, c.line, 1), ref))
    return out
