"""kustomize's two patch languages on plain data, as `kubectl kustomize` (kustomize v5) applies them.

Strategic merge is kyaml's merge2 (api/filters/patchstrategicmerge): maps merge key by key, a null value
deletes the key, and a list merges element by element only where kustomize's built-in OpenAPI (Kubernetes
v1.21.2) gives it a patch merge key: the pod-spec lists of the kinds that OpenAPI knows (rules/kustomize.yaml).
Every other list, and every list of a kind it does not know (every CRD, and resource.k8s.io), is replaced
whole. Merged lists keep the patch's elements first, in its order, then the others (MergeOptionsListPrepend).
JSON 6902 is RFC 6902 over JSON pointers, as evanphx/json-patch v4 applies it (api/filters/patchjson6902).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dra_migrate.ir import DocPath

MergeKey = Callable[[DocPath], str | None]  # the merge key of the list at a path, None: replaced whole


class PatchError(Exception):
    """A patch the model does not apply (kustomize would fail, or do something the model does not know)."""


def no_merge_keys(_path: DocPath) -> str | None:
    return None


def check_strategic(patch: Any, path: DocPath = ()) -> None:
    """Refuse the strategic-merge directives ($patch, $setElementOrder, $retainKeys, ...): not modelled."""
    if isinstance(patch, dict):
        for k, v in patch.items():
            if isinstance(k, str) and k.startswith("$"):
                raise PatchError(f"uses the strategic-merge directive {k} at {_dotted(path)}")
            check_strategic(v, (*path, str(k)))
    elif isinstance(patch, list):
        for i, v in enumerate(patch):
            check_strategic(v, (*path, i))


def strategic_merge(dest: Any, patch: Any, merge_key: MergeKey, path: DocPath = ()) -> Any:
    """`patch` merged into a copy of `dest`."""
    if isinstance(patch, dict) and isinstance(dest, dict):
        out = dict(dest)
        for k, v in patch.items():
            if v is None:
                out.pop(k, None)
            elif k in out:
                out[k] = strategic_merge(out[k], v, merge_key, (*path, k))
            else:
                out[k] = _without_nulls(copy.deepcopy(v))
        return out
    if isinstance(patch, list) and isinstance(dest, list):
        key = merge_key(path)
        if key is None:
            return copy.deepcopy(patch)
        return _merge_list(dest, patch, key, merge_key, path)
    return _without_nulls(copy.deepcopy(patch))


def _merge_list(dest: list[Any], patch: list[Any], key: str, merge_key: MergeKey, path: DocPath) -> list[Any]:
    if not all(isinstance(e, dict) and key in e for e in [*dest, *patch]):
        raise PatchError(f"an element of {_dotted(path)} has no {key!r} (its merge key)")
    by_key = {e[key]: (i, e) for i, e in enumerate(dest)}
    out: list[Any] = []
    for p in patch:
        hit = by_key.get(p[key])
        out.append(strategic_merge(hit[1], p, merge_key, (*path, hit[0])) if hit else _without_nulls(copy.deepcopy(p)))
    patched = {p[key] for p in patch}
    out.extend(e for e in dest if e[key] not in patched)
    return out


def _without_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    return value


@dataclass(frozen=True, slots=True)
class Keyed:
    """A list element found by its merge key, wherever it sits in the list."""

    key: str
    value: Any


ObjPath = tuple[Any, ...]  # str keys, int indexes, Keyed elements


def leaves(patch: Any, dest: Any, merge_key: MergeKey, path: DocPath = (), obj_path: ObjPath = (),
           at: DocPath = ()) -> list[tuple[DocPath, ObjPath]]:
    """(path in the patch, path in the object) of every leaf the strategic-merge patch sets: each scalar, and
    each list replaced whole; maps and merged lists are followed into (whether the object has them or not).
    `at`: the concrete path of `dest` in the object (for the merge keys)."""
    if isinstance(patch, dict):
        out: list[tuple[DocPath, ObjPath]] = []
        for k, v in patch.items():
            sub = dest.get(k) if isinstance(dest, dict) else None
            if isinstance(v, (dict, list)):
                out.extend(leaves(v, sub, merge_key, (*path, k), (*obj_path, k), (*at, k)))
            else:
                out.append(((*path, k), (*obj_path, k)))
        return out or [(path, obj_path)]
    if isinstance(patch, list):
        key = merge_key(at)
        if key is not None and all(isinstance(e, dict) and key in e for e in patch):
            out = []
            index = {e.get(key): i for i, e in enumerate(dest)} if isinstance(dest, list) else {}
            for i, e in enumerate(patch):
                j = index.get(e[key])
                sub = dest[j] if j is not None and isinstance(dest, list) else None
                elem_at = (*at, j if j is not None else len(index) + i)
                elem = leaves(e, sub, merge_key, (*path, i), (*obj_path, Keyed(key, e[key])), elem_at)
                out.extend((p, o) for p, o in elem if p != (*path, i, key))  # the key names it, sets nothing
            return out or [(path, obj_path)]
    return [(path, obj_path)]


def lookup(obj: Any, path: ObjPath) -> tuple[bool, Any]:
    """(found, value) at an object path."""
    node = obj
    for seg in path:
        if isinstance(seg, Keyed):
            if not isinstance(node, list):
                return False, None
            hit = [e for e in node if isinstance(e, dict) and e.get(seg.key) == seg.value]
            if not hit:
                return False, None
            node = hit[0]
        elif (isinstance(node, dict) and seg in node) or (
                isinstance(node, list) and isinstance(seg, int) and 0 <= seg < len(node)):
            node = node[seg]
        else:
            return False, None
    return True, node


# --- JSON 6902 ---------------------------------------------------------------------------------------


def pointer(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise PatchError(f"JSON pointer {path!r} does not start with /")
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def to_pointer(path: DocPath) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def resolve_pointer(doc: Any, parts: list[str]) -> DocPath | None:
    """The plain path of a JSON pointer in `doc`, or None when it does not exist."""
    out: list[str | int] = []
    node = doc
    for p in parts:
        if isinstance(node, dict) and p in node:
            out.append(p)
            node = node[p]
        elif isinstance(node, list) and p.isdigit() and int(p) < len(node):
            out.append(int(p))
            node = node[int(p)]
        else:
            return None
    return tuple(out)


def json_patch(doc: Any, ops: list[Any]) -> Any:
    """RFC 6902 applied to a copy of `doc`; PatchError where kustomize would fail."""
    doc = copy.deepcopy(doc)
    for op in ops:
        if not isinstance(op, dict) or not isinstance(op.get("op"), str) or not isinstance(op.get("path"), str):
            raise PatchError("a JSON 6902 operation without op and path")
        name, parts = op["op"], pointer(op["path"])
        if name == "test":
            if _get(doc, parts) != op.get("value"):
                raise PatchError(f"test of {op['path']} fails")
        elif name == "remove":
            doc = _remove(doc, parts)
        elif name in ("add", "replace"):
            # evanphx/json-patch v4 (kustomize's): replace of a missing key in a map sets it, as add does
            if name == "replace" and parts and isinstance(_get(doc, parts[:-1]), list):
                _get(doc, parts)
            doc = _add(doc, parts, copy.deepcopy(op.get("value")), replace=name == "replace")
        elif name in ("move", "copy"):
            src = pointer(str(op.get("from", "")))
            value = copy.deepcopy(_get(doc, src))
            if name == "move":
                doc = _remove(doc, src)
            doc = _add(doc, parts, value, replace=False)
        else:
            raise PatchError(f"unknown JSON 6902 operation {name!r}")
    return doc


def _get(doc: Any, parts: list[str]) -> Any:
    node = doc
    for p in parts:
        if isinstance(node, dict) and p in node:
            node = node[p]
        elif isinstance(node, list) and p.isdigit() and int(p) < len(node):
            node = node[int(p)]
        else:
            raise PatchError(f"{to_pointer(tuple(parts))} does not exist")
    return node


def _add(doc: Any, parts: list[str], value: Any, replace: bool) -> Any:
    if not parts:
        return value
    parent = _get(doc, parts[:-1])
    last = parts[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        if last == "-":
            parent.append(value)
        elif last.isdigit() and int(last) <= len(parent):
            if replace:
                parent[int(last)] = value
            else:
                parent.insert(int(last), value)
        else:
            raise PatchError(f"index {last} out of range")
    else:
        raise PatchError(f"{to_pointer(tuple(parts[:-1]))} is not a container")
    return doc


def _remove(doc: Any, parts: list[str]) -> Any:
    if not parts:
        raise PatchError("cannot remove the whole document")
    parent = _get(doc, parts[:-1])
    _get(doc, parts)
    if isinstance(parent, dict):
        del parent[parts[-1]]
    else:
        del parent[int(parts[-1])]
    return doc


def diff_ops(old: Any, new: Any, path: DocPath = ()) -> list[dict[str, Any]]:
    """JSON 6902 operations that turn `old` into `new`: leaf by leaf in maps and in lists of equal length,
    a whole replacement where a list changes length."""
    if isinstance(old, dict) and isinstance(new, dict):
        ops: list[dict[str, Any]] = []
        for k in old:
            if k not in new:
                ops.append({"op": "remove", "path": to_pointer((*path, k))})
        for k, v in new.items():
            if k not in old:
                ops.append({"op": "add", "path": to_pointer((*path, k)), "value": v})
            else:
                ops.extend(diff_ops(old[k], v, (*path, k)))
        return ops
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        return [op for i, (a, b) in enumerate(zip(old, new, strict=True)) for op in diff_ops(a, b, (*path, i))]
    if old == new and type(old) is type(new):
        return []
    return [{"op": "replace", "path": to_pointer(path), "value": new}]


def _dotted(path: DocPath) -> str:
    return ".".join(str(p) for p in path) or "the top"
