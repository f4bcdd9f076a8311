"""Comments in the original text: found, so that no edit loses one.

The C parser reports no comments, so they are found in the text: a `#` at the start of a line or after a
space or tab starts a comment, unless it lies inside a quoted or block scalar (whose spans the parser does
report). A plain scalar cannot hold ` #`: that sequence ends it.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from dra_migrate.source.nodes import Mapping, Node, Scalar, Sequence


@dataclass(frozen=True, slots=True)
class Comment:
    start: int  # offset of the `#`
    text: str  # from `#` to the end of its line, trailing blanks removed
    own_line: bool  # only indentation before it
    gap: str  # the blanks between the line's content and the `#` (end-of-line comments)


class Opaque:
    """Where a `#` is scalar content: inside a quoted scalar, or below the header line of a block scalar.
    Looked up by descending the node tree by position (no walk of the whole document)."""

    __slots__ = ("roots", "text", "_starts")

    def __init__(self, roots: list[Node | None], text: str) -> None:
        self.roots = [r for r in roots if r is not None]
        self.text = text
        self._starts: dict[int, tuple[list[int], list[Node]]] = {}  # id(collection) → child starts, children

    def covers(self, pos: int) -> bool:
        node: Node | None = next((r for r in self.roots if r.start <= pos < r.end), None)
        while node is not None:
            if isinstance(node, Scalar):
                if node.style in ("'", '"'):
                    return node.start < pos < node.end
                if node.style in ("|", ">"):
                    # the header line (`key: |  # note`) may carry a comment; the content starts below it
                    nl = self.text.find("\n", node.start, node.end)
                    return 0 <= nl < pos < node.end
                return False
            if not isinstance(node, (Mapping, Sequence)):
                return False
            starts, children = self._children(node)
            i = bisect.bisect_right(starts, pos) - 1
            node = children[i] if i >= 0 and pos < children[i].end else None
        return False

    def _children(self, node: Mapping | Sequence) -> tuple[list[int], list[Node]]:
        got = self._starts.get(id(node))
        if got is None:
            children = [n for kv in node.items for n in kv] if isinstance(node, Mapping) else list(node.items)
            children.sort(key=lambda n: n.start)
            got = self._starts[id(node)] = ([n.start for n in children], children)
        return got


def comments_in(text: str, start: int, end: int, opaque: Opaque) -> list[Comment]:
    """Every comment that starts in text[start:end]."""
    out: list[Comment] = []
    i = text.find("#", start, end)
    while i >= 0:
        if (i == 0 or text[i - 1] in " \t\n") and not opaque.covers(i):
            eol = text.find("\n", i)
            eol = len(text) if eol < 0 else eol
            ls = text.rfind("\n", 0, i) + 1
            before = text[ls:i]
            content = before.rstrip(" \t")
            out.append(Comment(i, text[i:eol].rstrip(" \t\r"), not content, before[len(content) :]))
            i = text.find("#", eol, end)
        else:
            i = text.find("#", i + 1, end)
    return out


def all_comments(text: str, roots: list[Node | None]) -> list[str]:
    """The text of every comment in `text`."""
    if "#" not in text:
        return []
    return [c.text for c in comments_in(text, 0, len(text), Opaque(roots, text))]


def has_comment(text: str, comment: str, opaque: Opaque) -> bool:
    """Whether `comment` (from `#` to the end of its line) is a comment somewhere in `text`."""
    i = text.find(comment)
    while i >= 0:
        eol = text.find("\n", i)
        rest = text[i + len(comment) : len(text) if eol < 0 else eol]
        if (i == 0 or text[i - 1] in " \t\n") and not rest.strip() and not opaque.covers(i):
            return True
        i = text.find(comment, i + 1)
    return False


def comment_lines_above(text: str, line_start: int, col: int, opaque: Opaque) -> int:
    """Start of the run of whole-line comments directly above the line at `line_start` (no blank line
    between), indented at least to `col`: they describe that line, and go where it goes. `line_start`
    itself when there are none."""
    pos = line_start
    while pos > 0:
        prev = text.rfind("\n", 0, pos - 1) + 1
        line = text[prev : pos - 1].rstrip("\r")
        body = line.lstrip(" \t")
        if not body.startswith("#") or len(line) - len(body) < col or opaque.covers(prev + len(line) - len(body)):
            break
        pos = prev
    return pos
