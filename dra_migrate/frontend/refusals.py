"""GPU workloads that are not plain Kubernetes input: refused (error, the workload left byte-identical).

- A YAML tag outside the core schema (`!Ref`, `!!python/object/apply:...`, `!!binary`, `!!timestamp`) on any
  node of the object: the text is meant for another processor (CloudFormation-style tags, a custom loader,
  a template engine), whose reading of it we do not know (DRA220).
- `metadata.name`, `metadata.generateName`, `metadata.namespace` or a container name that is not a string:
  the API server rejects the object, and a name made from it (the claim template's) would be nonsense (DRA221).
"""

from __future__ import annotations

from typing import Any

from dra_migrate.diagnostics.model import Location, make
from dra_migrate.ir import DocPath, Workload
from dra_migrate.source.nodes import Document, find, key_line

_YAML_TAG = "tag:yaml.org,2002:"
_META_NAMES = ("name", "generateName", "namespace")


def check(file: str, doc: Document, obj: dict[str, Any], item_path: DocPath, wl: Workload) -> None:
    """Block `wl` (a workload whose pod templates request GPUs) when its text is not plain Kubernetes input."""
    if not wl.needs_gpus and not wl.blocked:  # (blocked: a count the frontend could not read, a tagged one)
        return
    meta = obj.get("metadata")
    named = not isinstance(meta, dict) or all(isinstance(meta.get(k), str | None) for k in ("name", "generateName"))
    ref = wl.ref if named else ""  # a name that is not a string names nothing: the line says where
    tag = _foreign_tag(doc, item_path)
    if tag is not None:
        name, line, col = tag
        wl.diagnostics.append(make(
            "DRA220",
            f"YAML tag {name} is outside the core schema: the document is written for another YAML processor "
            "(or is a template), whose reading of it is unknown; left as is, render or resolve the tags first",
            Location(file, line, col), ref))
        wl.blocked = True
    for path, what in _non_string_names(obj, item_path, wl):
        line, col = key_line(doc.root, path)
        wl.diagnostics.append(make(
            "DRA221",
            f"{what} is not a string: the API server rejects the object, and no name can be derived from it; "
            "left as is",
            Location(file, line, col), ref))
        wl.blocked = True


def _foreign_tag(doc: Document, item_path: DocPath) -> tuple[str, int, int] | None:
    """(tag, line, column) of the first foreign tag in the object. Only an item of a `kind: List` is told apart
    from the rest of its document; a document root, an object embedded in another one (the outer object is
    applied as a whole) and a document with aliases (which could carry a tagged node in) count whole."""
    if not doc.foreign_tags:
        return None
    start, end = 0, 1 << 62
    if len(item_path) == 2 and item_path[0] == "items" and not doc.aliases:
        node, _ = find(doc.root, item_path)
        if node is not None:
            start, end = node.start, node.end
    for tag, offset, line, col in doc.foreign_tags:
        if start <= offset < end:
            short = "!!" + tag[len(_YAML_TAG):] if tag.startswith(_YAML_TAG) else tag
            return short, line + 1, col + 1
    return None


def _non_string_names(obj: dict[str, Any], item_path: DocPath, wl: Workload) -> list[tuple[DocPath, str]]:
    out: list[tuple[DocPath, str]] = []
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        for key in _META_NAMES:
            value = meta.get(key)
            if value is not None and not isinstance(value, str):
                out.append(((*item_path, "metadata", key), f"metadata.{key} ({_show(value)})"))
    for pt in wl.pod_templates:
        spec: Any = obj
        for seg in pt.path[len(item_path):]:
            spec = spec[seg]
        for list_key in ("initContainers", "containers"):
            items = spec.get(list_key) if isinstance(spec, dict) else None
            for i, c in enumerate(items if isinstance(items, list) else []):
                name = c.get("name") if isinstance(c, dict) else None
                if name is not None and not isinstance(name, str):
                    out.append(((*pt.path, list_key, i, "name"), f"{list_key}[{i}].name ({_show(name)})"))
    return out


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
