"""Compose positioned nodes from the C-accelerated YAML event stream.

We compose from events ourselves (instead of yaml.compose) to keep document boundaries, refuse duplicate
keys, bound alias expansion and never construct objects from tags.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

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


def compose_documents(text: str) -> list[Document]:
    """Parse `text` (BOM removed) into documents; raise ComposeError on any problem."""
    parser = None
    try:
        parser = _Loader(text)
        return _compose(parser.get_event)
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
    finally:
        if parser is not None:
            parser.dispose()


_ScalarEvent, _AliasEvent = yaml.ScalarEvent, yaml.AliasEvent
_MappingStart, _SequenceStart = yaml.MappingStartEvent, yaml.SequenceStartEvent
_MappingEnd, _SequenceEnd = yaml.MappingEndEvent, yaml.SequenceEndEvent
_DocumentStart, _DocumentEnd, _StreamEnd = yaml.DocumentStartEvent, yaml.DocumentEndEvent, yaml.StreamEndEvent
_MERGE_TAG = "tag:yaml.org,2002:merge"


def _compose(get_event: Callable[[], Any]) -> list[Document]:
    # Every parse of the run goes through this loop (each file twice: its read and the self-check), so it is
    # written for the interpreter: one event class test, the parent's state in locals, no call per node.
    docs: list[Document] = []
    doc: Document | None = None
    anchors: dict[str, Node] = {}
    # the open collections, outermost first: (node, its items, a mapping?, pending key, keys seen)
    stack: list[list[Any]] = []
    top: list[Any] | None = None  # stack[-1]
    node: Node
    while True:
        ev = get_event()
        cls = ev.__class__
        if cls is _ScalarEvent:
            sm = ev.start_mark
            tag = ev.tag if ev.tag is None else _own_tag(ev.tag, doc, sm)
            anchor = ev.anchor
            node = Scalar(ev.value, ev.style or "", tag, sm.index, ev.end_mark.index, sm.line, sm.column, anchor)
            if anchor:
                anchors[anchor] = node
        elif cls is _MappingEnd or cls is _SequenceEnd:
            assert top is not None
            top[0].end = ev.end_mark.index
            stack.pop()
            top = stack[-1] if stack else None
            continue
        elif cls is _MappingStart or cls is _SequenceStart:
            sm = ev.start_mark
            if len(stack) >= MAX_DEPTH:
                raise ComposeError("DRA109", f"nesting deeper than {MAX_DEPTH} levels", sm.line + 1, sm.column + 1)
            tag = ev.tag if ev.tag is None else _own_tag(ev.tag, doc, sm)
            anchor = ev.anchor
            items: list[Any] = []
            if cls is _MappingStart:
                node = Mapping(items, bool(ev.flow_style), tag, sm.index, -1, sm.line, sm.column, anchor)
            else:
                node = Sequence(items, bool(ev.flow_style), tag, sm.index, -1, sm.line, sm.column, anchor)
            if anchor:
                anchors[anchor] = node
            _attach(doc, top, node)
            top = [node, items, cls is _MappingStart, None, None]
            stack.append(top)
            continue
        elif cls is _AliasEvent:
            sm = ev.start_mark
            name = str(ev.anchor)  # an alias event always names its anchor
            target = anchors.get(name)
            if target is None:  # libyaml leaves undefined aliases to the composer
                raise ComposeError("DRA101", f"undefined alias {ev.anchor!r} (anchors do not carry across "
                                   "documents)", sm.line + 1, sm.column + 1)
            if any(f[0] is target for f in stack):
                raise ComposeError("DRA114", f"alias *{ev.anchor} refers to a node that contains it",
                                   sm.line + 1, sm.column + 1)
            assert doc is not None
            doc.aliases += 1
            doc.aliased.add(name)
            node = Alias(target, name, sm.index, ev.end_mark.index, sm.line, sm.column)
        elif cls is _DocumentStart:
            anchors = {}
            doc = Document(None, len(docs), ev.start_mark.index, -1, ev.end_mark.index, bool(ev.explicit), False, 0,
                           anchors)
            continue
        elif cls is _DocumentEnd:
            assert doc is not None
            doc.end = ev.end_mark.index
            doc.explicit_end = bool(ev.explicit)
            docs.append(doc)
            doc = None
            continue
        elif cls is _StreamEnd:
            return docs
        else:  # the stream's start
            continue
        # a scalar or an alias: its place in the open collection (the common case inline)
        if top is not None and not top[2]:
            top[1].append(node)
        else:
            _attach(doc, top, node)


def _own_tag(tag: str, doc: Document | None, mark: Any) -> str | None:
    """A node's explicit tag: None for the non-specific `!`; one outside the core schema is noted on the document."""
    if tag == "!":
        return None
    if tag not in CORE_TAGS:
        assert doc is not None
        doc.foreign_tags.append((tag, mark.index, mark.line, mark.column))
    return tag


def _attach(doc: Document | None, top: list[Any] | None, node: Node) -> None:
    """`node` into its parent: the document's root, a sequence's item, a mapping's key or value."""
    if top is None:
        assert doc is not None
        doc.root = node
        return
    if not top[2]:
        top[1].append(node)
        return
    key = top[3]
    if key is None:
        top[3] = node
        return
    top[3] = None
    if isinstance(key, Scalar) and key.tag != _MERGE_TAG and not (key.value == "<<" and key.style == ""):
        keys = top[4]
        if keys is None:
            keys = top[4] = {}
        first = keys.get(key.value)
        if first is not None:
            raise ComposeError("DRA104", f"duplicate key {key.value!r} (first at line {first.line + 1})",
                               key.line + 1, key.col + 1)
        keys[key.value] = key
    top[1].append((key, node))
