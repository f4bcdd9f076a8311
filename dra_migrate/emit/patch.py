"""Turn semantic operations into text splices on the original document text.

Edits are grouped per target collection, so each collection's splices are computed together and never
overlap; untouched text is never regenerated.
"""

from __future__ import annotations

from typing import Any

from dra_migrate.emit import render
from dra_migrate.emit.edits import TextEdit
from dra_migrate.emit.style import Style
from dra_migrate.ir import DocPath
from dra_migrate.plan import Append, DeleteItem, DeleteKey, Op, ReplaceValue, SetKey
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


class Patcher:
    def __init__(self, text: str, root: Node | None, style: Style) -> None:
        self.text = text
        self.root = root
        self.style = style
        self.nl = style.newline
        self.edits: list[TextEdit] = []
        self._order = 0

    def _edit(self, start: int, end: int, text: str, rank: int = 0) -> None:
        self._order += 1
        self.edits.append(TextEdit(start, end, text, self._order, rank))

    def _insert_lines(self, pos: int, lines: list[str], indent: int) -> None:
        body = self.nl.join(lines)
        if pos >= len(self.text) and not self.text.endswith("\n"):
            if last_line_is_open_block_scalar(self.root, self.text):
                raise UnsupportedLayout("the file ends inside a block scalar without a final newline; adding "
                                        "text after it would change the scalar's value", pos)
            self._edit(pos, pos, self.nl + body, -indent)
        else:
            self._edit(pos, pos, body + self.nl, -indent)

    # -- grouping ----------------------------------------------------------------------------
    def apply(self, ops: list[Op]) -> list[TextEdit]:
        groups: dict[int, tuple[Node, list[Op]]] = {}
        order: list[int] = []
        for op in ops:
            target_path = op.path if isinstance(op, Append) else op.path[:-1]
            target = node_at(self.root, target_path)
            key = id(target)
            if key not in groups:
                groups[key] = (target, [])
                order.append(key)
            groups[key][1].append(op)
        for key in order:
            target, group_ops = groups[key]
            if isinstance(target, Mapping):
                (self._flow_mapping if target.flow else self._block_mapping)(target, group_ops)
            elif isinstance(target, Sequence):
                (self._flow_sequence if target.flow else self._block_sequence)(target, group_ops)
            else:
                raise UnsupportedLayout("expected a mapping or a sequence", target.start)
        return self.edits

    # -- block mappings ----------------------------------------------------------------------
    def _block_mapping(self, node: Mapping, ops: list[Op]) -> None:
        index = {k.value: i for i, (k, _v) in enumerate(node.items) if isinstance(k, Scalar)}
        text = self.text
        key_col = node.col
        deleted = {op.path[-1] for op in ops if isinstance(op, DeleteKey)}
        if node.items and deleted >= set(index) and len(index) == len(node.items) and len(ops) == len(deleted):
            # every key goes: deleting the lines would leave `parent:` with nothing under it, which reads back
            # as null, not as an empty map; an empty flow map on the first key's line keeps the meaning
            k0 = node.items[0][0]
            if text[line_start(text, k0.start) : k0.start].strip():
                raise UnsupportedLayout(self._shared_line(text, k0), k0.start)
            end = line_end_after(text, content_end(node.items[-1][1], text))
            self._edit(line_start(text, k0.start), end, " " * key_col + "{}" + self.nl)
            return
        for op in ops:
            if isinstance(op, SetKey):
                continue
            name = op.path[-1]
            if name not in index:
                raise UnsupportedLayout(f"key {name!r} not found", node.start)
            k, v = node.items[index[str(name)]]
            start = line_start(text, k.start)
            if text[start : k.start].strip():
                raise UnsupportedLayout(self._shared_line(text, k), k.start)
            end = line_end_after(text, content_end(v, text))
            if isinstance(op, DeleteKey):
                self._edit(start, end, "")
            elif isinstance(op, ReplaceValue):
                lines = render.block_entry(str(name), op.value, key_col, self.style)
                key_text = text[k.start : k.end]
                first = lines[0]
                lines[0] = " " * key_col + key_text + first[key_col + len(render.key(str(name))) :]
                self._edit(start, end, self.nl.join(lines) + self.nl)
        adds = [op for op in ops if isinstance(op, SetKey)]
        if adds:
            _lk, lv = node.items[-1]
            pos = line_end_after(text, content_end(lv, text))
            add_lines: list[str] = []
            for op in adds:
                add_lines.extend(render.block_entry(str(op.path[-1]), op.value, key_col, self.style))
            self._insert_lines(pos, add_lines, key_col)

    @staticmethod
    def _shared_line(text: str, k: Node) -> str:
        before = text[line_start(text, k.start) : k.start].strip()
        name = k.value if isinstance(k, Scalar) else "?"
        if before.startswith(("?", ":")):
            return f"key {name!r} is written with an explicit '?' key indicator"
        return f"key {name!r} shares its line with a sequence dash"

    # -- block sequences ---------------------------------------------------------------------
    def _block_sequence(self, node: Sequence, ops: list[Op]) -> None:
        text = self.text
        dash_col = node.col
        for op in ops:
            if isinstance(op, DeleteItem):
                idx = op.path[-1]
                assert isinstance(idx, int)
                item = node.items[idx]
                start = line_start(text, item.start)
                if text[start : item.start].strip() not in ("-", ""):
                    raise UnsupportedLayout("sequence item shares its line with other content", item.start)
                if len(node.items) == 1 or {i for i in range(len(node.items))} <= _deleted_indexes(ops):
                    raise UnsupportedLayout("deleting every item of a block sequence", node.start)
                self._edit(start, line_end_after(text, content_end(item, text)), "")
            elif isinstance(op, ReplaceValue):
                idx = op.path[-1]
                assert isinstance(idx, int)
                item = node.items[idx]
                lines = render.block_item(op.value, dash_col, self.style)
                lines[0] = lines[0][dash_col + self.style.item_offset :]
                end = line_end_after(text, content_end(item, text))
                self._edit(item.start, end, self.nl.join(lines) + self.nl)
            elif isinstance(op, Append):
                pos = line_end_after(text, content_end(node.items[-1], text))
                lines = []
                for item in op.items:
                    lines.extend(render.block_item(item, dash_col, self.style))
                self._insert_lines(pos, lines, dash_col)
            else:
                raise UnsupportedLayout("unsupported operation on a sequence", node.start)

    # -- flow collections --------------------------------------------------------------------
    def _flow_entries(self, node: Mapping | Sequence) -> list[tuple[int, int]]:
        if isinstance(node, Mapping):
            return [(k.start, v.end if v.end > v.start else k.end) for k, v in node.items]
        return [(i.start, i.end) for i in node.items]

    def _separator(self, node: Mapping | Sequence, spans: list[tuple[int, int]]) -> str:
        if len(spans) >= 2:
            return self.text[spans[-2][1] : spans[-1][0]]
        inner_start = node.start + 1
        opening = self.text[inner_start : spans[0][0]] if spans else ""
        return "," + opening if "\n" in opening else ", "

    def _flow_value(self, value: Any, at: int) -> str:
        pretty = self.style.json and "\n" in self.text[line_start(self.text, at) - 1 : at + 1]
        return render.flow(value, self.style, column(self.text, at), pretty=pretty)

    def _flow_mapping(self, node: Mapping, ops: list[Op]) -> None:
        spans = self._flow_entries(node)
        names = [k.value if isinstance(k, Scalar) else None for k, _v in node.items]
        deleted = {names.index(op.path[-1]) for op in ops if isinstance(op, DeleteKey) and op.path[-1] in names}
        missing = [op for op in ops if not isinstance(op, SetKey) and op.path[-1] not in names]
        if missing:
            raise UnsupportedLayout(f"key {missing[0].path[-1]!r} not found", node.start)
        for op in ops:
            if isinstance(op, ReplaceValue):
                _k, v = node.items[names.index(str(op.path[-1]))]
                self._edit(v.start, v.end, self._flow_value(op.value, v.start))
        adds = [op for op in ops if isinstance(op, SetKey)]
        entry_col = spans[0][0] if spans else node.start + 1
        add_texts = [
            f"{render.key(str(op.path[-1]), json_style=self.style.json)}: {self._flow_value(op.value, entry_col)}"
            for op in adds
        ]
        self._flow_splice(node, spans, deleted, add_texts)

    def _flow_sequence(self, node: Sequence, ops: list[Op]) -> None:
        spans = self._flow_entries(node)
        add_texts: list[str] = []
        deleted = _deleted_indexes(ops)
        for op in ops:
            if isinstance(op, DeleteItem):
                continue
            if isinstance(op, ReplaceValue):
                idx = op.path[-1]
                assert isinstance(idx, int)
                item = node.items[idx]
                self._edit(item.start, item.end, self._flow_value(op.value, item.start))
            elif isinstance(op, Append):
                at = spans[0][0] if spans else node.start + 1
                add_texts.extend(self._flow_value(v, at) for v in op.items)
            else:
                raise UnsupportedLayout("unsupported operation on a sequence", node.start)
        self._flow_splice(node, spans, deleted, add_texts)

    def _flow_splice(
        self, node: Mapping | Sequence, spans: list[tuple[int, int]], deleted: set[int], adds: list[str]
    ) -> None:
        if not deleted and not adds:
            return
        sep = self._separator(node, spans) if spans else ", "
        kept = [i for i in range(len(spans)) if i not in deleted]
        if not kept:
            if spans:
                self._edit(spans[0][0], spans[-1][1], sep.join(adds))
            else:
                self._edit(node.start + 1, node.end - 1, ", ".join(adds))
            return
        i = 0
        while i < len(spans):
            if i not in deleted:
                i += 1
                continue
            j = i
            while j + 1 < len(spans) and j + 1 in deleted:
                j += 1
            if j + 1 < len(spans):
                self._edit(spans[i][0], spans[j + 1][0], "")
            else:
                prev = max(k for k in kept if k < i)
                self._edit(spans[prev][1], spans[j][1], "")
            i = j + 1
        if adds:
            self._edit(spans[-1][1], spans[-1][1], "".join(sep + a for a in adds))


def _deleted_indexes(ops: list[Op]) -> set[int]:
    return {int(op.path[-1]) for op in ops if isinstance(op, DeleteItem)}
