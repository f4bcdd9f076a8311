"""Text edits collected against the original text and applied in one pass."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class TextEdit:
    start: int
    end: int
    text: str
    order: int = 0  # tie-break for several insertions at one offset


class OverlappingEdits(Exception):
    pass


def apply_edits(text: str, edits: list[TextEdit]) -> str:
    if not edits:
        return text
    ordered = sorted(edits, key=lambda e: (e.start, e.end > e.start, e.order))
    # deletions/replacements that start where an insertion sits must come after it: re-sort stably
    ordered = sorted(ordered, key=lambda e: (e.start, 0 if e.end == e.start else 1, e.order))
    out: list[str] = []
    pos = 0
    for e in ordered:
        if e.start < pos:
            raise OverlappingEdits(f"edits overlap at offset {e.start}")
        out.append(text[pos : e.start])
        out.append(e.text)
        pos = e.end
    out.append(text[pos:])
    return "".join(out)
