"""Positioned YAML nodes built from parser events: no YAML library objects escape this module.

Offsets are character offsets into the decoded file text (BOM excluded), so edits can be spliced into the
original text without re-dumping anything.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True, eq=False)
class Scalar:
    value: str
    style: str  # "" plain, "'" single, '"' double, "|" literal, ">" folded
    tag: str | None
    start: int
    end: int
    line: int  # 0-based
    col: int  # 0-based
    anchor: str | None = None


@dataclass(slots=True, eq=False)
class Mapping:
    items: list[tuple[Node, Node]]
    flow: bool
    tag: str | None
    start: int
    end: int
    line: int
    col: int
    anchor: str | None = None


@dataclass(slots=True, eq=False)
class Sequence:
    items: list[Node]
    flow: bool
    tag: str | None
    start: int
    end: int
    line: int
    col: int
    anchor: str | None = None


@dataclass(slots=True, eq=False)
class Alias:
    """A `*name` reference; `target` is the anchored node it stands for."""

    target: Node
    name: str
    start: int
    end: int
    line: int
    col: int


Node = Scalar | Mapping | Sequence | Alias


@dataclass(slots=True, eq=False)
class Document:
    root: Node | None
    index: int  # position of the document in its file
    start: int  # offset of the document's first character (its `---` marker if explicit)
    end: int  # offset just past the document (past its `...` marker if explicit)
    content_start: int
    explicit_start: bool
    explicit_end: bool
    aliases: int = 0
    anchors: dict[str, Node] = field(default_factory=dict)
    aliased: set[str] = field(default_factory=set)  # anchor names that some alias refers to
    # tags outside the core schema (see compose.CORE_TAGS): (tag, offset, 0-based line, 0-based column)
    foreign_tags: list[tuple[str, int, int, int]] = field(default_factory=list)


def deref(node: Node) -> Node:
    while isinstance(node, Alias):
        node = node.target
    return node


def map_get(node: Node | None, key: str) -> Node | None:
    """Value node for `key` in a mapping node (aliases resolved), or None."""
    if node is None:
        return None
    node = deref(node)
    if not isinstance(node, Mapping):
        return None
    for k, v in node.items:
        k = deref(k)
        if isinstance(k, Scalar) and k.value == key and k.tag != "tag:yaml.org,2002:merge":
            return v
    return None


def map_key_node(node: Mapping, key: str) -> Scalar | None:
    for k, _v in node.items:
        if isinstance(k, Scalar) and k.value == key:
            return k
    return None


def find(
    root: Node | None, path: tuple[str | int, ...], aliased: set[str] | None = None
) -> tuple[Node | None, bool]:
    """The node at `path` (aliases followed) and whether the way there went through an alias or through an
    anchored node that an alias elsewhere refers to (an edit there would change every alias too)."""
    node = root
    via_alias = False
    for seg in path:
        if aliased and getattr(node, "anchor", None) in aliased:
            via_alias = True
        if node is None:
            return None, via_alias
        if isinstance(node, Alias):
            via_alias = True
            node = deref(node)
        if isinstance(node, Mapping) and isinstance(seg, str):
            node = map_get(node, seg)
            if node is None:
                return None, via_alias
        elif isinstance(node, Sequence) and isinstance(seg, int) and seg < len(node.items):
            node = node.items[seg]
        else:
            return None, via_alias
    if isinstance(node, Alias):
        via_alias = True
        node = deref(node)
    if aliased and getattr(node, "anchor", None) in aliased:
        via_alias = True
    return node, via_alias


def key_line(root: Node | None, path: tuple[str | int, ...]) -> tuple[int, int]:
    """1-based line/column of the key (or item) at path; falls back to the nearest ancestor found."""
    while path:
        parent, _ = find(root, path[:-1])
        parent = deref(parent) if parent is not None else None
        seg = path[-1]
        if isinstance(parent, Mapping) and isinstance(seg, str):
            for k, _v in parent.items:
                if isinstance(k, Scalar) and k.value == seg:
                    return k.line + 1, k.col + 1
        elif isinstance(parent, Sequence) and isinstance(seg, int) and seg < len(parent.items):
            item = parent.items[seg]
            return item.line + 1, item.col + 1
        path = path[:-1]
    return (root.line + 1, root.col + 1) if root is not None else (1, 1)


MERGE_TAG = "tag:yaml.org,2002:merge"


def is_merge_key(key: Node) -> bool:
    return isinstance(key, Scalar) and (key.tag == MERGE_TAG or (key.value == "<<" and key.style == ""))


def merged_keys(node: Node | None) -> set[str]:
    """Keys a mapping receives through `<<` merge keys (whether or not it also has them explicitly)."""
    node = deref(node) if node is not None else None
    out: set[str] = set()
    if not isinstance(node, Mapping):
        return out
    for k, v in node.items:
        if not is_merge_key(k):
            continue
        v = deref(v)
        for m in v.items if isinstance(v, Sequence) else [v]:
            m = deref(m)
            if isinstance(m, Mapping):
                keys = (deref(mk) for mk, _ in m.items)
                out.update(k.value for k in keys if isinstance(k, Scalar))
                out.update(merged_keys(m))
    return out


def merge_conflict(root: Node | None, path: tuple[str | int, ...], extra: dict[int, set[str]]) -> str | None:
    """The first key along `path` that a `<<` merge key provides or shadows (editing it would not do what the
    text says), or a key in `extra[i]` (keys to be added to the mapping at depth i) that a merge provides."""
    node = root
    for i, seg in enumerate((*path, None)):
        node = deref(node) if node is not None else None
        if isinstance(node, Mapping):
            merged = merged_keys(node)
            if isinstance(seg, str) and seg in merged:
                return seg
            hit = merged & extra.get(i, set())
            if hit:
                return sorted(hit)[0]
        if seg is None:
            return None
        if isinstance(node, Mapping) and isinstance(seg, str):
            node = map_get(node, seg)
        elif isinstance(node, Sequence) and isinstance(seg, int) and seg < len(node.items):
            node = node.items[seg]
        else:
            return None
    return None
