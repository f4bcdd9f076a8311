"""Where things are in the original text: nodes by path, where a node's content ends, lines and columns."""

from __future__ import annotations

from dra_migrate.ir import DocPath
from dra_migrate.source.nodes import Alias, Mapping, Node, Scalar, Sequence


class UnsupportedLayout(Exception):
    def __init__(self, message: str, offset: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset


def node_at(root: Node | None, path: DocPath) -> Node:
    node = root
    for seg in path:
        if node is None:
            raise UnsupportedLayout(f"path {_fmt(path)} not found")
        if isinstance(node, Alias):
            raise UnsupportedLayout(f"path {_fmt(path)} goes through the alias *{node.name}", node.start)
        node = _child(node, seg, path)
    if node is None:
        raise UnsupportedLayout(f"path {_fmt(path)} not found")
    if isinstance(node, Alias):
        raise UnsupportedLayout(f"path {_fmt(path)} is the alias *{node.name}", node.start)
    return node


def _child(node: Node, seg: str | int, path: DocPath) -> Node | None:
    if isinstance(node, Mapping) and isinstance(seg, str):
        for k, v in node.items:
            if isinstance(k, Scalar) and k.value == seg:
                return v
        return None
    if isinstance(node, Sequence) and isinstance(seg, int):
        return node.items[seg] if seg < len(node.items) else None
    return None


def _fmt(path: DocPath) -> str:
    return ".".join(f"[{p}]" if isinstance(p, int) else str(p) for p in path)


def content_end(node: Node, text: str) -> int:
    """Offset just past the last character that belongs to the node (no trailing blank lines)."""
    if isinstance(node, Mapping) and not node.flow and node.items:
        k, v = node.items[-1]
        return max(content_end(k, text), content_end(v, text))
    if isinstance(node, Sequence) and not node.flow and node.items:
        return content_end(node.items[-1], text)
    if isinstance(node, Scalar) and node.style in ("|", ">"):
        return node.start + len(text[node.start : node.end].rstrip())
    return node.end


def last_line_is_open_block_scalar(root: Node | None, text: str) -> bool:
    """Whether the file ends, without a final newline, inside a `|`/`>` block scalar that keeps its last line
    break (clip or keep chomping): anything appended after it would add that break to the scalar's value."""
    if text.endswith("\n"):
        return False
    node = root
    while isinstance(node, (Mapping, Sequence)) and not node.flow and node.items:
        last = node.items[-1]
        node = last[1] if isinstance(last, tuple) else last
    if not (isinstance(node, Scalar) and node.style in ("|", ">")) or content_end(node, text) < len(text.rstrip()):
        return False
    header = text[node.start : text.find("\n", node.start) if "\n" in text[node.start :] else len(text)]
    return "-" not in header.split("#", 1)[0]


def line_start(text: str, pos: int) -> int:
    return text.rfind("\n", 0, pos) + 1


def line_end_after(text: str, pos: int) -> int:
    i = text.find("\n", max(pos - 1, 0))
    return len(text) if i < 0 else i + 1


def column(text: str, pos: int) -> int:
    return pos - line_start(text, pos)
