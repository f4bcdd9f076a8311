"""Read (already migrated) manifests for the simulator: pod templates with their replica counts, and the
ResourceClaimTemplates, ResourceClaims and DeviceClasses they use.

Pod specs are found by the frontend and the kind rules (`rules/kinds/`), so every kind `migrate` covers,
CRDs included, is simulated too.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dra_migrate.diagnostics.model import Diagnostic, Location, make
from dra_migrate.frontend.replicas import replica_count
from dra_migrate.frontend.workloads import build
from dra_migrate.ir import DocPath
from dra_migrate.plan import walk
from dra_migrate.ruleset.kinds import KindRuleSet, load_kind_rules
from dra_migrate.source.compose import ComposeError
from dra_migrate.source.discover import discover
from dra_migrate.source.reader import SourceError, parse_source


@dataclass(slots=True)
class PodWorkload:
    """One pod template of a workload (a PyTorchJob has several) and how many pods it makes."""

    file: str
    line: int
    kind: str
    name: str
    namespace: str | None
    ref: str  # kind/namespace/name
    spec_path: DocPath
    pod_spec: Mapping[str, Any]
    replicas: int  # for a DaemonSet: 0, one pod per eligible node
    replicas_source: str  # e.g. "spec.replicas", "spec.parallelism", "default", "daemonset", "--replicas"
    obj: Mapping[str, Any]

    @property
    def label(self) -> str:
        """The ref, plus the pod spec path when the object has several pod templates."""
        return self.ref

    @property
    def daemon(self) -> bool:
        return self.replicas_source == "daemonset"


@dataclass(slots=True)
class Manifests:
    workloads: list[PodWorkload] = field(default_factory=list)
    # (namespace or "", name) -> object
    templates: dict[tuple[str, str], Mapping[str, Any]] = field(default_factory=dict)
    claims: dict[tuple[str, str], Mapping[str, Any]] = field(default_factory=dict)
    device_classes: list[Mapping[str, Any]] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    files: int = 0

    def resolve(
        self, table: Mapping[tuple[str, str], Mapping[str, Any]], namespace: str | None, names: Iterable[str]
    ) -> dict[str, Mapping[str, Any]]:
        """name -> object for the names a pod uses: same namespace first, then unnamespaced, then any."""
        out: dict[str, Mapping[str, Any]] = {}
        for name in names:
            for key in ((namespace or "", name), ("", name)):
                if key in table:
                    out[name] = table[key]
                    break
            else:
                found = [obj for (_, n), obj in sorted(table.items()) if n == name]
                if found:
                    out[name] = found[0]
        return out


def _flatten(data: Any) -> list[Any]:
    if isinstance(data, dict) and data.get("kind") == "List" and isinstance(data.get("items"), list):
        return list(data["items"])
    return [data]


def _key(obj: Mapping[str, Any]) -> tuple[str, str]:
    meta = obj.get("metadata")
    if not isinstance(meta, Mapping):
        meta = {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


def read_manifests(paths: Sequence[str], rules: KindRuleSet | None = None) -> Manifests:
    rules = rules or load_kind_rules()
    out = Manifests()
    for found in discover(paths, (), out.diagnostics):
        out.files += 1
        try:
            raw = found.path.read_bytes()
        except OSError as exc:
            out.diagnostics.append(make("DRA106", f"cannot read: {exc.strerror}", Location(found.display)))
            continue
        read_source(found.display, raw, rules, out)
    return out


def read_source(path: str, raw: bytes, rules: KindRuleSet, out: Manifests) -> None:
    try:
        src = parse_source(path, raw)
        fe = build(src, rules)
    except (SourceError, ComposeError) as exc:
        out.diagnostics.append(make(exc.code, exc.message, Location(path, exc.line, exc.col)))
        return
    for pd in fe.documents:
        for obj in _flatten(pd.data):
            if not isinstance(obj, dict):
                continue
            kind = obj.get("kind")
            if kind == "ResourceClaimTemplate":
                out.templates[_key(obj)] = obj
            elif kind == "ResourceClaim":
                out.claims[_key(obj)] = obj
            elif kind == "DeviceClass":
                out.device_classes.append(obj)
        for wl in pd.workloads:
            obj = wl.data  # the object itself, also for one embedded in a manifest string
            if not isinstance(obj, dict):
                continue
            for pt in wl.pod_templates:
                rel = pt.path[len(wl.item_path) :]
                spec = walk(obj, rel)
                if not isinstance(spec, dict):
                    continue
                replicas, source = replica_count(obj, rel)
                out.workloads.append(
                    PodWorkload(
                        path,
                        wl.line,
                        wl.kind,
                        wl.name,
                        wl.namespace,
                        wl.ref,
                        rel,
                        spec,
                        replicas,
                        source,
                        obj,
                    )
                )
