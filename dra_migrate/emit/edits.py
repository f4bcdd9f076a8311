"""Text edits collected against the original text and applied in one pass."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class TextEdit:
    start: int
    end: int
    text: str
    order: int = 0  # tie-break for several insertions at one offset
    # insertions at one offset: lower rank first, so text for an inner (deeper) collection precedes text
    # for its ancestors, and new documents come last
    rank: int = 0


class OverlappingEdits(Exception):
    pass


def apply_edits(text: str, edits: list[TextEdit]) -> str:
    if not edits:
        return text
    # at one offset: insertions before a deletion/replacement that starts there
    ordered = sorted(edits, key=lambda e: (e.start, 0 if e.end == e.start else 1, e.rank, e.order))
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
