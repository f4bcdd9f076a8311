"""Overlay patches of migrated workloads: carried into the DRA world, or the workload is not migrated.

For every object a patch reaches, level by level (kustomize_model), with T the compiler's migration:

    before_K = the object after the patches of K (and of every kustomization below K)
    after_K  = the patches of K, minus what T removes from before_K, applied to after_(K-1) (after_0 = T(base))

A patch is carried over when after_K equals T(before_K), pod for pod, claim reference for claim reference, so
the built object after the migration is exactly the migrated build before it. What T changed in the claim
objects (a count, a selector the overlay asked for) becomes a JSON 6902 patch of the base's claim template in
K: kustomize's OpenAPI does not know resource.k8s.io, so a strategic merge would replace the whole requests
list; a JSON 6902 operation by index, guarded by a `test` of the request's name, fails loudly instead of
patching the wrong request if the base changes. When the equality does not hold, the workload's file and the
patch stay as they are, with the reason.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from dra_migrate.pipeline import might_need_migration
from dra_migrate.plan import DocPath, apply_ops
from dra_migrate.ruleset.kinds import KindRuleSet
from dra_migrate.run.integrations.kustomize import Kustomization
from dra_migrate.run.integrations.kustomize_facts import merge_keys_for
from dra_migrate.run.integrations.kustomize_merge import (
    ObjPath,
    PatchError,
    diff_ops,
    json_patch,
    leaves,
    lookup,
    pointer,
    strategic_merge,
    to_pointer,
)
from dra_migrate.run.integrations.kustomize_model import Applied, Instance, Level, PatchDoc

CLAIM_KINDS = {"resourceClaimTemplateName": "ResourceClaimTemplate", "resourceClaimName": "ResourceClaim"}
RefKey = tuple[DocPath, str]  # (pod spec path, resourceClaims entry name)
PatchKey = tuple[Path, str, int, int]


@dataclass(slots=True)
class Translation:
    objects: list[dict[str, Any]]  # the output's objects: the documents (List items flattened) and new objects
    refused: str | None = None  # why the compiler failed on it


Translate = Callable[[str, str], Translation]  # (display, YAML text)


@dataclass(slots=True)
class ClaimPatch:
    """A JSON 6902 patch of the claim object a migrated workload references, written in kustomization `k`."""

    k: Kustomization
    inst: Instance
    ref: RefKey
    kind: str
    ops: list[dict[str, Any]]
    sources: list[PatchDoc]

    @property
    def file_name(self) -> str:
        pod, entry = self.ref
        name = self.inst.ids[0][1]
        where = "-".join(str(p) for p in pod if isinstance(p, str) and p not in ("spec", "template")) or ""
        return f"{name}-{where + '-' if where else ''}{entry}.dra-patch.yaml".replace("/", "-")


@dataclass(slots=True)
class Decisions:
    refused: dict[Path, list[tuple[str, str]]] = field(default_factory=dict)  # file → [(why, patch where)]
    deletions: dict[PatchKey, set[DocPath]] = field(default_factory=dict)  # what each patch document loses
    patch_docs: dict[PatchKey, PatchDoc] = field(default_factory=dict)
    claim_patches: list[ClaimPatch] = field(default_factory=list)
    carried: dict[PatchKey, list[Instance]] = field(default_factory=dict)  # patch → the objects it is checked on
    # patch entry → (whether that refuses a migration, why it stays as it is)
    stays: dict[tuple[Path, str, int], tuple[bool, str]] = field(default_factory=dict)

    def refuse(self, file: Path, why: str, where: str) -> None:
        self.refused.setdefault(file, []).append((why, where))


InstKey = tuple[Path, int, int | None]


def inst_key(inst: Instance) -> InstKey:
    return (inst.file, inst.doc, inst.item)


class Analysis:
    def __init__(self, rules: KindRuleSet, translate: Translate, translated_file: Callable[[Path], Translation | None],
                 mentions_gpu: Callable[[PatchDoc], bool]) -> None:
        self.rules, self.translate, self.translated_file, self.mentions_gpu = (
            rules, translate, translated_file, mentions_gpu)
        self.out = Decisions()
        self._t_memo: dict[tuple[InstKey, Path], Translation | None] = {}
        self._reached: dict[PatchKey, set[InstKey]] = {}
        self._carried: dict[PatchKey, set[InstKey]] = {}
        self._file_of: dict[InstKey, Path] = {}

    def run(self, instances: Iterable[Instance]) -> Decisions:
        todo: dict[tuple[InstKey, tuple[Path, ...]], Instance] = {}
        for inst in instances:  # the same object is in every build above it; its levels differ by build
            for level in inst.levels:
                for a in level.applied:
                    self.out.patch_docs[a.patch.key] = a.patch
                    self._reached.setdefault(a.patch.key, set()).add(inst_key(inst))
            self._file_of[inst_key(inst)] = inst.file
            if inst.levels or inst.errors:
                todo[(inst_key(inst), tuple(lv.k.path for lv in inst.levels))] = inst
        bases = {k: self._base(i) for k, i in todo.items()}
        for k, inst in todo.items():  # first every deletion, since one patch may reach several objects
            if bases[k] is not None:
                for level in inst.levels:
                    self._plan_drops(inst, level)
        for k, inst in todo.items():
            self._instance(inst, bases[k])
        self.cascade()
        return self.out

    def _base(self, inst: Instance) -> tuple[dict[str, Any], dict[RefKey, dict[str, Any]]] | None:
        """The object as the migration rewrites it in its file, and its claim objects; None: not rewritten."""
        base = self.translated_file(inst.file)
        if base is None or base.refused is not None:
            return None
        migrated = _find(base.objects, inst.original)
        if migrated is None or migrated == inst.original:
            return None
        return migrated, _claim_objects(base.objects, migrated)

    def _plan_drops(self, inst: Instance, level: Level) -> None:
        t = self._t(level, inst)
        target = _find(t.objects, level.result) if t is not None and t.refused is None else None
        if target is None:
            return
        removed = _removed(level.result, target)
        for a in level.applied:
            self.out.deletions.setdefault(a.patch.key, set()).update(self._drops(a, removed))

    # --- one object through its levels -----------------------------------------------------------------

    def _instance(self, inst: Instance, base: tuple[dict[str, Any], dict[RefKey, dict[str, Any]]] | None) -> None:
        if base is None:
            for level in inst.levels:
                if any(self.mentions_gpu(a.patch) for a in level.applied):
                    self._unmigrated_base(inst, level)
            return
        after, claims = base
        if inst.errors:
            pd, why = inst.errors[0]
            where = pd.entry.where(pd.k.display)
            self.out.refuse(inst.file, f"{inst.describe()}: {where}: {why}, which the migration does not model", where)
            self.out.stays[pd.entry_key] = (True, f"it {why}, which the migration does not model; {inst.describe()} "
                                            f"({inst.file.name}) is not migrated, so that this build stays as it is")
            return
        for level in inst.levels:
            step = self._carry(inst, level, after, claims)
            if step is None:
                return
            after, claims = step

    def _unmigrated_base(self, inst: Instance, level: Level) -> None:
        """A GPU-setting patch of an object the migration leaves alone: the patch stays, and says why. When the
        patched object would be migrated (the patch gives it its GPUs), that is a refusal by name."""
        t = self._t(level, inst)
        target = _find(t.objects, level.result) if t is not None and t.refused is None else None

        if target is None or target == level.result or might_need_migration(json.dumps(inst.original).encode()):
            refused, why = False, f"its target {inst.describe()} ({inst.file.name}) is not migrated"
        else:
            refused, why = True, (
                f"it gives {inst.describe()} ({inst.file.name}) GPUs its base does not request: carrying that over "
                "would need the patch to add the claims and the build a claim template, so the build stays on the "
                "device plugin; move the GPU request into the base, or migrate the built output")
        for a in level.applied:
            self.out.stays.setdefault(a.patch.entry_key, (refused, why))

    def _carry(self, inst: Instance, level: Level, after: dict[str, Any], claims: dict[RefKey, dict[str, Any]]
               ) -> tuple[dict[str, Any], dict[RefKey, dict[str, Any]]] | None:
        t = self._t(level, inst)
        if t is None or t.refused is not None:
            self._refuse_level(inst, level, f"the patched {inst.kind} is not migrated ({t.refused if t else '?'})")
            return None
        target = _find(t.objects, level.result)
        if target is None or target == level.result:
            self._refuse_level(inst, level, f"the patched {inst.kind} stays on the device plugin")
            return None
        new_claims = _claim_objects(t.objects, target)
        current = after
        for a in level.applied:
            try:
                edited = _delete(a.patch.data, self.out.deletions.get(a.patch.key, set()), a.patch.json6902)
                current = self._apply(a.patch, edited, current)
            except PatchError as exc:
                self._refuse_level(inst, level, f"without its GPU keys the patch does not apply: {exc}")
                return None
        if _normal(current) != _normal(target):
            self._refuse_level(inst, level, "the migrated base with this patch (less its GPU keys) would not build "
                               f"the migration of the patched object: {difference(_normal(target), _normal(current))}")
            return None
        if set(new_claims) != set(claims):
            self._refuse_level(inst, level, "it changes which claims the pods reference")
            return None
        patches: list[ClaimPatch] = []
        for ref, obj in new_claims.items():
            ops = _claim_ops(claims[ref], obj)
            if ops is None:
                self._refuse_level(inst, level, f"it changes the claim object of {ref[1]} beyond its spec")
                return None
            if ops and obj.get("kind") == "ResourceClaim":
                self._refuse_level(inst, level, "it changes a ResourceClaim that pods share")
                return None
            if ops:
                patches.append(ClaimPatch(level.k, inst, ref, str(obj.get("kind")), ops,
                                          [a.patch for a in level.applied]))
        known = {(c.k.path, inst_key(c.inst), c.ref) for c in self.out.claim_patches}
        self.out.claim_patches.extend(c for c in patches if (c.k.path, inst_key(inst), c.ref) not in known)
        for a in level.applied:
            self._carried.setdefault(a.patch.key, set()).add(inst_key(inst))
            self.out.carried.setdefault(a.patch.key, []).append(inst)
        return target, new_claims

    def _refuse_level(self, inst: Instance, level: Level, why: str) -> None:
        where = ", ".join(sorted({a.patch.entry.where(a.patch.k.display) for a in level.applied}))
        self.out.refuse(inst.file, f"{inst.describe()}: {where}: {why}", where)
        for a in level.applied:
            self.out.stays[a.patch.entry_key] = (True, f"{why}; {inst.describe()} ({inst.file.name}) is not "
                                                 "migrated, so that this build stays as it is")

    def _t(self, level: Level, inst: Instance) -> Translation | None:
        """The compiler on the object after the level's patches (named as in its base file, so names agree)."""
        key = (inst_key(inst), level.k.path)
        if key not in self._t_memo:
            self._t_memo[key] = self._translate(level.result, inst)
        return self._t_memo[key]

    def _translate(self, obj: dict[str, Any], inst: Instance) -> Translation:
        pinned = copy.deepcopy(obj)
        meta = pinned.setdefault("metadata", {})
        orig = inst.original.get("metadata") or {}
        for k in ("name", "namespace"):
            if k in orig:
                meta[k] = orig[k]
            else:
                meta.pop(k, None)
        t = self.translate(str(inst.file), _dump(pinned))
        if t.refused is not None:
            return t
        out = _find(t.objects, pinned)
        if out is not None:
            out_meta = out.setdefault("metadata", {})
            for k in ("name", "namespace"):
                out_meta.pop(k, None)
                if k in (obj.get("metadata") or {}):
                    out_meta[k] = obj["metadata"][k]
        return t

    def _drops(self, a: Applied, removed: Callable[[ObjPath], bool]) -> set[DocPath]:
        """Paths in the patch document of what T removes from the patched object."""
        if not a.patch.json6902:
            keys = merge_keys_for(a.before, self.rules)
            return {p for p, o in leaves(a.patch.data, a.before, keys) if removed(o)}
        out: set[DocPath] = set()
        for i, op in enumerate(a.patch.data):
            if not isinstance(op, dict) or not isinstance(op.get("path"), str):
                continue
            try:
                parts = tuple(_ptr_parts(op["path"]))
            except PatchError:
                continue
            if removed(parts):
                out.add((i,))
            elif isinstance(op.get("value"), dict):
                out.update((i, "value", *p) for p, o in leaves(op["value"], None, _none) if removed((*parts, *o)))
        return out

    def _apply(self, patch: PatchDoc, data: Any, obj: dict[str, Any]) -> dict[str, Any]:
        out = json_patch(obj, data) if patch.json6902 else strategic_merge(obj, data, merge_keys_for(obj, self.rules))
        if not isinstance(out, dict):
            raise PatchError("the patch does not leave an object")
        return out

    # --- a patch is edited for every object it reaches, or for none -----------------------------------------

    def cascade(self) -> None:
        """Refuse every file a refused file shares an edited patch with; drop the edits of refused files."""
        changed = True
        while changed:
            changed = False
            refused = set(self.out.refused)
            for key, reached in self._reached.items():
                carried = self._carried.get(key, set())
                if not self.out.deletions.get(key) and not any(c.sources and key in {s.key for s in c.sources}
                                                               for c in self.out.claim_patches):
                    continue
                left = [r for r in reached if r not in carried or self._file_of[r] in refused]
                if not left:
                    continue
                pd = self.out.patch_docs[key]
                where = pd.entry.where(pd.k.display)
                other = self._file_of[left[0]].name
                for r in carried:
                    f = self._file_of[r]
                    if f not in refused:
                        self.out.refuse(f, f"{where} also patches an object of {other} that is not migrated "
                                        "with it", where)
                        self.out.stays[pd.entry_key] = (True, f"it also reaches an object of {other} that is not "
                                                        "migrated, so none of its objects is")
                        changed = True
                self._carried[key] = set()
        refused = set(self.out.refused)
        for key in list(self.out.carried):
            if not self._carried.get(key) or any(i.file in refused for i in self.out.carried[key]):
                self.out.carried.pop(key)
        self.out.deletions = {k: v for k, v in self.out.deletions.items() if k in self.out.carried and v}
        self.out.claim_patches = [c for c in self.out.claim_patches if c.inst.file not in refused]


def _none(_path: DocPath) -> str | None:
    return None


def _ptr_parts(path: str) -> list[Any]:
    return [int(p) if p.isdigit() else p for p in pointer(path)]


def _find(objects: list[dict[str, Any]], like: dict[str, Any]) -> dict[str, Any] | None:
    """The object of `objects` with the identity (apiVersion, kind, name, namespace) of `like`."""
    meta = like.get("metadata") or {}
    for o in objects:
        m = o.get("metadata") or {}
        if (o.get("kind") == like.get("kind") and o.get("apiVersion") == like.get("apiVersion")
                and m.get("name") == meta.get("name") and m.get("namespace") == meta.get("namespace")):
            return o
    return None


def claim_refs(obj: Any, path: DocPath = ()) -> dict[RefKey, tuple[str, str]]:
    """(pod spec path, resourceClaims entry) → (claim kind, name) of every claim reference in `obj`."""
    out: dict[RefKey, tuple[str, str]] = {}
    if isinstance(obj, dict):
        entries = obj.get("resourceClaims")
        if isinstance(entries, list):
            for e in entries:
                if isinstance(e, dict) and isinstance(e.get("name"), str):
                    for fld, kind in CLAIM_KINDS.items():
                        if isinstance(e.get(fld), str):
                            out[(path, e["name"])] = (kind, e[fld])
        for k, v in obj.items():
            if isinstance(v, (dict, list)):
                out.update(claim_refs(v, (*path, k)))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out.update(claim_refs(v, (*path, i)))
    return out


def _claim_objects(objects: list[dict[str, Any]], workload: dict[str, Any]) -> dict[RefKey, dict[str, Any]]:
    by_name = {(o.get("kind"), (o.get("metadata") or {}).get("name")): o for o in objects}
    out: dict[RefKey, dict[str, Any]] = {}
    for ref, (kind, name) in claim_refs(workload).items():
        obj = by_name.get((kind, name))
        if obj is not None:
            out[ref] = obj
    return out


def _normal(obj: Any) -> Any:
    """`obj` with the names of claim objects replaced by the reference that names them."""
    if isinstance(obj, dict):
        out = {k: _normal(v) for k, v in obj.items()}
        entries = out.get("resourceClaims")
        if isinstance(entries, list):
            out["resourceClaims"] = [
                {k: (f"<{e.get('name')}>" if k in CLAIM_KINDS else v) for k, v in e.items()} if isinstance(e, dict)
                else e for e in entries]
        return out
    if isinstance(obj, list):
        return [_normal(v) for v in obj]
    return obj


def difference(want: Any, got: Any) -> str:
    """Where two objects first differ, in words."""
    path, a, b = _first_difference(want, got, ())
    return f"at {_readable(want, path)} the migration has {_short(a)}, the build would have {_short(b)}"


_MISSING = object()


def _first_difference(a: Any, b: Any, path: DocPath) -> tuple[DocPath, Any, Any]:
    if isinstance(a, dict) and isinstance(b, dict):
        for k in [*a, *(k for k in b if k not in a)]:
            if a.get(k, _MISSING) != b.get(k, _MISSING):
                return _first_difference(a.get(k, _MISSING), b.get(k, _MISSING), (*path, k))
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return _first_difference(x, y, (*path, i))
    return path, a, b


def _readable(obj: Any, path: DocPath) -> str:
    out: list[str] = []
    for seg in path:
        if isinstance(seg, int) and isinstance(obj, list):
            item = obj[seg] if seg < len(obj) else None
            out[-1] += f"[{item['name']}]" if isinstance(item, dict) and "name" in item else f"[{seg}]"
            obj = item
        else:
            out.append(str(seg))
            obj = obj.get(seg) if isinstance(obj, dict) else None
    return ".".join(out) or "the top"


def _short(value: Any) -> str:
    if value is _MISSING:
        return "nothing"
    text = json.dumps(value, sort_keys=False)
    return text if len(text) <= 120 else text[:117] + "..."


_DUMPER: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def _dump(obj: Any) -> str:
    """YAML for the compiler (block style, libyaml's emitter: a tenth of the pure-Python one's time)."""
    return yaml.dump(obj, Dumper=_DUMPER, sort_keys=False, default_flow_style=False)


def _removed(before: dict[str, Any], migrated: dict[str, Any]) -> Callable[[ObjPath], bool]:
    def removed(path: ObjPath) -> bool:
        return lookup(before, path)[0] and not lookup(migrated, path)[0]

    return removed


def _delete(data: Any, paths: set[DocPath], json6902: bool) -> Any:
    """`data` without `paths`, and without the maps, list elements and lists that leaves empty."""
    # lazy: start-up (run.integrations.kustomize_edit: ~2 ms, only _delete() needs it)
    from dra_migrate.run.integrations.kustomize_edit import deletion_ops

    return apply_ops(data, deletion_ops(data, paths, json6902)) if paths else data


def _claim_ops(old: dict[str, Any], new: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The JSON 6902 operations that turn claim object `old` into `new` (their spec only), each request they
    touch guarded by a test of its name; None when more than the spec differs."""
    strip = {k: v for k, v in old.items() if k not in ("metadata", "spec")}
    if strip != {k: v for k, v in new.items() if k not in ("metadata", "spec")}:
        return None
    ops = diff_ops(old.get("spec"), new.get("spec"), ("spec",))
    out: list[dict[str, Any]] = []
    tested: set[str] = set()
    for op in ops:
        parts = pointer(op["path"])
        if parts[:4] == ["spec", "spec", "devices", "requests"] and len(parts) > 5 and parts[4].isdigit():
            request = to_pointer(("spec", "spec", "devices", "requests", int(parts[4]), "name"))
            found, name = lookup(old, ("spec", "spec", "devices", "requests", int(parts[4]), "name"))
            if found and request not in tested:
                tested.add(request)
                out.append({"op": "test", "path": request, "value": name})
        out.append(op)
    return out
