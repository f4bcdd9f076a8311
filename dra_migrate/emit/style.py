"""Detect a document's layout so inserted text looks like its neighbours: block indentation and sequence
style, how its strings and keys are quoted, and, for JSON, how it is laid out."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from dra_migrate.emit.scalars import RESERVED_WORDS, plain_candidate
from dra_migrate.source.nodes import Mapping, Node, Scalar, Sequence


@dataclass(frozen=True, slots=True)
class JsonLayout:
    indent: int = 2  # columns per nesting level of a multi-line object or array
    key_sep: str = ": "  # between a key and its value
    item_sep: str = ", "  # between the items of a one-line object or array
    inline_leaves: bool = False  # objects and arrays holding only scalars stay on one line in a pretty file
    pretty: bool = True  # the file spreads its objects over several lines
    final_newline: bool = True


@dataclass(frozen=True, slots=True)
class Style:
    indent: int = 2  # columns a nested block mapping is indented under its key
    seq_offset: int = 2  # columns a block sequence's dash is indented under its key (0 = "key:\n- a")
    item_offset: int = 2  # columns from a dash to the content of its item ("-   name: a" = 4)
    newline: str = "\n"
    json: bool = False  # flow collections use JSON syntax (quoted keys)
    quote: str = ""  # "" writes strings plain where that is safe; "'" or '"' quotes every string, as the file does
    quote_char: str = "'"  # the quote for a string that cannot be plain (when `quote` is "")
    key_quote: str = ""  # likewise for mapping keys
    json_layout: JsonLayout = field(default_factory=JsonLayout)


def detect_style(
    root: Node | None, newline: str, is_json: bool = False, fallback: Style | None = None, text: str = ""
) -> Style:
    indents: Counter[int] = Counter()
    offsets: Counter[int] = Counter()
    items: Counter[int] = Counter()
    values: list[Scalar] = []  # scalars in block collections: how the document quotes strings and keys
    keys: list[Scalar] = []
    flow_values: list[Scalar] = []  # the evidence when the document has no block scalars (all in flow syntax)
    flow_keys: list[Scalar] = []
    stack: list[Node] = [root] if root is not None else []
    while stack:
        node = stack.pop()
        # quoting is counted in block collections only: `args: ["--port", "80"]` is a JSON-like habit of
        # flow sequences, not the file's way with the block values new text goes into
        if isinstance(node, Mapping) and not node.flow:
            for k, v in node.items:
                if isinstance(k, Scalar):
                    keys.append(k)
                    if isinstance(v, Scalar):
                        values.append(v)
                        continue
                    if v.line > k.line:
                        if isinstance(v, Mapping) and not v.flow:
                            indents[v.col - k.col] += 1
                        elif isinstance(v, Sequence) and not v.flow:
                            offsets[v.col - k.col] += 1
                stack.append(v)
        elif is_json:
            continue  # JSON writes every string in JSON syntax: nothing to learn from its scalars
        elif isinstance(node, Mapping):
            for k, v in node.items:
                if isinstance(k, Scalar):
                    flow_keys.append(k)
                if isinstance(v, Scalar):
                    flow_values.append(v)
                else:
                    stack.append(v)
        elif isinstance(node, Sequence) and node.flow:
            for item in node.items:
                if isinstance(item, Scalar):
                    flow_values.append(item)
                else:
                    stack.append(item)
        elif isinstance(node, Sequence):
            for item in node.items:
                if isinstance(item, Scalar):
                    values.append(item)
                    continue
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
    layout = json_layout(text) if is_json and text else base.json_layout
    if is_json:
        indent = layout.indent
    quoting = _decide_quoting(values, keys, base)
    if quoting is None and not is_json:
        quoting = _decide_quoting(flow_values, flow_keys, base)
    quote, quote_char, key_quote = quoting or (base.quote, base.quote_char, base.key_quote)
    return Style(indent, offset, item_offset, newline, is_json, quote, quote_char, key_quote, layout)


_SAMPLE = 256  # scalars looked at per document for its quoting: enough for a majority, cheap on huge ones


def _decide_quoting(values: list[Scalar], keys: list[Scalar], base: Style) -> tuple[str, str, str] | None:
    """(quote, quote_char, key_quote) from how the document writes strings that could have been plain: a
    file that quotes them habitually (a Helm or JSON-minded style) gets quoted new strings; one that quotes
    only what must be quoted gets plain ones, with its usual quote character where quoting is needed.
    None without any evidence."""
    plain, needless, quoted = _tally(values[:_SAMPLE])
    key_plain, key_needless, _ = _tally(keys[:_SAMPLE])
    if not (plain or quoted or key_plain or key_needless):
        return None
    quote = _majority(needless) if sum(needless.values()) > plain else ""
    key_quote = _majority(key_needless) if sum(key_needless.values()) > key_plain else ""
    quote_char = _majority(quoted) if quoted else base.quote_char
    return quote, quote or quote_char, key_quote


def _tally(nodes: list[Scalar]) -> tuple[int, Counter[str], Counter[str]]:
    """(plain strings, quote → strings quoted that could be plain, quote → every quoted string)."""
    plain = 0
    needless: Counter[str] = Counter()
    quoted: Counter[str] = Counter()
    for node in nodes:
        if node.tag is not None:
            continue
        style, value = node.style, node.value
        if not style:
            # a plain scalar that reads as a string (not a number, boolean or null)
            if value[:1].isalpha() and value.lower() not in RESERVED_WORDS or plain_candidate(value):
                plain += 1
        elif style in ("'", '"'):
            quoted[style] += 1
            if plain_candidate(value):
                needless[style] += 1
    return plain, needless, quoted


def _majority(counts: Counter[str]) -> str:
    """The most used quote; single quotes on a tie (what the renderer writes without other evidence)."""
    return '"' if counts['"'] > counts["'"] else "'"


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


# JSON tokens that shape the layout; strings are matched whole so their content is never mistaken for syntax
_JSON_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|[{}\[\]:,\n]')
_LEAD = re.compile(r" *")


def json_layout(text: str) -> JsonLayout:
    """The layout of a JSON text: indentation width, separators, whether scalar-only objects stay on one
    line, and the final newline. Votes are counted over the whole text; without evidence, defaults hold."""
    indents: Counter[int] = Counter()
    key_seps: Counter[str] = Counter()
    item_seps: Counter[str] = Counter()
    leaves: Counter[bool] = Counter()  # one line? for non-empty objects/arrays with no nested collection
    # open collections: [line, offset, holds a nested collection]
    stack: list[list[int]] = []
    line = 0
    multiline = False
    for m in _JSON_TOKEN.finditer(text):
        tok = m.group()
        end = m.end()
        if tok == "\n":
            line += 1
        elif tok in "{[":
            if stack:
                stack[-1][2] = 1
            stack.append([line, m.start(), 0])
            nl = _next_is_newline(text, end)
            if nl is not None:
                ls = text.rfind("\n", 0, m.start()) + 1
                here = _lead(text, ls)
                nxt = _lead(text, nl)
                if nxt > here:
                    indents[nxt - here] += 1
        elif tok in "}]":
            if stack:
                open_line, start, nested = stack.pop()
                if line != open_line:
                    multiline = True
                if not nested and text[start + 1 : m.start()].strip():
                    leaves[line == open_line] += 1
        elif tok == ":":
            key_seps[": " if text[end : end + 1] in (" ", "\t") else ":"] += 1
        elif tok == "," and _next_is_newline(text, end) is None:
            item_seps[", " if text[end : end + 1] in (" ", "\t") else ","] += 1
    base = JsonLayout()
    key_sep = key_seps.most_common(1)[0][0] if key_seps else base.key_sep
    return JsonLayout(
        indent=indents.most_common(1)[0][0] if indents else base.indent,
        key_sep=key_sep,
        # without a one-line list to go by, a file that writes `"a":1` writes `1,2` too
        item_sep=item_seps.most_common(1)[0][0] if item_seps else ("," if key_sep == ":" else base.item_sep),
        inline_leaves=multiline and leaves[True] > leaves[False],
        pretty=multiline or not text.strip(),
        final_newline=text.endswith("\n") or not text,
    )


def _lead(text: str, pos: int) -> int:
    """Spaces at `pos`."""
    m = _LEAD.match(text, pos)
    return m.end() - pos if m else 0


def _next_is_newline(text: str, pos: int) -> int | None:
    """Offset of the line after `pos` when only spaces separate `pos` from the end of its line."""
    i = pos
    n = len(text)
    while i < n and text[i] in " \t\r":
        i += 1
    if i < n and text[i] == "\n":
        return i + 1
    return None
