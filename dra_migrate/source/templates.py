"""Template text in a manifest file: which documents hold it, and the file with those documents masked out.

A document whose `{{ }}` text makes it something other than YAML (it does not parse, or parses only as a
flow-mapping key) is a template: only a renderer knows what it will be. When every template action in the file
is a plain substitution on one line, the `---` lines are the document boundaries the renderer will keep (a
marker at column 0 ends a YAML document wherever it is, block scalars included), so such a document can be left
byte-identical while the file's other documents are still migrated. Template control flow (`{{ if }}`,
`{{ range }}`, `{{ include }}`, `{%  %}`), trim markers (`{{-`) or an action spanning lines can add, drop or
join documents: then the boundaries are ambiguous and the caller refuses the whole file.

Masking replaces every character of a template document but its `---` and its line breaks by a space, so the
other documents keep their offsets, lines and columns, and the document keeps its index (as an empty one).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from dra_migrate.source.compose import ComposeError, compose_documents
from dra_migrate.source.nodes import Mapping, Node, Sequence

TEMPLATE_RE = re.compile(r"\{\{-?\s*[-.$a-zA-Z(/\"]|\{%")
_MARKER = re.compile(r"^(?:---|\.\.\.)(?=[ \t\r\n]|$)", re.M)
_ACTION = re.compile(r"\{\{(.*?)\}\}")
_CONTROL = re.compile(r"^(?:if|else|end|range|with|define|block|template|include|tpl|break|continue)\b")


@dataclass(frozen=True, slots=True)
class TemplateDocument:
    start: int  # offset of the document's text in the file (its `---` line, if any)
    end: int
    template_at: int  # offset of its first template text


def boundaries_unambiguous(text: str) -> bool:
    """Every template action is a one-line substitution: rendering keeps the file's `---` lines as they are."""
    for line in text.splitlines():
        if line.lstrip().startswith("#") or ("{{" not in line and "{%" not in line):
            continue
        if "{%" in line:
            return False
        for m in _ACTION.finditer(line):
            inner = m.group(1)
            if inner.startswith("-") or inner.endswith("-") or _CONTROL.match(inner.strip()):
                return False
        if "{{" in _ACTION.sub("", line):  # an action left open: it spans lines
            return False
    return True


def chunks(text: str) -> list[tuple[int, int]]:
    """[start, end) of each document's text: a `---` line starts one, a `...` line ends one."""
    cuts = [0]
    for m in _MARKER.finditer(text):
        if m.group(0) == "---":
            cuts.append(m.start())
        else:
            nl = text.find("\n", m.end())
            cuts.append(len(text) if nl < 0 else nl + 1)
    cuts.append(len(text))
    return [(a, b) for a, b in zip(cuts, cuts[1:], strict=False) if b > a]


def is_template(chunk: str) -> int | None:
    """Offset of the first template text in `chunk` when that text keeps it from being plain YAML."""
    m = TEMPLATE_RE.search(chunk)
    if m is None:
        return None
    try:
        docs = compose_documents(chunk)
    except ComposeError:
        return m.start()
    return m.start() if any(complex_key(d.root) is not None for d in docs) else None


def complex_key(node: Node | None) -> Node | None:
    """The first mapping key that is itself a mapping or sequence (`{{ x }}: ...`, `key: {{ x }}`), if any."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, Mapping):
            for k, _v in n.items:
                if isinstance(k, (Mapping, Sequence)):
                    return k
            stack.extend(v for _k, v in reversed(n.items))
        elif isinstance(n, Sequence):
            stack.extend(reversed(n.items))
    return None


def mask(text: str) -> tuple[str, list[TemplateDocument]]:
    """The text with its template documents blanked out, and those documents (none: nothing to mask)."""
    found: list[TemplateDocument] = []
    out = list(text)
    for start, end in chunks(text):
        at = is_template(text[start:end])
        if at is None:
            continue
        found.append(TemplateDocument(start, end, start + at))
        keep = 3 if text.startswith("---", start) else 0
        for i in range(start + keep, end):
            if out[i] not in "\r\n":
                out[i] = " "
        if keep == 0:  # no marker: a `~` keeps the document (a null one) where it was
            first = next((i for i in range(start, end) if out[i] == " "), None)
            if first is not None:
                out[first] = "~"
    return "".join(out), found
