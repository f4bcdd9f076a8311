"""The objects of a kustomize build and the patches that reach each of them, level by level.

For a kustomization, `Builder.state(k)` gives every object its build renders (from files; remote resources and
generators are not seen), each with the patches applied to it on the way up: a kustomization applies its
strategic-merge patches and `patches:` to what its resources and components rendered, then its namespace and
name prefix/suffix, then `patchesJson6902` (kustomize's builtin transformer order). A patch without a target
finds its object by any name or namespace the object had on the way (kustomize's GetMatchingResourcesByAnyId);
a target selector matches the object's original or current name and namespace (resmap Select).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dra_migrate.ruleset.kinds import KindRuleSet, split_api_version
from dra_migrate.run.integrations.kustomize import Kustomization, PatchEntry
from dra_migrate.run.integrations.kustomize_merge import PatchError, check_strategic, json_patch, strategic_merge
from dra_migrate.run.integrations.kustomize_tree import BuildIndex

CLUSTER_SCOPED = frozenset({"Namespace", "ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition",
                            "PersistentVolume", "StorageClass", "PriorityClass", "DeviceClass", "Node",
                            "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"})


@dataclass(slots=True)
class PatchDoc:
    """One document of a patch entry: a strategic-merge object or a list of JSON 6902 operations."""

    k: Kustomization
    entry: PatchEntry
    doc: int  # index of the document in the patch file or inline text
    data: Any
    json6902: bool

    @property
    def key(self) -> tuple[Path, str, int, int]:
        return (self.k.path, self.entry.field, self.entry.index, self.doc)

    @property
    def entry_key(self) -> tuple[Path, str, int]:
        return (self.k.path, self.entry.field, self.entry.index)


@dataclass(slots=True)
class Applied:
    """A patch document as it reached one object, with the object as it was just before."""

    patch: PatchDoc
    before: dict[str, Any]


@dataclass(slots=True)
class Level:
    """The patches of one kustomization that reached an object, and the object after them."""

    k: Kustomization
    applied: list[Applied]
    result: dict[str, Any]


@dataclass(slots=True)
class Instance:
    file: Path
    doc: int
    item: int | None  # index in a kind: List
    original: dict[str, Any]
    current: dict[str, Any]  # with every patch so far applied (the device-plugin world)
    ids: list[tuple[str, str]] = field(default_factory=list)  # (namespace, name) on the way up
    levels: list[Level] = field(default_factory=list)
    errors: list[tuple[PatchDoc, str]] = field(default_factory=list)  # patches that could not be applied to it

    @property
    def kind(self) -> str:
        return str(self.original.get("kind", ""))

    @property
    def group(self) -> str:
        return split_api_version(str(self.original.get("apiVersion", "")))[0]

    def describe(self) -> str:
        return f"{self.kind} {self.ids[0][1]}"


Loader = Callable[[Path], list[Any] | None]  # the plain documents of a file, None when unreadable


class Builder:
    def __init__(self, index: BuildIndex, load_docs: Loader, load_patch: Callable[[PatchEntry, Kustomization],
                 tuple[list[Any], str | None]], rules: KindRuleSet) -> None:
        self.index, self.load_docs, self.load_patch, self.rules = index, load_docs, load_patch, rules
        self._memo: dict[Path, list[Instance]] = {}
        self.patch_problems: dict[tuple[Path, str, int], str] = {}  # (kustomization, field, index) → why

    def state(self, k: Kustomization) -> list[Instance]:
        key = k.path
        if key not in self._memo:
            self._memo[key] = []  # a cycle renders nothing more
            self._memo[key] = self._render(k)
        return [_copy(i) for i in self._memo[key]]

    def _render(self, k: Kustomization) -> list[Instance]:
        instances: list[Instance] = []
        for _entry, target, _line in k.resources:
            sub = self.index.by_dir.get(target)
            instances.extend(self.state(sub) if sub is not None else self._file(target))
        for _entry, target, _line in k.components:  # a component works on what its parent has so far
            comp = self.index.by_dir.get(target)
            if comp is not None:
                own = [i for _e, t, _l in comp.resources for i in self._file_or_dir(t)]
                instances = self._level(comp, instances + own)
        return self._level(k, instances)

    def _file_or_dir(self, target: Path) -> list[Instance]:
        sub = self.index.by_dir.get(target)
        return self.state(sub) if sub is not None else self._file(target)

    def _file(self, path: Path) -> list[Instance]:
        docs = self.load_docs(path)
        out: list[Instance] = []
        for d, obj in enumerate(docs or []):
            if not isinstance(obj, dict):
                continue
            items = obj.get("items") if obj.get("kind", "").endswith("List") else None
            pairs = [(i, o) for i, o in enumerate(items)] if isinstance(items, list) else [(None, obj)]
            for item, o in pairs:
                if isinstance(o, dict) and o.get("kind"):
                    meta = _mapping(o.get("metadata"))
                    inst = Instance(path, d, item, o, o)
                    inst.ids.append((str(meta.get("namespace") or ""), str(meta.get("name") or "")))
                    out.append(inst)
        return out

    def _level(self, k: Kustomization, instances: list[Instance]) -> list[Instance]:
        applied: dict[int, list[Applied]] = {}
        for fld in ("patchesStrategicMerge", "patches", "replicas"):  # (replicas: kustomize.load's patches)
            self._patch(k, fld, instances, applied)
        for inst in instances:
            ns, name = inst.ids[-1]
            if k.namespace and inst.kind not in CLUSTER_SCOPED:
                ns = k.namespace
            if k.name_prefix or k.name_suffix or ns != inst.ids[-1][0]:
                if inst.kind not in ("Namespace", "CustomResourceDefinition"):
                    name = k.name_prefix + name + k.name_suffix
                inst.ids.append((ns, name))
        self._patch(k, "patchesJson6902", instances, applied)
        for n, inst in enumerate(instances):
            if n in applied:
                inst.levels.append(Level(k, applied[n], inst.current))
        return instances

    def _patch(self, k: Kustomization, fld: str, instances: list[Instance], applied: dict[int, list[Applied]]) -> None:
        for entry in (e for e in k.patches if e.field == fld):
            docs, problem = self.load_patch(entry, k)
            if problem is not None:
                self.patch_problems[(k.path, entry.field, entry.index)] = problem
                continue
            for d, data in enumerate(docs):
                if data is None:
                    continue
                is_json = fld == "patchesJson6902" or isinstance(data, list)
                pd = PatchDoc(k, entry, d, data, is_json)
                for n, inst in enumerate(instances):
                    if not _matches(pd, inst):
                        continue
                    before = inst.current
                    try:
                        inst.current = self._apply(pd, inst)
                    except PatchError as exc:
                        inst.errors.append((pd, str(exc)))
                        continue
                    applied.setdefault(n, []).append(Applied(pd, before))

    def _apply(self, pd: PatchDoc, inst: Instance) -> dict[str, Any]:
        # lazy: start-up (run.integrations.kustomize_facts: ~1 ms, only _apply() needs it)
        from dra_migrate.run.integrations.kustomize_facts import merge_keys_for

        if pd.json6902:
            out = json_patch(inst.current, pd.data)
        else:
            check_strategic(pd.data)
            out = strategic_merge(inst.current, pd.data, merge_keys_for(inst.current, self.rules))
        if not isinstance(out, dict):
            raise PatchError("the patch does not leave an object")
        return out


def _copy(inst: Instance) -> Instance:
    """The instance for another build that includes it. Objects are shared, never copied: no step changes one in
    place (the merges and patches of kustomize_merge return new containers)."""
    return Instance(inst.file, inst.doc, inst.item, inst.original, inst.current, list(inst.ids),
                    list(inst.levels), list(inst.errors))


def _matches(pd: PatchDoc, inst: Instance) -> bool:
    target = pd.entry.target
    if target is not None:
        return selects(target, inst)
    if pd.json6902 or not isinstance(pd.data, dict):
        return False
    meta = _mapping(pd.data.get("metadata"))
    if pd.data.get("kind") != inst.kind or not meta.get("name"):
        return False
    group = split_api_version(str(pd.data.get("apiVersion", "")))[0]
    if group != inst.group:
        return False
    ns = _effective(str(meta.get("namespace") or ""))
    return any(n == meta["name"] and _effective(i_ns) == ns for i_ns, n in inst.ids)


def selects(target: dict[str, Any], inst: Instance) -> bool:
    """kustomize's target selector (types.Selector): group, version, kind exact; name and namespace regular
    expressions against the original or the current id; label and annotation selectors on the object."""
    group, version = split_api_version(str(inst.current.get("apiVersion", "")))
    for key, have in (("group", group), ("version", version), ("kind", inst.kind)):
        want = target.get(key)
        if want and str(want) != have:
            return False
    for key, pos in (("name", 1), ("namespace", 0)):
        want = target.get(key)
        if want and not any(_full(str(want), ids[pos]) for ids in (inst.ids[0], inst.ids[-1])):
            return False
    meta = _mapping(inst.current.get("metadata"))
    for key, where in (("labelSelector", "labels"), ("annotationSelector", "annotations")):
        want = target.get(key)
        if want and not _label_match(str(want), _mapping(meta.get(where))):
            return False
    return True


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _full(pattern: str, value: str) -> bool:
    try:
        return re.fullmatch(pattern, value) is not None
    except re.error:
        return pattern == value


def _effective(ns: str) -> str:
    return ns or "default"


def _label_match(selector: str, labels: dict[str, Any]) -> bool:
    """Equality-based selectors (a=b, a!=b, a); anything else matches nothing (the model does not guess)."""
    for part in (p.strip() for p in selector.split(",") if p.strip()):
        if "!=" in part:
            k, v = (s.strip() for s in part.split("!=", 1))
            if str(labels.get(k)) == v:
                return False
        elif "=" in part:
            k, v = (s.strip() for s in part.replace("==", "=").split("=", 1))
            if str(labels.get(k)) != v:
                return False
        elif re.fullmatch(r"[A-Za-z0-9./_-]+", part):
            if part not in labels:
                return False
        else:
            return False
    return True
