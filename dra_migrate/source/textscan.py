"""A line-level reading of YAML-like text that a parser cannot read (templates, patches kept as strings).

Scans that look for GPU resource names in raw text (Helm templates and values, kustomize patches) must see
only YAML code: a comment (`# nvidia.com/mig-1g.5gb: 1`) or the content of a block scalar (a ConfigMap's
script or notes) is never a request. `code_lines` yields each line with both blanked out, keeping columns.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

# a block scalar indicator ending a line's code: `key: |`, `key: >-`, `- |2`, `key: !tag |`
_BLOCK_START = re.compile(r"(?:^|[:-])\s+(?:!\S*\s+)?[|>][1-9+-]{0,2}$")
_DOC_MARKER = re.compile(r"^(?:---|\.\.\.)(?:\s|$)")


def strip_comment(line: str) -> str:
    """The line up to a comment (`#` at the start or after a blank, outside quotes), columns kept."""
    quote = ""
    i = 0
    while i < len(line):
        ch = line[i]
        if quote:
            if ch == "\\" and quote == '"':
                i += 1  # an escaped character
            elif ch == quote == "'" and line.startswith("''", i):
                i += 1  # '' is a quote inside a single-quoted scalar
            elif ch == quote:
                quote = ""
        elif ch in "'\"" and (i == 0 or line[i - 1] in " \t[{,:-"):
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1] in " \t"):
            return line[:i]
        i += 1
    return line


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _owner_indent(code: str) -> int:
    """Indentation of the node that owns a block scalar started on this line: the key (`  - key: |` → 4),
    or the sequence entry (`  - |` → 2)."""
    i = _indent(code)
    while code.startswith("- ", i):
        j = i + 2
        while j < len(code) and code[j] == " ":
            j += 1
        if code[j:].startswith(("|", ">", "!")):
            return i
        i = j
    return i


def code_lines(text: str) -> Iterator[tuple[int, str]]:
    """(1-based line number, code) of every line of `text` that holds YAML code (comments removed); the
    content lines of block scalars are skipped."""
    block_owner: int | None = None  # inside a block scalar: its owner's indentation
    for n, line in enumerate(text.splitlines(), start=1):
        if block_owner is not None:
            if not line.strip() or (_indent(line) > block_owner and not _DOC_MARKER.match(line)):
                continue
            block_owner = None
        code = strip_comment(line).rstrip()
        if not code.strip():
            continue
        if _BLOCK_START.search(" " + code.lstrip() if code.lstrip().startswith(("|", ">")) else code):
            block_owner = _owner_indent(code)
        yield n, code
