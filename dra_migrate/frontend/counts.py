"""GPU counts as the API server reads an extended-resource quantity: whole numbers only."""

from __future__ import annotations

import re

_INT = re.compile(r"^\+?[0-9]+$")


def parse_gpu_count(value: object) -> int | None:
    """The count, or None when it is not a whole non-negative number (fractions, placeholders, junk)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, float):
        return int(value) if value.is_integer() and value >= 0 else None
    if isinstance(value, str) and _INT.match(value.strip()):
        return int(value.strip())
    return None
