"""Compose positioned nodes from the C-accelerated YAML event stream.

We compose from events ourselves (instead of yaml.compose) to keep document boundaries, refuse duplicate
keys, bound alias expansion and never construct objects from tags.
"""

from __future__ import annotations

from dataclasses import dataclass

import yaml

from dra_migrate.source.nodes import Alias, Document, Mapping, Node, Scalar, Sequence

try:  # the C parser is ~10x faster; fall back to pure Python where libyaml is missing
    _Loader: type = yaml.CSafeLoader
except AttributeError:  # pragma: no cover
    _Loader = yaml.SafeLoader

MAX_DEPTH = 200
# The YAML core schema (what the Kubernetes API reads), plus the merge key. Any other tag (`!Ref`,
# `!!python/object/apply:...`, `!!binary`, `!!timestamp`, `!!set`) means the text is meant for another processor,
# whose reading we do not know.
CORE_TAGS = frozenset(
    f"tag:yaml.org,2002:{t}" for t in ("str", "int", "float", "bool", "null", "map", "seq", "merge")
)
MAX_ALIAS_EXPANSION = 10_000


class ComposeError(Exception):
    def __init__(self, code: str, message: str, line: int = 0, col: int = 0) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.line = line  # 1-based
        self.col = col


@dataclass(slots=True)
class _Frame:
    node: Mapping | Sequence
    pending_key: Node | None = None
    keys: dict[str, Scalar] | None = None


def compose_documents(text: str) -> list[Document]:
    """Parse `text` (BOM removed) into documents; raise ComposeError on any problem."""
    try:
        events = yaml.parse(text, Loader=_Loader)
        return _compose(events)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 0
        col = mark.column + 1 if mark else 0
        problem = exc.problem or exc.context or "syntax error"
        if "nesting depth" in problem:  # libyaml's own bound on flow nesting fires before ours
            raise ComposeError("DRA109", f"document nesting is too deep ({problem})", line, col) from None
        raise ComposeError("DRA101", f"invalid YAML: {problem}", line, col) from None
    except yaml.YAMLError as exc:
        raise ComposeError("DRA101", f"invalid YAML: {exc}") from None
    except RecursionError:
        raise ComposeError("DRA109", "document nesting is too deep") from None


def _compose(events: object) -> list[Document]:
    docs: list[Document] = []
    stack: list[_Frame] = []
    doc: Document | None = None
    anchors: dict[str, Node] = {}

    def attach(node: Node) -> None:
        assert doc is not None
        if not stack:
            doc.root = node
            return
        frame = stack[-1]
        parent = frame.node
        if isinstance(parent, Sequence):
            parent.items.append(node)
            return
        if frame.pending_key is None:
            frame.pending_key = node
            return
        key = frame.pending_key
        frame.pending_key = None
        if isinstance(key, Scalar) and key.tag != "tag:yaml.org,2002:merge" and not (
            key.value == "<<" and key.style == ""
        ):
            if frame.keys is None:
                frame.keys = {}
            if key.value in frame.keys:
                raise ComposeError(
                    "DRA104",
                    f"duplicate key {key.value!r} (first at line {frame.keys[key.value].line + 1})",
                    key.line + 1,
                    key.col + 1,
                )
            frame.keys[key.value] = key
        parent.items.append((key, node))

    def foreign(tag: str, mark: yaml.Mark) -> None:
        assert doc is not None
        doc.foreign_tags.append((tag, mark.index, mark.line, mark.column))

    for ev in events:  # type: ignore[attr-defined]
        sm, em = ev.start_mark, ev.end_mark
        if isinstance(ev, yaml.ScalarEvent):
            style = ev.style or ""
            tag = ev.tag if ev.tag not in (None, "!") else None
            if tag is not None and tag not in CORE_TAGS:
                foreign(tag, sm)
            node: Node = Scalar(ev.value, style, tag, sm.index, em.index, sm.line, sm.column, ev.anchor)
            if ev.anchor:
                anchors[ev.anchor] = node
            attach(node)
        elif isinstance(ev, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            if len(stack) >= MAX_DEPTH:
                raise ComposeError("DRA109", f"nesting deeper than {MAX_DEPTH} levels", sm.line + 1, sm.column + 1)
            tag = ev.tag if ev.tag not in (None, "!") else None
            if tag is not None and tag not in CORE_TAGS:
                foreign(tag, sm)
            flow = bool(ev.flow_style)
            coll: Mapping | Sequence
            if isinstance(ev, yaml.MappingStartEvent):
                coll = Mapping([], flow, tag, sm.index, -1, sm.line, sm.column, ev.anchor)
            else:
                coll = Sequence([], flow, tag, sm.index, -1, sm.line, sm.column, ev.anchor)
            if ev.anchor:
                anchors[ev.anchor] = coll
            attach(coll)
            stack.append(_Frame(coll))
        elif isinstance(ev, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            frame = stack.pop()
            frame.node.end = em.index
        elif isinstance(ev, yaml.AliasEvent):
            anchor = str(ev.anchor)  # an alias event always names its anchor
            target = anchors.get(anchor)
            if target is None:  # libyaml leaves undefined aliases to the composer
                raise ComposeError("DRA101", f"undefined alias {ev.anchor!r} (anchors do not carry across "
                                   "documents)", sm.line + 1, sm.column + 1)
            if any(f.node is target for f in stack):
                raise ComposeError("DRA114", f"alias *{ev.anchor} refers to a node that contains it",
                                   sm.line + 1, sm.column + 1)
            assert doc is not None
            doc.aliases += 1
            doc.aliased.add(anchor)
            attach(Alias(target, anchor, sm.index, em.index, sm.line, sm.column))
        elif isinstance(ev, yaml.DocumentStartEvent):
            anchors = {}
            doc = Document(None, len(docs), sm.index, -1, em.index, bool(ev.explicit), False, 0, anchors)
        elif isinstance(ev, yaml.DocumentEndEvent):
            assert doc is not None
            doc.end = em.index
            doc.explicit_end = bool(ev.explicit)
            docs.append(doc)
            doc = None
    return docs
