"""Positioned YAML nodes built from parser events: no YAML library objects escape this module.

Offsets are character offsets into the decoded file text (BOM excluded), so edits can be spliced into the
original text without re-dumping anything.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union


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


Node = Union[Scalar, Mapping, Sequence, Alias]


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
