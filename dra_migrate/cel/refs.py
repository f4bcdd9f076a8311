"""The device attributes and capacities a selector reads, found by pattern (no CEL parser needed)."""

from __future__ import annotations

import re

_REF = re.compile(
    r"device\.(?P<what>attributes|capacity)\[\s*(?P<q>['\"])(?P<domain>[^'\"]+)(?P=q)\s*\]"
    r"(?:\.(?P<field>[A-Za-z_][A-Za-z0-9_]*)|\[\s*(?P<q2>['\"])(?P<key>[^'\"]+)(?P=q2)\s*\])"
)
_METHODS = {
    "compareTo",
    "isGreaterThan",
    "isLessThan",
    "matches",
    "lowerAscii",
    "upperAscii",
    "startsWith",
    "endsWith",
    "contains",
    "size",
    "isSet",
}


def referenced(expression: str) -> list[tuple[str, str, str]]:
    """(attributes|capacity, domain, name) read by a selector, in order of appearance, without duplicates."""
    out: list[tuple[str, str, str]] = []
    for m in _REF.finditer(expression):
        name = m.group("field") or m.group("key")
        if name in _METHODS:
            continue
        ref = (m.group("what"), m.group("domain"), name)
        if ref not in out:
            out.append(ref)
    return out
