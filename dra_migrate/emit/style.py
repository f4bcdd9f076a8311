"""Detect a document's block layout so inserted text looks like its neighbours."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from dra_migrate.source.nodes import Mapping, Node, Scalar, Sequence


@dataclass(frozen=True, slots=True)
class Style:
    indent: int = 2  # columns a nested block mapping is indented under its key
    seq_offset: int = 2  # columns a block sequence's dash is indented under its key (0 = "key:\n- a")
    item_offset: int = 2  # columns from a dash to the content of its item ("-   name: a" = 4)
    newline: str = "\n"
    json: bool = False  # flow collections use JSON syntax (quoted keys)


def detect_style(
    root: Node | None, newline: str, is_json: bool = False, fallback: Style | None = None, text: str = ""
) -> Style:
    indents: Counter[int] = Counter()
    offsets: Counter[int] = Counter()
    items: Counter[int] = Counter()
    stack: list[Node] = [root] if root is not None else []
    while stack:
        node = stack.pop()
        if isinstance(node, Mapping) and not node.flow:
            for k, v in node.items:
                if isinstance(k, Scalar) and v.line > k.line:
                    if isinstance(v, Mapping) and not v.flow:
                        indents[v.col - k.col] += 1
                    elif isinstance(v, Sequence) and not v.flow:
                        offsets[v.col - k.col] += 1
                stack.append(v)
        elif isinstance(node, Sequence) and not node.flow:
            for item in node.items:
                if isinstance(item, Mapping) and not item.flow:
                    dash = _dash_col(text, item)
                    if dash is not None:
                        items[item.col - dash] += 1
                stack.append(item)
    base = fallback or Style()
    indent = indents.most_common(1)[0][0] if indents else base.indent
    if indent <= 0:
        indent = base.indent
    offset = offsets.most_common(1)[0][0] if offsets else (base.seq_offset if fallback else min(indent, 2))
    if offset < 0:
        offset = 0
    item_offset = items.most_common(1)[0][0] if items else (base.item_offset if fallback else 2)
    if item_offset < 2:
        item_offset = 2
    return Style(indent, offset, item_offset, newline, is_json)


def _dash_col(text: str, item: Mapping) -> int | None:
    """Column of the dash that introduces a block sequence item, if the item starts on the dash's line."""
    if not text:
        return None
    start = text.rfind("\n", 0, item.start) + 1
    prefix = text[start : item.start]
    stripped = prefix.rstrip(" ")
    if stripped.endswith("-") and not stripped[:-1].strip():
        return len(stripped) - 1
    return None
