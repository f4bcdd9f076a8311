"""Minimal text edits of kustomize files: keys removed from patches (files, or inline text inside a
kustomization), entries added to or removed from a kustomization's lists. Every edit goes through the core's
patcher and is checked by re-parsing: the result must be exactly the intended data."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from dra_migrate.emit.edits import OverlappingEdits, TextEdit, apply_edits
from dra_migrate.emit.patch import Patcher, UnsupportedLayout
from dra_migrate.emit.style import detect_style
from dra_migrate.plan import Append, DeleteItem, DeleteKey, DocPath, Op, SetKey, apply_ops, walk
from dra_migrate.source.compose import ComposeError, compose_documents
from dra_migrate.source.nodes import Scalar, find
from dra_migrate.source.plain import to_plain
from dra_migrate.source.reader import SourceError, parse_source


class EditError(Exception):
    pass


def deletion_ops(data: Any, paths: set[DocPath], json6902: bool) -> list[Op]:
    """Ops that delete `paths` from `data` and whatever that leaves empty: a map without keys, a list without
    elements, a JSON 6902 value without keys. The document itself, and a strategic-merge patch's
    apiVersion/kind/metadata, stay."""
    gone = _topmost(paths)
    changed = True
    while changed:
        changed = False
        for p in sorted(gone, key=len, reverse=True):
            parent = p[:-1]
            if not parent or any(parent[:i] in gone for i in range(1, len(parent) + 1)):
                continue
            node = walk(data, parent)
            if isinstance(node, dict):
                # an element left with only its merge key stays: a strategic merge puts the patch's elements
                # first, in its order, so removing it would reorder the containers
                left = [k for k in node if (*parent, k) not in gone]
                if not left:
                    gone.add(parent if not (json6902 and parent[-1] == "value") else parent[:-1])
                    changed = True
            elif isinstance(node, list) and all((*parent, i) in gone for i in range(len(node))):
                gone.add(parent)
                changed = True
        gone = _topmost(gone)
    gone.discard(())
    if not json6902:
        gone -= {("apiVersion",), ("kind",), ("metadata",)}
    ops: list[Op] = []
    for p in sorted(gone, key=lambda q: tuple(str(s) for s in q)):
        parent = walk(data, p[:-1])
        ops.append(DeleteKey(p) if isinstance(parent, dict) else DeleteItem(p))
    return ops


def _topmost(paths: set[DocPath]) -> set[DocPath]:
    return {p for p in paths if not any(p[:i] in paths for i in range(len(p)))}


@dataclass(slots=True)
class DocumentEdits:
    """What to change in one file: plan ops per document, and inline patch texts to rewrite."""

    ops: dict[int, list[Op]] = field(default_factory=dict)
    inline: dict[DocPath, str] = field(default_factory=dict)  # path of a block scalar in document 0 → new text


def edit_file(raw: bytes, display: str, edits: DocumentEdits) -> bytes | str:
    """The file's new bytes, or the reason the edit cannot be made safely."""
    try:
        src = parse_source(display, raw)
    except SourceError as exc:
        return exc.message
    expected = [to_plain(d.root) for d in src.documents]
    text_edits: list[TextEdit] = []
    for d, ops in sorted(edits.ops.items()):
        if d >= len(src.documents) or src.documents[d].root is None:
            return f"document {d + 1} is missing"
        root = src.documents[d].root
        style = detect_style(root, src.newline, src.is_json, None, src.text)
        try:
            text_edits.extend(Patcher(src.text, root, style).apply(ops))
        except UnsupportedLayout as exc:
            return exc.message
        expected[d] = apply_ops(expected[d], ops)
    for path, new_text in edits.inline.items():
        node, _alias = find(src.documents[0].root if src.documents else None, path)
        if not isinstance(node, Scalar):
            return f"{'.'.join(map(str, path))} is not a text"
        new_text = _chomped_like(node.value, new_text)
        splice = _block_scalar_splice(src.text, node, new_text)
        if isinstance(splice, str):
            return splice
        text_edits.append(splice)
        expected[0] = _set(expected[0], path, new_text)
    try:
        text = apply_edits(src.text, text_edits)
    except OverlappingEdits as exc:
        return str(exc)
    try:
        after = [to_plain(d.root) for d in compose_documents(text)]
    except ComposeError as exc:
        return f"self-check failed: the edited file does not parse ({exc.message})"
    if after != expected:
        return "self-check failed: the edit changed more than intended"
    return (("\ufeff" if src.bom else "") + text).encode("utf-8")


def _set(data: Any, path: DocPath, value: Any) -> Any:
    out = copy.deepcopy(data)
    walk(out, path[:-1])[path[-1]] = value
    return out


def _block_scalar_splice(text: str, node: Any, new_value: str) -> TextEdit | str:
    """Replace the content lines of a literal block scalar (`|`, `|-`, `|+`) so that its value becomes
    `new_value`: each line of the value at the block's indentation, the header line untouched. Only a layout
    that rebuilds the original value byte for byte is edited."""
    if node.style != "|":
        return "the inline patch is not a literal block (|): it is not edited"
    header_end = text.index("\n", node.start) + 1 if "\n" in text[node.start:] else len(text)
    body = text[header_end:node.end]
    lines = body.split("\n")
    indent = next((len(ln) - len(ln.lstrip(" ")) for ln in lines if ln.strip()), 0)
    if indent == 0:
        return "the inline patch has no indented content"
    old_value = node.value
    rebuilt = _indent(old_value, indent)
    if not body.startswith(rebuilt.rstrip("\n")):
        return "the inline patch's layout (indentation, blank lines) is not one that is edited"
    end = header_end + len(rebuilt.rstrip("\n"))
    return TextEdit(header_end, end, _indent(new_value, indent).rstrip("\n"))


def _chomped_like(old: str, new: str) -> str:
    """`new` ending in as many newlines as `old` (the block's chomping indicator decides them)."""
    trailing = len(old) - len(old.rstrip("\n"))
    return new.rstrip("\n") + "\n" * trailing


def _indent(value: str, indent: int) -> str:
    pad = " " * indent
    return "".join((pad + ln if ln.strip() else ln) for ln in value.splitlines(keepends=True))


def append_ops(data: dict[str, Any], additions: dict[str, list[Any]]) -> list[Op] | str:
    """Ops appending each list of `additions` to the kustomization's list of that name (created when absent),
    skipping entries already there."""
    out: list[Op] = []
    for key, entries in additions.items():
        current = data.get(key)
        if key in data and not isinstance(current, list):
            return f"`{key}` is not a list"
        new = [e for e in entries if not isinstance(current, list) or e not in current]
        if new:
            out.append(Append((key,), tuple(new)) if isinstance(current, list) else SetKey((key,), new))
    # appends first: at the end of the file, an item of an existing list must come before a new key
    return sorted(out, key=lambda op: not isinstance(op, Append))


def text_after(text: str, ops: dict[int, list[Op]]) -> str:
    """An inline patch's text with `ops` (by document) applied, through the patcher, as for a file."""
    result = edit_file(text.encode("utf-8"), "<inline patch>", DocumentEdits(dict(ops)))
    if isinstance(result, str):
        raise EditError(result)
    return result.decode("utf-8")
