"""Turn semantic operations into text splices on the original document text.

Edits are grouped per target collection, so each collection's splices are computed together and never
overlap; untouched text is never regenerated.
"""

from __future__ import annotations

from typing import Any

from dra_migrate.emit import render
from dra_migrate.emit.carry import CommentPlan, kept_in_flow, kept_lines, plan_comments, with_comments
from dra_migrate.emit.comments import comments_in
from dra_migrate.emit.edits import TextEdit
from dra_migrate.emit.locate import (
    UnsupportedLayout,
    column,
    content_end,
    last_line_is_open_block_scalar,
    line_end_after,
    line_start,
    node_at,
)
from dra_migrate.emit.style import Style
from dra_migrate.plan import Append, DeleteItem, DeleteKey, Op, ReplaceValue, SetKey
from dra_migrate.source.nodes import Mapping, Node, Scalar, Sequence

__all__ = [
    "Patcher", "UnsupportedLayout", "column", "content_end", "last_line_is_open_block_scalar", "line_end_after",
    "line_start", "node_at",
]


class Patcher:
    def __init__(self, text: str, root: Node | None, style: Style) -> None:
        self.text = text
        self.root = root
        self.style = style
        self.nl = style.newline
        self.edits: list[TextEdit] = []
        self._order = 0
        self._comments = CommentPlan()
        self._eof_inserts: list[TextEdit] = []  # lines added after a last line with no line break

    def _edit(self, start: int, end: int, text: str, rank: int = 0) -> None:
        self._order += 1
        self.edits.append(TextEdit(start, end, text, self._order, rank))

    def _insert_lines(self, pos: int, lines: list[str], indent: int, sequence: bool = False) -> None:
        """Insert whole lines at `pos`. Several insertions at one offset go innermost first: deeper columns
        first, and at one column a sequence's items before its parent mapping's keys (`key:\n- item` puts
        both at the same column)."""
        body = self.nl.join(lines)
        rank = -(2 * indent + (1 if sequence else 0))
        if pos >= len(self.text) and not self.text.endswith("\n"):
            if last_line_is_open_block_scalar(self.root, self.text):
                raise UnsupportedLayout("the file ends inside a block scalar without a final newline; adding "
                                        "text after it would change the scalar's value", pos)
            self._edit(pos, pos, self.nl + body, rank)
            self._eof_inserts.append(self.edits[-1])
        else:
            self._edit(pos, pos, body + self.nl, rank)

    # -- grouping ----------------------------------------------------------------------------
    def apply(self, ops: list[Op]) -> list[TextEdit]:
        self._comments = plan_comments(self.text, self.root, ops)
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
        self._join_at_eof()
        return self.edits

    def _join_at_eof(self) -> None:
        """Lines added after a last line that has no line break start with one. When the lines before them
        are removed up to the end of the file (the removed key was the last), the text before the addition
        ends with a line break already: the first addition then starts without one (no blank line)."""
        if not self._eof_inserts:
            return
        size = len(self.text)
        cut = any(e.end == size and e.start < size and (e.start == 0 or self.text[e.start - 1] == "\n")
                  and (e.text == "" or e.text.endswith("\n")) for e in self.edits)
        if not cut:
            return
        first = min(self._eof_inserts, key=lambda e: (e.rank, e.order))
        i = self.edits.index(first)
        self.edits[i] = TextEdit(first.start, first.end, first.text[len(self.nl):], first.order, first.rank)

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
            start = min(self._comments.starts.get(id(op), line_start(text, k0.start)) for op in ops)
            kept = [line for op in ops for line in kept_lines(self._comments.kept.get(id(op), []), key_col)]
            self._edit(start, end, "".join(line + self.nl for line in kept) + " " * key_col + "{}" + self.nl)
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
                self._delete_lines(op, start, end, key_col)
            elif isinstance(op, ReplaceValue):
                lines = self._entry_lines(op, key_col)
                key_text = text[k.start : k.end]
                first = lines[0]
                lines[0] = " " * key_col + key_text + first[key_col + len(render.key(str(name), self.style)) :]
                self._edit(start, end, self.nl.join(self._keep_replaced(lines, start, end, key_col)) + self.nl)
        adds = [op for op in ops if isinstance(op, SetKey)]
        if adds:
            _lk, lv = node.items[-1]
            pos = line_end_after(text, content_end(lv, text))
            add_lines: list[str] = []
            for op in adds:
                add_lines.extend(self._entry_lines(op, key_col))
            self._insert_lines(pos, add_lines, key_col)

    # -- comments of what is removed (emit/carry.py) ------------------------------------------
    def _delete_lines(self, op: Op, start: int, end: int, col: int) -> None:
        """Remove whole lines; the comments on them go to a claim reference, or stay as comment lines."""
        kept = kept_lines(self._comments.kept.get(id(op), []), col)
        self._edit(self._comments.starts.get(id(op), start), end, "".join(line + self.nl for line in kept))

    def _entry_lines(self, op: SetKey | ReplaceValue, col: int) -> list[str]:
        """Lines of `key: value` at column `col`, with the comments carried to this claim reference."""
        name = str(op.path[-1])
        lines = render.block_entry(name, op.value, col, self.style)
        carried = self._comments.carried.get(id(op))
        if carried and isinstance(op.value, list) and op.value:
            dash = col + self.style.seq_offset
            items = [render.block_item(v, dash, self.style) for v in op.value]
            lines = lines[:1] + with_comments(items, dash, carried)
        return lines

    def _keep_replaced(self, lines: list[str], start: int, end: int, col: int, above: bool = True) -> list[str]:
        """A replaced entry's comments stay with it: the first line's end-of-line comment ends the new first
        line, the others become comment lines above the entry (below it, for a sequence item whose first
        line starts after its dash)."""
        found = comments_in(self.text, start, end, self._comments.opaque) if self._comments.opaque else []
        if not found:
            return lines
        first_eol = self.text.find("\n", start)
        first_eol = len(self.text) if first_eol < 0 else first_eol
        head = [c for c in found if not c.own_line and c.start < first_eol]
        rest = kept_lines([c for c in found if c not in head], col)
        if head:
            lines = [lines[0] + (head[0].gap or " ") + head[0].text, *lines[1:]]
        return rest + lines if above else lines + rest

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
                self._delete_lines(op, start, line_end_after(text, content_end(item, text)), dash_col)
            elif isinstance(op, ReplaceValue):
                idx = op.path[-1]
                assert isinstance(idx, int)
                item = node.items[idx]
                lines = render.block_item(op.value, dash_col, self.style)
                end = line_end_after(text, content_end(item, text))
                lines = self._keep_replaced(lines, item.start, end, dash_col, above=False)
                lines[0] = lines[0][dash_col + self.style.item_offset :]
                self._edit(item.start, end, self.nl.join(lines) + self.nl)
            elif isinstance(op, Append):
                pos = line_end_after(text, content_end(node.items[-1], text))
                items = [render.block_item(item, dash_col, self.style) for item in op.items]
                carried = self._comments.carried.get(id(op))
                if carried:
                    lines = with_comments(items, dash_col, carried)
                else:
                    lines = [line for item_lines in items for line in item_lines]
                self._insert_lines(pos, lines, dash_col, sequence=True)
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
        if "\n" in opening:
            return "," + opening
        return self.style.json_layout.item_sep if self.style.json else ", "

    def _flow_value(self, value: Any, at: int, parent: Mapping | Sequence) -> str:
        """A new value at offset `at` of the flow collection `parent`. JSON values are laid out over several
        lines when their parent is, else on one line (the file's separators either way)."""
        pretty = self.style.json and "\n" in self.text[parent.start : parent.end]
        line = self.text[line_start(self.text, at) : at]
        return render.flow(value, self.style, len(line) - len(line.lstrip(" ")), pretty=pretty)

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
                self._edit(v.start, v.end, self._flow_value(op.value, v.start, node))
        adds = [op for op in ops if isinstance(op, SetKey)]
        entry_col = spans[0][0] if spans else node.start + 1
        sep = self.style.json_layout.key_sep if self.style.json else ": "
        add_texts = [
            f"{render.key(str(op.path[-1]), self.style)}{sep}{self._flow_value(op.value, entry_col, node)}"
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
                self._edit(item.start, item.end, self._flow_value(op.value, item.start, node))
            elif isinstance(op, Append):
                at = spans[0][0] if spans else node.start + 1
                add_texts.extend(self._flow_value(v, at, node) for v in op.items)
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
                a, b = spans[0][0], spans[-1][1]
                self._edit(a, b, self._kept_in_flow(a, b) + sep.join(adds))
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
                a, b = spans[i][0], spans[j + 1][0]
            else:
                prev = max(k for k in kept if k < i)
                a, b = spans[prev][1], spans[j][1]
            self._edit(a, b, self._kept_in_flow(a, b))
            i = j + 1
        if adds:
            self._edit(spans[-1][1], spans[-1][1], "".join(sep + a for a in adds))


    def _kept_in_flow(self, start: int, end: int) -> str:
        return kept_in_flow(self.text, start, end, self._comments.opaque, self.nl)


def _deleted_indexes(ops: list[Op]) -> set[int]:
    return {int(op.path[-1]) for op in ops if isinstance(op, DeleteItem)}
