"""Where the comments of removed lines go.

A removed line's comments move to the claim reference that now stands for what the line said, in the same
file whatever happens to the claim templates (same file, `--claims-out`, a JSON sibling):

- under a container's `resources` (`nvidia.com/gpu: 2  # tensor parallel = 2`, or a whole `limits:` map),
  to that container's new `resources.claims` entry;
- elsewhere in the pod spec (`nodeSelector` keys and node affinity terms that moved into CEL selectors), to
  the pod's new `resourceClaims` entry.

An end-of-line comment ends the reference's last line (the `request:` or `resourceClaimTemplateName:`
line); whole-line comments, and several different end-of-line comments, become comment lines above the
reference. The whole-line comments directly above a removed key (no blank line between) go with it.
Where no reference is written in block style (flow or JSON layouts, a container without its own
reference), the comments stay where they were: the key goes, its comment stays as a comment line.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from dra_migrate.emit.comments import Comment, Opaque, comment_lines_above, comments_in
from dra_migrate.emit.locate import UnsupportedLayout, content_end, line_end_after, line_start, node_at
from dra_migrate.ir import DocPath
from dra_migrate.plan import Append, DeleteItem, DeleteKey, Op, ReplaceValue, SetKey
from dra_migrate.source.nodes import Mapping, Node, Scalar, Sequence

# PodSpec fields that hold containers: what is removed below them belongs to one container
_CONTAINER_LISTS = frozenset({"containers", "initContainers", "ephemeralContainers"})


@dataclass(slots=True)
class CommentPlan:
    opaque: Opaque | None = None
    carried: dict[int, list[Comment]] = field(default_factory=dict)  # id(carrier op) → comments it takes
    starts: dict[int, int] = field(default_factory=dict)  # id(removal op) → start, with the comments above
    kept: dict[int, list[Comment]] = field(default_factory=dict)  # id(removal op) → comments left in place


def plan_comments(text: str, root: Node | None, ops: list[Op]) -> CommentPlan:
    if "#" not in text:
        return CommentPlan()
    plan = CommentPlan(Opaque([root], text))
    assert plan.opaque is not None
    containers: dict[DocPath, Op] = {}
    pods: dict[DocPath, Op] = {}
    for op in ops:
        if isinstance(op, (SetKey, ReplaceValue, Append)) and _block_reference(root, op):
            if op.path[-2:] == ("resources", "claims"):
                containers[op.path[:-2]] = op
            elif op.path[-1] == "resourceClaims":
                pods[op.path[:-1]] = op
    for op in ops:
        if not isinstance(op, (DeleteKey, DeleteItem)):
            continue
        span = _removed_span(text, root, op)
        if span is None:
            continue
        start, end, col = span
        above = comment_lines_above(text, start, col, plan.opaque)
        found = comments_in(text, above, end, plan.opaque)
        if not found:
            continue
        carrier = _carrier(op.path, containers, pods)
        if carrier is None:
            inside = [c for c in found if c.start >= start]
            if inside:
                plan.kept[id(op)] = inside
        else:
            plan.starts[id(op)] = above
            plan.carried.setdefault(id(carrier), []).extend(found)
    for comments in plan.carried.values():
        comments.sort(key=lambda c: c.start)
    return plan


def _block_reference(root: Node | None, op: SetKey | ReplaceValue | Append) -> bool:
    """Whether the op writes its new references as block sequence items (where comments can go)."""
    try:
        if isinstance(op, Append):
            seq = node_at(root, op.path)
            return isinstance(seq, Sequence) and not seq.flow
        parent = node_at(root, op.path[:-1])
    except UnsupportedLayout:
        return False
    return isinstance(parent, Mapping) and not parent.flow and isinstance(op.value, list) and bool(op.value)


def _carrier(path: DocPath, containers: dict[DocPath, Op], pods: dict[DocPath, Op]) -> Op | None:
    for cpath, op in containers.items():
        if path[: len(cpath) + 1] == (*cpath, "resources") and len(path) > len(cpath) + 1:
            return op
    best: tuple[int, Op] | None = None
    for ppath, op in pods.items():
        n = len(ppath)
        if path[:n] == ppath and len(path) > n and path[n] not in _CONTAINER_LISTS and (best is None or n > best[0]):
            best = (n, op)
    return best[1] if best else None


def _removed_span(text: str, root: Node | None, op: DeleteKey | DeleteItem) -> tuple[int, int, int] | None:
    """(line start, end, column) of the lines a block deletion removes, as the patcher removes them."""
    try:
        parent = node_at(root, op.path[:-1])
    except UnsupportedLayout:
        return None
    seg = op.path[-1]
    if isinstance(op, DeleteKey) and isinstance(parent, Mapping) and not parent.flow:
        for k, v in parent.items:
            if isinstance(k, Scalar) and k.value == seg:
                start = line_start(text, k.start)
                return start, line_end_after(text, content_end(v, text)), k.start - start
        return None
    if isinstance(op, DeleteItem) and isinstance(parent, Sequence) and not parent.flow and isinstance(seg, int):
        if seg >= len(parent.items):
            return None
        item = parent.items[seg]
        start = line_start(text, item.start)
        return start, line_end_after(text, content_end(item, text)), parent.col
    return None


def with_comments(items: list[list[str]], dash_col: int, carried: list[Comment]) -> list[str]:
    """The lines of new reference items with the comments carried to them (see the module docstring)."""
    texts = _unique(c.text for c in carried)
    eol = [c for c in carried if not c.own_line]
    eol_texts = _unique(c.text for c in eol)
    out = [list(lines) for lines in items]
    above = texts
    if len(eol_texts) == 1 and len(out) == 1:
        out[-1][-1] += (eol[0].gap or " ") + eol_texts[0]
        above = [t for t in texts if t != eol_texts[0]]
    return [" " * dash_col + t for t in above] + [line for lines in out for line in lines]


def kept_lines(comments: list[Comment], col: int) -> list[str]:
    """Comment lines that stay where a removed key was: whole-line ones as they were, end-of-line ones at
    the key's column."""
    return [c.gap + c.text if c.own_line else " " * col + c.text for c in comments]


def kept_in_flow(text: str, start: int, end: int, opaque: Opaque | None, nl: str) -> str:
    """What replaces text[start:end], removed from a flow collection, so that its comments stay: each
    comment on its own line at the indentation of what follows the removal (an end-of-line comment of
    the entry before it stays on that entry's line)."""
    found = comments_in(text, start, end, opaque) if opaque is not None else []
    if not found:
        return ""
    tail = text[text.rfind("\n", start, end) + 1 : end]
    indent = tail[: len(tail) - len(tail.lstrip(" \t"))]
    state = "mid" if text[line_start(text, start) : start].strip() else "indented"
    out: list[str] = []
    for c in found:
        if state == "mid":
            out.append((c.gap or " ") + c.text if not c.own_line else nl + indent + c.text)
        else:
            out.append(c.text if state == "indented" else indent + c.text)
        out.append(nl)
        state = "line start"
    return "".join(out) + indent


def _unique(texts: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(texts))
